"""A workflow parked on a person, over real HTTP: the API, the inbox, /run_sse, and a restarted worker."""

from __future__ import annotations

import asyncio
import signal
import uuid

import httpx
import pytest

from agentq.local_stack import LocalStack
from runtime.events import Event

APP = "wf_review"
BASE = f"/apps/{APP}/users/rita/sessions"

pytestmark = pytest.mark.timeout(240)


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    local = LocalStack(tmp_path_factory.mktemp("wf-http"), apps=["tests.worker.workflow_apps:review_app"])
    with local:
        yield local


def _http(stack) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=stack.base_url, timeout=30)


def _message(text: str) -> dict:
    return {"role": "user", "parts": [{"text": text}]}


async def _until(http, invocation_id: str, *statuses: str) -> dict:
    async with asyncio.timeout(60):
        while (record := (await http.get(f"/invocations/{invocation_id}")).json())["status"] not in statuses:
            await asyncio.sleep(0.05)
    return record


async def _outputs(http, session_id: str) -> list[tuple[str, object]]:
    session = (await http.get(f"{BASE}/{session_id}")).json()
    events = [Event.model_validate(e) for e in session["events"]]
    return [(e.node_info.path, e.output) for e in events if e.node_info is not None and e.node_info.output_for]


async def test_a_reviewer_answers_over_http_after_the_worker_that_parked_the_workflow_was_restarted(stack):
    async with _http(stack) as http:
        session_id = "s-" + uuid.uuid4().hex[:8]
        assert (await http.post(f"{BASE}/{session_id}")).status_code == 200
        response = await http.post(f"{BASE}/{session_id}/invocations", json={"newMessage": _message("memo")})
        assert response.status_code == 202, response.text
        invocation_id = response.json()["invocationId"]
        record = await _until(http, invocation_id, "parked")
        [pending] = record["pendingCalls"]
        assert (pending["id"], pending["name"], pending["kind"]) == ("review", "adk_request_input", "input")
        assert pending["args"]["message"] == "Approve the draft?"
        assert pending["args"]["payload"] == {"draft": "draft of memo"}
        inbox = (await http.get(f"/apps/{APP}/users/rita/invocations",
                                params={"status": "parked", "sessionId": session_id})).json()
        assert [(item["invocationId"], item["pendingCalls"][0]["id"]) for item in inbox["invocations"]] == [
            (invocation_id, "review")]

        # the worker that parked it goes away for good; a new one answers
        [old] = stack.workers
        LocalStack.stop_process(old, sig=signal.SIGKILL)
        stack.start_worker()

        answer = {"functionResponses": [{"id": "review", "name": "adk_request_input",
                                         "response": {"approved": True}}]}
        accepted = await http.post(f"/invocations/{invocation_id}/function-responses", json=answer)
        assert accepted.status_code == 202, accepted.text
        replayed = await http.post(f"/invocations/{invocation_id}/function-responses", json=answer)
        assert replayed.status_code == 409, replayed.text
        record = await _until(http, invocation_id, "completed", "failed")
        assert record["status"] == "completed", record
        assert await _outputs(http, session_id) == [
            ("wf_review@1/prepare@1", "draft of memo"),
            ("wf_review@1/decide@1", {"approved": True}),
            ("wf_review@1/release@1", "released"),
        ]


async def test_run_sse_starts_a_workflow_and_an_answer_through_run_sse_resumes_the_same_invocation(stack):
    async with _http(stack) as http:
        session_id = "s-" + uuid.uuid4().hex[:8]
        assert (await http.post(f"{BASE}/{session_id}")).status_code == 200
        first = await _run_sse(http, session_id, _message("plan"))
        asked = [e for e in first["events"] if e.long_running_tool_ids]
        assert [e.get_function_calls()[0].name for e in asked] == ["adk_request_input"]
        answer = {"role": "user", "parts": [{"functionResponse": {
            "id": "review", "name": "adk_request_input", "response": {"approved": False, "note": "tighter"}}}]}
        second = await _run_sse(http, session_id, answer)
        assert second["invocation_id"] == first["invocation_id"]
        assert [(e.node_info.path, e.output) for e in second["events"] if e.node_info and e.node_info.output_for] == [
            ("wf_review@1/decide@1", {"approved": False, "note": "tighter"}),
            ("wf_review@1/revise@1", "revise: tighter"),
        ]


async def _run_sse(http, session_id: str, message: dict) -> dict:
    body = {"appName": APP, "userId": "rita", "sessionId": session_id, "newMessage": message}
    async with http.stream("POST", "/run_sse", json=body) as response:
        assert response.status_code == 200
        invocation_id = response.headers["x-invocation-id"]
        raw = (await response.aread()).decode()
    events = [Event.model_validate_json(chunk[len("data: "):]) for chunk in raw.split("\n\n")
              if chunk.startswith("data: ")]
    return {"invocation_id": invocation_id, "events": events}
