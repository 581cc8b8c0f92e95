"""The graph routes google-adk's dev UI draws a workflow from, over real HTTP against real processes.

The API is given no ``--app``: the graph comes from the description the worker wrote (``worker.fleet.app_catalog``),
and each node's state at an event from the invocation's committed events.
"""

from __future__ import annotations

import asyncio
import re
import uuid

import httpx
import pytest

from agentq.local_stack import LocalStack

APP = "wf_review"
BASE = f"/apps/{APP}/users/rita/sessions"

pytestmark = pytest.mark.timeout(240)


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    local = LocalStack(tmp_path_factory.mktemp("wf-graph"), apps=["tests.worker.workflow_apps:review_app"],
                       api_apps=[])
    with local:
        yield local


async def _until(http, invocation_id: str, *statuses: str) -> dict:
    async with asyncio.timeout(60):
        while (record := (await http.get(f"/invocations/{invocation_id}")).json())["status"] not in statuses:
            await asyncio.sleep(0.05)
    return record


async def _served(http) -> None:
    async with asyncio.timeout(60):
        while APP not in (await http.get("/list-apps")).json():
            await asyncio.sleep(0.1)


def _states(dot: str) -> dict[str, str]:
    """node name -> the state the DOT labels it with (``xlabel``)."""
    return dict(re.findall(r'^  "([^"]+)" \[label="[^"]*", .*xlabel="([a-z]+)"\];$', dot, re.MULTILINE))


async def _state_at_last_event(http, session_id: str) -> dict[str, str]:
    session = (await http.get(f"{BASE}/{session_id}")).json()
    last = session["events"][-1]["id"]
    graph = (await http.get(f"/dev/{BASE[1:]}/{session_id}/events/{last}/graph")).json()
    return _states(graph["dotSrc"])


async def test_the_dev_ui_gets_the_workflows_graph_and_each_nodes_state_at_an_event(stack):
    async with httpx.AsyncClient(base_url=stack.base_url, timeout=30) as http:
        await _served(http)
        images = (await http.get(f"/dev/apps/{APP}/build_graph_image")).json()
        session_id = "s-" + uuid.uuid4().hex[:8]
        assert (await http.post(f"{BASE}/{session_id}")).status_code == 200
        enqueued = await http.post(f"{BASE}/{session_id}/invocations", json={"newMessage": {
            "role": "user", "parts": [{"text": "memo"}]}})
        invocation_id = enqueued.json()["invocationId"]
        await _until(http, invocation_id, "parked")
        parked = await _state_at_last_event(http, session_id)
        answer = {"functionResponses": [{"id": "review", "name": "adk_request_input", "response": {"approved": True}}]}
        assert (await http.post(f"/invocations/{invocation_id}/function-responses", json=answer)).status_code == 202
        await _until(http, invocation_id, "completed")
        completed = await _state_at_last_event(http, session_id)
        unknown = (await http.get(f"/dev/{BASE[1:]}/{session_id}/events/no-such-event/graph")).json()

    assert list(images) == [""]
    dot = images[""]["dotSrc"]
    assert re.findall(r'^  ("[^"]+" -> "[^"]+".*);$', dot, re.MULTILINE) == [
        '"__START__" -> "prepare"', '"prepare" -> "review"', '"review" -> "decide"',
        '"decide" -> "release" [label="approved"]', '"decide" -> "revise" [label="changes"]']
    assert parked == {"prepare": "done", "review": "waiting"}
    assert completed == {"prepare": "done", "review": "done", "decide": "done", "release": "done"}
    assert unknown == {}
