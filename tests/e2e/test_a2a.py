"""An agentq app served over A2A (``agentq api --a2a``) to the a2a-sdk's own client, against real ``agentq api``
and ``agentq worker`` processes: a task is an invocation, ``input-required`` is a parked call, and the answer
resumes the same invocation; streaming, tasks/get on the stored task, tasks/cancel, and refusals."""

from __future__ import annotations

import asyncio
import uuid

import httpx
import pytest
from a2a.client import ClientConfig, create_client
from a2a.types import GetTaskRequest, Message, Part, Role, SendMessageRequest, TaskState

from agentq.local_stack import LocalStack

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    with LocalStack(tmp_path_factory.mktemp("a2a"), apps=["examples.reimbursement:app"],
                    extra_env={"AGENTQ_A2A_APPS": "reimbursement"}) as running:
        yield running


def _message(text: str, *, task_id: str = "", context_id: str = "") -> SendMessageRequest:
    return SendMessageRequest(message=Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER,
                                              parts=[Part(text=text)], task_id=task_id, context_id=context_id))


async def _client(stack, *, streaming: bool):
    return await create_client(f"{stack.base_url}/a2a/reimbursement",
                               client_config=ClientConfig(streaming=streaming),
                               relative_card_path=".well-known/agent-card.json")


async def _last_task(client, request):
    """The task as the last response of a send left it, and every state seen on the way."""
    states, task = [], None
    async for response in client.send_message(request):
        kind = response.WhichOneof("payload")
        if kind == "task":
            task = response.task
            states.append(task.status.state)
        elif kind == "status_update":
            states.append(response.status_update.status.state)
    return task, states


def test_the_agent_card_names_the_app_and_its_tools(stack):
    card = httpx.get(f"{stack.base_url}/a2a/reimbursement/.well-known/agent-card.json").json()
    assert card["name"] == "reimbursement"
    assert {skill["id"] for skill in card["skills"]} == {"reimburse", "ask_for_approval"}
    assert card["capabilities"]["streaming"] is True


def test_a_task_parks_on_input_required_and_the_answer_resumes_the_same_invocation(stack):
    async def scenario():
        client = await _client(stack, streaming=False)
        task, _ = await _last_task(client, _message("Reimburse 250 dollars for a conference ticket"))
        assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        invocation = httpx.get(f"{stack.base_url}/invocations/{task.id}").json()
        assert (invocation["status"], invocation["appName"]) == ("parked", "reimbursement")
        # the answer: a data part with the long-running tool's response
        answer = Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER, task_id=task.id,
                         context_id=task.context_id, parts=[Part(text="approved")])
        answer.parts.append(_data({"response": {"status": "approved"}}))
        done, _ = await _last_task(client, SendMessageRequest(message=answer))
        assert done.id == task.id
        assert done.status.state == TaskState.TASK_STATE_COMPLETED
        assert "Paid $250.00" in done.artifacts[0].parts[0].text
        record = httpx.get(f"{stack.base_url}/invocations/{task.id}").json()
        assert record["status"] == "completed"
        from worker.client import AgentqClient

        agentq = AgentqClient(stack.redis.url, reads_only=True)
        try:  # the audit names the caller who answered (auth off: the loopback principal), as over HTTP
            assert [(e.action, e.principal) for e in (await agentq.get(task.id)).audit] == [("answer", "loopback")]
        finally:
            await agentq.aclose()
        stored = await client.get_task(GetTaskRequest(id=task.id))
        assert stored.status.state == TaskState.TASK_STATE_COMPLETED

    asyncio.run(scenario())


def test_streaming_shows_the_task_working_then_waiting_for_input(stack):
    async def scenario():
        client = await _client(stack, streaming=True)
        task, states = await _last_task(client, _message("Reimburse 500 dollars for a flight"))
        assert TaskState.TASK_STATE_WORKING in states
        assert states[-1] == TaskState.TASK_STATE_INPUT_REQUIRED
        return task

    asyncio.run(scenario())


def test_a_cancelled_task_cancels_its_invocation(stack):
    async def scenario():
        client = await _client(stack, streaming=False)
        task, _ = await _last_task(client, _message("Reimburse 900 dollars for a laptop"))
        from a2a.types import CancelTaskRequest

        cancelled = await client.cancel_task(CancelTaskRequest(id=task.id))
        assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
        assert httpx.get(f"{stack.base_url}/invocations/{task.id}").json()["status"] == "cancelled"

    asyncio.run(scenario())


def _data(value: dict) -> Part:
    from google.protobuf import json_format, struct_pb2

    data = struct_pb2.Value()
    json_format.ParseDict(value, data)
    return Part(data=data)


def test_a_push_notification_url_to_a_private_address_is_refused_and_nothing_is_written(stack):
    from a2a.types import SendMessageConfiguration, TaskPushNotificationConfig

    async def scenario():
        client = await _client(stack, streaming=False)
        context_id = str(uuid.uuid4())
        request = _message("Reimburse 300 dollars for a hotel", context_id=context_id)
        # agentq's webhook guard refuses a private address (no SSRF relay) before anything is written
        request.configuration.CopyFrom(SendMessageConfiguration(
            task_push_notification_config=TaskPushNotificationConfig(url="http://10.0.0.7/hook")))
        with pytest.raises(Exception, match="10.0.0.7"):
            await _last_task(client, request)
        session = httpx.get(f"{stack.base_url}/apps/reimbursement/users/loopback/sessions/{context_id}")
        assert session.status_code == 404

    asyncio.run(scenario())
