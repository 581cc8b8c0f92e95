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
NOT_SERVED = (f"app {APP!r} is not served here: no alive worker serves it (start one: agentq worker --app "
              f"MODULE:ATTR, for an App named {APP!r})")


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


async def _statuses(http: httpx.AsyncClient, invocation_id: str, after: str | None = None):
    headers = {"Last-Event-ID": after} if after else {}
    async with http.stream("GET", f"/invocations/{invocation_id}/events", headers=headers) as response:
        assert response.status_code == 200, await response.aread()
        frames = [frame async for frame in read_frames(response)]
    return [frame.data["status"] for frame in frames if frame.event == "status"], frames[-1].id


async def test_an_app_a_worker_announces_after_the_api_started_is_served_until_its_worker_stops(api_alone):
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

        async def unknown():
            response = await http.post(SESSION, json={"sessionId": "s-2"})
            return response if response.status_code == 404 else None

        after = await _until(unknown, "the app to be unknown once its worker stopped")
        read_after = await http.get(f"/invocations/{invocation_id}")

    assert (before.status_code, before.json()) == (404, {"error": "AppNotFoundError", "detail": NOT_SERVED})
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
    assert after.json() == {"error": "AppNotFoundError", "detail": NOT_SERVED}
    assert (read_after.status_code, read_after.json()) == (404, {"error": "AppNotFoundError", "detail": NOT_SERVED})
