"""ADK-compatible session and artifact routes over the in-memory services."""

from __future__ import annotations

from google.genai import types

from .conftest import make_client


async def test_list_apps_returns_the_served_app_names_sorted(open_app):
    async with make_client(open_app) as http:
        response = await http.get("/list-apps")
    assert (response.status_code, response.json()) == (200, ["reimbursement", "weather"])


async def test_created_session_can_be_read_listed_and_deleted(open_app):
    async with make_client(open_app) as http:
        created = await http.post(
            "/apps/weather/users/alice/sessions", json={"sessionId": "s1", "state": {"city": "Paris"}}
        )
        fetched = await http.get("/apps/weather/users/alice/sessions/s1")
        listed = await http.get("/apps/weather/users/alice/sessions")
        deleted = await http.delete("/apps/weather/users/alice/sessions/s1")
        after = await http.get("/apps/weather/users/alice/sessions/s1")
    assert created.status_code == 200
    body = fetched.json()
    assert (body["id"], body["appName"], body["userId"], body["state"], body["events"]) == (
        "s1", "weather", "alice", {"city": "Paris"}, []
    )
    assert [s["id"] for s in listed.json()] == ["s1"]
    assert deleted.status_code == 200
    assert (after.status_code, after.json()["error"]) == (404, "SessionNotFoundError")


async def test_create_with_id_takes_the_state_as_body_and_refuses_a_taken_id(open_app):
    async with make_client(open_app) as http:
        first = await http.post("/apps/weather/users/alice/sessions/s2", json={"n": 1})
        second = await http.post("/apps/weather/users/alice/sessions/s2", json={"n": 2})
    assert (first.status_code, first.json()["id"], first.json()["state"]) == (200, "s2", {"n": 1})
    assert (second.status_code, second.json()["error"]) == (409, "SessionExistsError")


async def test_create_session_without_a_body_gets_a_fresh_id(open_app):
    async with make_client(open_app) as http:
        response = await http.post("/apps/weather/users/alice/sessions")
    assert response.status_code == 200
    assert response.json()["id"] and response.json()["state"] == {}


async def test_unknown_app_is_a_404_naming_the_app(open_app):
    async with make_client(open_app) as http:
        response = await http.get("/apps/nope/users/alice/sessions")
    assert (response.status_code, response.json()) == (
        404, {"error": "AppNotFoundError", "detail": "app 'nope' is not served here"}
    )


async def test_artifacts_are_listed_and_read_by_version(open_app, memory_services):
    service = memory_services.artifact_service
    for text in ("v0", "v1"):
        await service.save_artifact(
            app_name="weather", user_id="alice", session_id="s1", filename="report.txt",
            artifact=types.Part(text=text),
        )
    base = "/apps/weather/users/alice/sessions/s1/artifacts"
    async with make_client(open_app) as http:
        names = await http.get(base)
        latest = await http.get(f"{base}/report.txt")
        first = await http.get(f"{base}/report.txt/versions/0")
        by_query = await http.get(f"{base}/report.txt", params={"version": 0})
        versions = await http.get(f"{base}/report.txt/versions")
        missing = await http.get(f"{base}/nothing.txt")
        deleted = await http.delete(f"{base}/report.txt")
        gone = await http.get(f"{base}/report.txt")
    assert names.json() == ["report.txt"]
    assert (latest.json(), first.json(), by_query.json()) == ({"text": "v1"}, {"text": "v0"}, {"text": "v0"})
    assert versions.json() == [0, 1]
    assert (missing.status_code, missing.json()["error"]) == (404, "ArtifactNotFoundError")
    assert deleted.status_code == 200
    assert gone.status_code == 404


async def test_queue_routes_answer_503_when_no_queue_is_configured(open_app):
    async with make_client(open_app) as http:
        response = await http.get("/invocations/e-123")
    assert (response.status_code, response.json()["error"]) == (503, "QueueUnavailableError")
