"""An ``agentq api`` started with no ``--app`` serves the apps the workers announce, as they come and go.

Real processes: redis-server, ``agentq api`` (no ``--app``: it never imports an app), then an ``agentq worker
--app examples.reimbursement:app`` started later. Nothing restarts the API.
"""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest

from agentq.local_stack import LocalStack
from api.streams.sse_client import read_frames

APP = "reimbursement"
SESSION = f"/apps/{APP}/users/alice/sessions"
OTHER = "payroll"


def not_served(app: str) -> str:
    return (f"app {app!r} is not served here: no worker has announced it (start one: agentq worker --app "
            f"MODULE:ATTR, for an App named {app!r})")


@pytest.fixture
def api_alone(tmp_path):
    """Redis and an API given no app; no worker yet (the test starts and stops it)."""
    local = LocalStack(tmp_path, apps=["examples.reimbursement:app"], workers=0, api_apps=[],
                       extra_env={"GOOGLE_API_KEY": "", "GEMINI_API_KEY": ""})
    with local:
        yield local


async def _until(check, what: str, timeout_s: float = 60.0):
    """Poll ``check`` (an async callable) until it returns something truthy; fail naming ``what``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        result = await check()
        if result:
            return result
        await asyncio.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


async def _workers_alive(local: LocalStack) -> list:
    from worker.client import AgentqClient  # noqa: PLC0415 (the test's own reader of the workers' beats)
    client = AgentqClient(local.redis.url)
    try:
        return await client.ops.alive_workers()
    finally:
        await client.aclose()


async def _statuses(http: httpx.AsyncClient, invocation_id: str, after: str | None = None):
    headers = {"Last-Event-ID": after} if after else {}
    async with http.stream("GET", f"/invocations/{invocation_id}/events", headers=headers) as response:
        assert response.status_code == 200, await response.aread()
        frames = [frame async for frame in read_frames(response)]
    return [frame.data["status"] for frame in frames if frame.event == "status"], frames[-1].id


async def test_an_app_a_worker_announces_after_the_api_started_stays_served_after_its_worker_stops(api_alone):
    async with httpx.AsyncClient(base_url=api_alone.base_url, timeout=30) as http:
        before = await http.post(SESSION, json={"sessionId": "s-1"})
        listed_before = (await http.get("/list-apps")).json()

        worker = api_alone.start_worker()

        async def listed():
            return APP in (await http.get("/list-apps")).json()

        await _until(listed, "the worker's app in /list-apps")
        info = (await http.get(f"/apps/{APP}/app-info")).json()
        assert (await http.post(SESSION, json={"sessionId": "s-1"})).status_code == 200
        enqueued = await http.post(f"{SESSION}/s-1/invocations", json={"newMessage": {
            "role": "user", "parts": [{"text": "Please reimburse $1200 for a conference trip."}]}})
        invocation_id = enqueued.json()["invocationId"]
        first, last_id = await _statuses(http, invocation_id)
        record = (await http.get(f"/invocations/{invocation_id}")).json()
        inbox = (await http.get("/inbox", params={"app": APP})).json()
        nodes = await http.get(f"/invocations/{invocation_id}/nodes")
        session_page = await http.get(f"/apps/{APP}/users/alice/invocations", params={"sessionId": "s-1"})
        call = record["pendingCalls"][0]
        answered = await http.post(f"/invocations/{invocation_id}/function-responses", json={"functionResponses": [
            {"id": call["id"], "name": call["name"], "response": {"status": "approved"}}]})
        second, _ = await _statuses(http, invocation_id, after=last_id)

        api_alone.stop_process(worker)

        async def no_worker_alive():
            return await http.get(f"/invocations/{invocation_id}") if not await _workers_alive(api_alone) else None

        read_after = await _until(no_worker_alive, "the worker to stop beating")
        # a deploy restarting every worker: the queue still takes the app's jobs, they wait for the next worker
        queued_after = await http.post(f"{SESSION}/s-1/invocations", json={"newMessage": {
            "role": "user", "parts": [{"text": "And $20 for the taxi."}]}})
        other = await http.post(f"/apps/{OTHER}/users/alice/sessions", json={"sessionId": "s-9"})

    assert (before.status_code, before.json()) == (404, {"error": "AppNotFoundError", "detail": not_served(APP)})
    assert listed_before == []
    assert (info["name"], info["rootAgentName"], sorted(info["agents"])) == (APP, "reimbursement_agent",
                                                                              ["reimbursement_agent"])
    assert enqueued.status_code == 202
    assert (first[-1], call["name"]) == ("parked", "ask_for_approval")
    assert [item["invocationId"] for item in inbox["invocations"]] == [invocation_id]
    assert (nodes.status_code, session_page.status_code) == (200, 200)
    assert [item["invocationId"] for item in session_page.json()["invocations"]] == [invocation_id]
    assert answered.status_code == 202
    assert second[-1] == "completed"
    assert (read_after.status_code, read_after.json()["status"]) == (200, "completed")
    assert queued_after.status_code == 202, queued_after.text
    assert (other.status_code, other.json()) == (404, {"error": "AppNotFoundError", "detail": not_served(OTHER)})
