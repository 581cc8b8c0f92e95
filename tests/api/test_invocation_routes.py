"""Queue routes over real Redis, with no worker running: enqueue, status, cancel, responses, inbox, SSE."""

from __future__ import annotations

import pytest

from api import ApiSettings, create_app
from api.access.auth import parse_keys
from api.services import redis_services

from .conftest import ALICE_KEY, BOB_KEY, KEYS, make_client

OPS_KEY = "ops-key-00003"

MESSAGE = {"role": "user", "parts": [{"text": "Reimburse $20 for lunch"}]}


@pytest.fixture
async def backed(redis_url):
    services = redis_services(redis_url)
    yield services
    await services.aclose()


@pytest.fixture
def queue_app(backed):
    keys = parse_keys({**KEYS, OPS_KEY: {"users": ["*"], "apps": ["*"]}})  # /metrics needs a key that reaches all
    settings = ApiSettings(app_names=["weather", "reimbursement"], keys=keys, max_body_bytes=100_000)
    return create_app(settings, backed.services, stats_provider=backed.stats_provider)


async def _enqueue(http, user="alice", session="s1") -> str:
    await http.post(f"/apps/weather/users/{user}/sessions", json={"sessionId": session})
    response = await http.post(
        f"/apps/weather/users/{user}/sessions/{session}/invocations", json={"newMessage": MESSAGE}
    )
    assert response.status_code == 202, response.text
    return response.json()["invocationId"]


async def test_enqueue_answers_202_with_the_id_and_where_to_follow_it(queue_app):
    async with make_client(queue_app, key=ALICE_KEY) as http:
        await http.post("/apps/weather/users/alice/sessions", json={"sessionId": "s1"})
        response = await http.post(
            "/apps/weather/users/alice/sessions/s1/invocations", json={"new_message": MESSAGE}
        )
        invocation_id = response.json()["invocationId"]
        status = await http.get(f"/invocations/{invocation_id}")
    assert (response.status_code, response.json()) == (
        202,
        {
            "invocationId": invocation_id,
            "status": "queued",
            "eventsUrl": f"/invocations/{invocation_id}/events",
            "statusUrl": f"/invocations/{invocation_id}",
        },
    )
    body = status.json()
    assert {k: body[k] for k in ("invocationId", "appName", "userId", "sessionId", "status", "pendingCalls")} == {
        "invocationId": invocation_id,
        "appName": "weather",
        "userId": "alice",
        "sessionId": "s1",
        "status": "queued",
        "pendingCalls": [],
    }


async def test_enqueue_to_a_missing_session_is_a_404(queue_app):
    async with make_client(queue_app, key=ALICE_KEY) as http:
        response = await http.post("/apps/weather/users/alice/sessions/nope/invocations", json={"newMessage": MESSAGE})
    assert (response.status_code, response.json()["error"]) == (404, "SessionNotFoundError")


async def test_an_empty_message_is_a_400_naming_the_problem(queue_app):
    async with make_client(queue_app, key=ALICE_KEY) as http:
        await http.post("/apps/weather/users/alice/sessions", json={"sessionId": "s1"})
        response = await http.post(
            "/apps/weather/users/alice/sessions/s1/invocations", json={"newMessage": {"role": "user", "parts": []}}
        )
    assert (response.status_code, response.json()["error"]) == (400, "InvalidMessageError")


async def test_another_users_invocation_is_a_404_on_every_route(queue_app):
    async with make_client(queue_app, key=ALICE_KEY) as alice:
        invocation_id = await _enqueue(alice)
    async with make_client(queue_app, key=BOB_KEY) as bob:
        answers = [
            await bob.get(f"/invocations/{invocation_id}"),
            await bob.get(f"/invocations/{invocation_id}/events"),
            await bob.post(f"/invocations/{invocation_id}/cancel"),
            await bob.post(
                f"/invocations/{invocation_id}/function-responses",
                json={"functionResponses": [{"id": "c1", "name": "f", "response": {}}]},
            ),
            await bob.get("/apps/weather/users/alice/invocations"),
            await bob.get("/apps/weather/users/alice/sessions/s1/events"),
        ]
    assert [a.status_code for a in answers] == [404] * 6
    assert answers[0].json() == {"error": "InvocationNotFoundError", "detail": f"invocation {invocation_id!r} not found"}


