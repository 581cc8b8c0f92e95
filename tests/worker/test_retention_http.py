"""Deadlines and session deletion over HTTP, with real ``agentq worker`` processes behind an in-process API."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from api import ApiSettings, create_app
from api.services import redis_services
from api.streams.sse_client import read_frames
from runtime.redis_store import keys, streams

MESSAGE = {"role": "user", "parts": [{"text": "Please pay 100"}]}


@pytest.fixture
async def http(worker_redis, workers, monkeypatch):
    monkeypatch.setenv("AGENTQ_REDIS_URL", worker_redis.url)  # for the test apps' side-effect counters
    backed = redis_services(worker_redis.url)
    app = create_app(ApiSettings(app_names=["approval"]), backed.services)
    transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 40000))
    async with httpx.AsyncClient(transport=transport, base_url="http://agentq.test", timeout=30) as client:
        client.store = backed.client._store
        yield client
    await backed.aclose()


async def _parked(http, user: str, **extra) -> tuple[str, str]:
    session = (await http.post(f"/apps/approval/users/{user}/sessions", json={})).json()["id"]
    response = await http.post(f"/apps/approval/users/{user}/sessions/{session}/invocations",
                               json={"newMessage": MESSAGE, **extra})
    assert response.status_code == 202, response.text
    invocation_id = response.json()["invocationId"]
    record = await http.store.get(invocation_id)
    async with asyncio.timeout(30):
        while record.status != "parked":
            record = await _wait(http, invocation_id)
    return session, invocation_id


async def _wait(http, invocation_id: str):
    from worker.records.follow import wait

    return await wait(http.store, invocation_id, timeout=30)


async def test_a_deadline_given_over_http_expires_into_a_status_event(http, user):
    session, invocation_id = await _parked(http, user, parkTimeout=0.5)
    body = (await http.get(f"/invocations/{invocation_id}")).json()
    [pending] = body["pendingCalls"]
    assert pending["deadline"] - body["updatedAt"] == pytest.approx(0.5, abs=0.2)
    async with asyncio.timeout(30):  # a reaper answers the call once its deadline passes; then it completes
        while (record := await _wait(http, invocation_id)).status != "completed":
            await asyncio.sleep(0.05)
    entries = await streams.read_stream(http.store.redis, "approval", user, session, count=1000)
    statuses = [e.data for e in entries if e.kind == "status"]
    assert [s["status"] for s in statuses] == ["queued", "running", "parked", "queued", "running", "completed"]
    assert statuses[3] == {"status": "queued", "detail": {"resumed": True, "expired": [pending["id"]]}}
    assert record.pending_calls == []
    inbox = (await http.get(f"/apps/approval/users/{user}/invocations", params={"status": "parked"})).json()
    assert inbox == {"invocations": [], "nextPageToken": None}


async def test_a_deadline_over_http_must_be_positive(http, user):
    await http.post(f"/apps/approval/users/{user}/sessions", json={"sessionId": "s"})
    response = await http.post(f"/apps/approval/users/{user}/sessions/s/invocations",
                               json={"newMessage": MESSAGE, "parkTimeout": 0})
    assert (response.status_code, response.json()["detail"]) == (
        422, "body.parkTimeout: Input should be greater than 0")


async def test_deleting_a_session_over_http_cancels_its_parked_invocation_and_leaves_no_key_of_it(http, user):
    session, invocation_id = await _parked(http, user)
    inbox = (await http.get(f"/apps/approval/users/{user}/invocations", params={"status": "parked"})).json()
    assert [item["invocationId"] for item in inbox["invocations"]] == [invocation_id]

    assert (await http.delete(f"/apps/approval/users/{user}/sessions/{session}")).status_code == 200

    body = (await http.get(f"/invocations/{invocation_id}")).json()
    assert {k: body[k] for k in ("status", "cancelReason", "pendingCalls", "error")} == {
        "status": "cancelled", "cancelReason": f"session {session!r} was deleted", "pendingCalls": [],
        "error": {"type": "InvocationCancelledError", "message": f"session {session!r} was deleted"}}
    inbox = (await http.get(f"/apps/approval/users/{user}/invocations", params={"status": "parked"})).json()
    assert inbox == {"invocations": [], "nextPageToken": None}
    async with http.stream("GET", f"/invocations/{invocation_id}/events") as response:
        frames = [frame async for frame in read_frames(response)]
    assert [(frame.event, frame.data) for frame in frames] == [
        ("status", {"status": "cancelled", "detail": {"reason": f"session {session!r} was deleted"},
                    "invocationId": invocation_id})]
    session_keys = [key async for key in http.store.redis.scan_iter(match=f"*:s:{session}*", count=1000)]
    assert session_keys == []
    assert (await http.get(f"/apps/approval/users/{user}/sessions/{session}")).status_code == 404
    assert await http.store.redis.sismember(keys.user_sessions("approval", user), session) == 0
