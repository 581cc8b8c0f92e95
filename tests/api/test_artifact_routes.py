"""ADK's artifact routes over the Redis artifact service: save with metadata, names with ``/``, odd names."""

from __future__ import annotations

import base64

import pytest
from google.genai import types

from api import ApiSettings, create_app
from api.deps import Services
from runtime.sessions import InMemorySessionService

from .conftest import make_client

BASE = "/apps/weather/users/alice/sessions/s1/artifacts"
WHERE = {"app_name": "weather", "user_id": "alice", "session_id": "s1"}


@pytest.fixture
async def artifacts(redis_url):
    from runtime.artifacts import RedisArtifactService

    service = RedisArtifactService(redis_url)
    yield service
    await service.aclose()


@pytest.fixture
async def http(artifacts):
    services = Services(session_service=InMemorySessionService(), artifact_service=artifacts)
    app = create_app(ApiSettings(app_names=["weather"], max_body_bytes=100_000), services)
    async with make_client(app) as client:
        yield client


async def test_artifact_named_index_does_not_collide_with_the_artifact_index(http, artifacts):
    await artifacts.save_artifact(**WHERE, filename="index", artifact=types.Part(text="the index file"))
    await artifacts.save_artifact(**WHERE, filename="notes", artifact=types.Part(text="n"))

    loaded = await http.get(f"{BASE}/index")
    assert (loaded.status_code, loaded.json()) == (200, {"text": "the index file"})
    assert (await http.get(BASE)).json() == ["index", "notes"]

    assert (await http.delete(f"{BASE}/index")).status_code == 200
    assert (await http.get(BASE)).json() == ["notes"]  # the listing survives deleting the file "index"
    assert (await http.get(f"{BASE}/notes")).json() == {"text": "n"}


@pytest.mark.parametrize("path", [f"{BASE}/notes?version={2**64}", f"{BASE}/notes/versions/{2**64}",
                                  f"{BASE}/notes/versions/{2**64}/metadata"])
async def test_artifact_version_beyond_64_bits_is_not_found(http, artifacts, path):
    await artifacts.save_artifact(**WHERE, filename="notes", artifact=types.Part(text="n"))
    answer = await http.get(path)
    assert answer.status_code == 404, answer.text
    assert answer.json()["error"] == "ArtifactNotFoundError"


async def test_saved_artifact_answers_adk_metadata_and_names_may_contain_slashes(http):
    blob = {"inlineData": {"mimeType": "image/png", "data": base64.b64encode(b"\x89PNG").decode()}}
    saved = await http.post(BASE, json={"filename": "reports/q1/chart.png", "artifact": blob,
                                        "customMetadata": {"by": "test"}})
    assert saved.status_code == 200, saved.text
    first = saved.json()
    assert first.pop("createTime") > 0
    assert first == {"version": 0, "mimeType": "image/png", "customMetadata": {"by": "test"},
                     "canonicalUri": "agentq://apps/weather/users/alice/sessions/s1/artifacts/reports/q1/chart.png"
                                     "/versions/0"}
    await http.post(BASE, json={"filename": "reports/q1/chart.png", "artifact": {"text": "v1"}})

    assert (await http.get(BASE)).json() == ["reports/q1/chart.png"]
    assert (await http.get(f"{BASE}/reports/q1/chart.png")).json() == {"text": "v1"}
    assert (await http.get(f"{BASE}/reports/q1/chart.png/versions/0")).json() == blob
    assert (await http.get(f"{BASE}/reports/q1/chart.png/versions/latest")).json() == {"text": "v1"}
    assert (await http.get(f"{BASE}/reports/q1/chart.png/versions")).json() == [0, 1]
    listed = (await http.get(f"{BASE}/reports/q1/chart.png/versions/metadata")).json()
    assert [(m["version"], m.get("mimeType"), m["customMetadata"]) for m in listed] == [
        (0, "image/png", {"by": "test"}), (1, None, {})]
    one = (await http.get(f"{BASE}/reports/q1/chart.png/versions/1/metadata")).json()
    assert (one["version"], one["canonicalUri"].endswith("/versions/1")) == (1, True)
    assert (await http.delete(f"{BASE}/reports/q1/chart.png")).status_code == 200
    assert (await http.get(BASE)).json() == []
    missing = await http.get(f"{BASE}/reports/q1/chart.png/versions/latest/metadata")
    assert (missing.status_code, missing.json()["error"]) == (404, "ArtifactNotFoundError")


async def test_saving_an_artifact_with_a_bad_version_id_or_empty_name_is_refused(http):
    empty = await http.post(BASE, json={"filename": "", "artifact": {"text": "x"}})
    assert empty.status_code == 422
    bad = await http.get(f"{BASE}/notes/versions/first")
    assert (bad.status_code, bad.json()["error"]) == (400, "InvalidVersionError")
    assert (await http.get(BASE)).json() == []