async def test_an_unknown_invocation_is_a_404_naming_it(queue_app):
    async with make_client(queue_app, key=ALICE_KEY) as http:
        response = await http.get("/invocations/e-nope")
    assert (response.status_code, response.json()) == (
        404, {"error": "InvocationNotFoundError", "detail": "invocation 'e-nope' not found"}
    )


async def test_cancelled_invocation_streams_its_status_frame_and_ends(queue_app):
    async with make_client(queue_app, key=ALICE_KEY) as http:
        invocation_id = await _enqueue(http)
        cancelled = await http.post(f"/invocations/{invocation_id}/cancel", json={"reason": "changed my mind"})
        again = await http.post(f"/invocations/{invocation_id}/cancel")
        stream = await http.get(f"/invocations/{invocation_id}/events")
    assert (cancelled.status_code, cancelled.json()["status"], cancelled.json()["cancelReason"]) == (
        200, "cancelled", "changed my mind"
    )
    assert (again.status_code, again.json()["error"]) == (409, "InvalidTransitionError")
    assert stream.headers["content-type"].startswith("text/event-stream")
    frames = [f for f in stream.text.split("\n\n") if f.strip()]
    last = frames[-1].splitlines()
    assert last[0].startswith("id: ") and last[1] == "event: status"
    assert '"status":"cancelled"' in last[2]


async def test_a_response_to_a_call_that_is_not_pending_is_a_409(queue_app):
    async with make_client(queue_app, key=ALICE_KEY) as http:
        invocation_id = await _enqueue(http)
        response = await http.post(
            f"/invocations/{invocation_id}/function-responses",
            json={"functionResponses": [{"id": "c1", "name": "ask_for_approval", "response": {"ok": True}}]},
        )
    assert (response.status_code, response.json()) == (
        409,
        {
            "error": "CallNotPendingError",
            "detail": f"function call 'c1' is not pending on invocation {invocation_id!r} "
            "(never issued as a long-running call, or already answered): it is queued and waits for no answer; "
            "answers are taken once it parks",
        },
    )


async def test_a_malformed_last_event_id_is_a_400(queue_app):
    async with make_client(queue_app, key=ALICE_KEY) as http:
        invocation_id = await _enqueue(http)
        response = await http.get(f"/invocations/{invocation_id}/events", headers={"Last-Event-ID": "garbage"})
    assert (response.status_code, response.json()["error"]) == (400, "InvalidLastEventIdError")


async def test_the_inbox_lists_a_users_invocations_by_status(queue_app):
    async with make_client(queue_app, key=ALICE_KEY) as http:
        first = await _enqueue(http, session="s1")
        second = await _enqueue(http, session="s2")
        await http.post(f"/invocations/{first}/cancel")
        queued = await http.get("/apps/weather/users/alice/invocations", params={"status": "queued"})
        everything = await http.get("/apps/weather/users/alice/invocations")
        bad = await http.get("/apps/weather/users/alice/invocations", params={"status": "nonsense"})
    assert [i["invocationId"] for i in queued.json()["invocations"]] == [second]
    assert sorted(i["invocationId"] for i in everything.json()["invocations"]) == sorted([first, second])
    assert bad.status_code == 422


async def test_metrics_report_invocations_by_status_and_queue_depth(queue_app):
    async with make_client(queue_app, key=ALICE_KEY) as http:
        first = await _enqueue(http, session="s1")
        await _enqueue(http, session="s2")
        await http.post(f"/invocations/{first}/cancel")
        text = (await http.get("/metrics", headers={"Authorization": f"Bearer {OPS_KEY}"})).text
    assert 'agentq_invocations{status="queued"} 1.0' in text
    assert 'agentq_invocations{status="cancelled"} 1.0' in text
    assert 'agentq_queue_depth{queue="agentq"}' in text


async def test_a_session_created_with_seed_events_on_redis_returns_them(queue_app):
    seed = {"author": "user", "invocationId": "e-seed", "id": "ev1", "timestamp": 1.0,
            "content": {"role": "user", "parts": [{"text": "earlier"}]}, "actions": {"stateDelta": {"k": 1}}}
    async with make_client(queue_app, key=ALICE_KEY) as http:
        created = await http.post("/apps/weather/users/alice/sessions", json={"sessionId": "seeded", "events": [seed]})
        fetched = await http.get("/apps/weather/users/alice/sessions/seeded")
    assert created.status_code == 200, created.text
    body = fetched.json()
    assert ([e["id"] for e in body["events"]], body["state"]) == (["ev1"], {"k": 1})
