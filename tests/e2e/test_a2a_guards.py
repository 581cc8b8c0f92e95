"""Every guard HTTP has, applied over A2A the same way, against real ``agentq api`` and ``agentq worker`` processes
and the a2a-sdk's own client: roles, the user scope, separation of duties (over A2A, and over HTTP on a task
started over A2A), and the audit trail's principal and client address. The app asks for a person's confirmation
before a transfer above $100 (examples.money_transfer); each A2A caller acts as its own user."""

from __future__ import annotations

import asyncio
import hashlib
import json
import uuid

import httpx
import pytest
from a2a.client import ClientConfig, create_client
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    TaskState,
)

from agentq.local_stack import LocalStack

pytestmark = pytest.mark.timeout(300)

SECRETS = {"alice": "a2a-alice-secret", "eve": "a2a-eve-secret", "reader": "a2a-reader-secret",
           "admin": "a2a-admin-secret"}
GRANTS = {"alice": {"users": ["alice"]}, "eve": {"users": ["eve"]},
          "reader": {"users": ["*"], "roles": ["read"]}, "admin": {"users": ["*"]}}
KEYS = {name: {"sha256": hashlib.sha256(SECRETS[name].encode()).hexdigest(), "apps": ["*"], **grant}
        for name, grant in GRANTS.items()}
"""Named keys: each is a principal with an identity, so separation of duties applies to it by default."""


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    with LocalStack(tmp_path_factory.mktemp("a2a-guards"), apps=["examples.money_transfer:app"],
                    api_keys_json=json.dumps(KEYS), extra_env={"AGENTQ_A2A_APPS": "transfers"}) as running:
        yield running


def _http(stack, who: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=stack.base_url, timeout=30,
                             headers={"Authorization": f"Bearer {SECRETS[who]}"})


async def _a2a(stack, who: str):
    return await create_client(f"{stack.base_url}/a2a/transfers",
                               client_config=ClientConfig(streaming=False, httpx_client=_http(stack, who)),
                               relative_card_path=".well-known/agent-card.json")


def _message(text: str, *, task_id: str = "", context_id: str = "") -> SendMessageRequest:
    return SendMessageRequest(message=Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER,
                                              parts=[Part(text=text)], task_id=task_id, context_id=context_id))


async def _send(client, request):
    """The task as the last response of a send left it."""
    task = None
    async for response in client.send_message(request):
        if response.WhichOneof("payload") == "task":
            task = response.task
    return task


async def _parked_transfer(stack, who: str = "alice"):
    """A task of ``who`` waiting for the confirmation of a $300 transfer."""
    task = await _send(await _a2a(stack, who), _message("Please send $300 to carol."))
    assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    return task


async def _record(stack, task_id: str) -> dict:
    async with _http(stack, "admin") as admin:
        return (await admin.get(f"/invocations/{task_id}")).json()


async def _stored(stack, task_id: str):
    """The invocation's record as the store holds it (who enqueued it, its audit trail)."""
    from worker.client import AgentqClient

    async with AgentqClient(stack.redis.url, reads_only=True) as agentq:
        return await agentq.get(task_id)


async def _audit(stack, task_id: str) -> list[tuple]:
    return [(entry.action, entry.principal, entry.client) for entry in (await _stored(stack, task_id)).audit]


async def _refused(call) -> str:
    with pytest.raises(Exception) as refusal:
        await call
    return str(refusal.value)


def test_a_read_only_key_is_refused_starting_a_task_and_nothing_is_written(stack):
    async def scenario():
        context_id = "ctx-" + uuid.uuid4().hex[:8]
        refusal = await _refused(_send(await _a2a(stack, "reader"), _message("Please send $300 to carol.",
                                                                            context_id=context_id)))
        assert "needs role 'enqueue'" in refusal and "'reader'" in refusal
        async with _http(stack, "admin") as admin:
            session = await admin.get(f"/apps/transfers/users/reader/sessions/{context_id}")
            assert session.status_code == 404
            listed = (await admin.get("/apps/transfers/users/reader/invocations")).json()
            assert listed["invocations"] == []

    asyncio.run(scenario())


def test_a_read_only_key_is_refused_answering_a_confirmation_and_nothing_is_written(stack):
    async def scenario():
        task = await _parked_transfer(stack)
        refusal = await _refused(_send(await _a2a(stack, "reader"), _message(
            "yes", task_id=task.id, context_id=task.context_id)))
        assert "needs role 'answer'" in refusal
        assert (await _record(stack, task.id))["status"] == "parked"
        assert await _audit(stack, task.id) == []

    asyncio.run(scenario())


def test_a_key_scoped_to_eve_cannot_get_answer_or_cancel_another_users_task(stack):
    async def scenario():
        task = await _parked_transfer(stack, "alice")
        eve = await _a2a(stack, "eve")
        assert "not found" in (await _refused(eve.get_task(GetTaskRequest(id=task.id)))).lower()
        answer = _message("yes", task_id=task.id, context_id=task.context_id)
        assert "not found" in (await _refused(_send(eve, answer))).lower()
        assert "not found" in (await _refused(eve.cancel_task(CancelTaskRequest(id=task.id)))).lower()
        assert (await _record(stack, task.id))["status"] == "parked"
        assert await _audit(stack, task.id) == []
        # the task is there for its own user
        mine = await (await _a2a(stack, "alice")).get_task(GetTaskRequest(id=task.id))
        assert mine.status.state == TaskState.TASK_STATE_INPUT_REQUIRED

    asyncio.run(scenario())


def test_the_requester_cannot_confirm_its_own_task_over_a2a_nor_over_http(stack):
    async def scenario():
        task = await _parked_transfer(stack, "alice")
        own = await _refused(_send(await _a2a(stack, "alice"), _message(
            "yes", task_id=task.id, context_id=task.context_id)))
        assert "separation_of_duties" in own
        [pending] = (await _record(stack, task.id))["pendingCalls"]
        async with _http(stack, "alice") as alice:
            answered = await alice.post(f"/invocations/{task.id}/function-responses", json={"functionResponses": [
                {"id": pending["id"], "name": pending["name"], "response": {"confirmed": True}}]})
        assert answered.status_code == 403 and "separation_of_duties" in answered.text
        record = await _stored(stack, task.id)
        assert (record.status, record.enqueued_by) == ("parked", "alice")  # the principal, not 'a2a:alice'
        assert await _audit(stack, task.id) == []

    asyncio.run(scenario())


def test_an_approvers_answer_over_a2a_is_audited_with_its_principal_and_client_address(stack):
    async def scenario():
        task = await _parked_transfer(stack, "alice")
        done = await _send(await _a2a(stack, "admin"), _message("yes", task_id=task.id,
                                                                context_id=task.context_id))
        assert done.status.state == TaskState.TASK_STATE_COMPLETED
        assert await _audit(stack, task.id) == [("answer", "admin", "127.0.0.1")]
        cancelled = await _parked_transfer(stack, "alice")
        await (await _a2a(stack, "admin")).cancel_task(CancelTaskRequest(id=cancelled.id))
        assert await _audit(stack, cancelled.id) == [("cancel", "admin", "127.0.0.1")]

    asyncio.run(scenario())


def test_refused_answers_leave_the_task_waiting_so_the_approver_can_still_answer_it(stack):
    """The SDK fails a task whose execution raises: a refusal must come before it, or the first refused
    answer (a reader's, eve's, the requester's own, a reply that is not yes or no) ends the task for good."""

    async def scenario():
        task = await _parked_transfer(stack, "alice")
        answer = _message("yes", task_id=task.id, context_id=task.context_id)
        assert "needs role 'answer'" in await _refused(_send(await _a2a(stack, "reader"), answer))
        assert "not found" in (await _refused(_send(await _a2a(stack, "eve"), answer))).lower()
        assert "separation_of_duties" in await _refused(_send(await _a2a(stack, "alice"), answer))
        assert "yes or no" in await _refused(_send(await _a2a(stack, "admin"), _message(
            "maybe", task_id=task.id, context_id=task.context_id)))
        still = await (await _a2a(stack, "alice")).get_task(GetTaskRequest(id=task.id))
        assert still.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        done = await _send(await _a2a(stack, "admin"), answer)
        assert done.status.state == TaskState.TASK_STATE_COMPLETED
        assert await _audit(stack, task.id) == [("answer", "admin", "127.0.0.1")]

    asyncio.run(scenario())


def test_a_refused_start_leaves_no_failed_task_behind(stack):
    async def scenario():
        context_id = "ctx-" + uuid.uuid4().hex[:8]
        await _refused(_send(await _a2a(stack, "reader"), _message("Please send $300 to carol.",
                                                                  context_id=context_id)))
        listed = await (await _a2a(stack, "admin")).list_tasks(ListTasksRequest(context_id=context_id))
        assert list(listed.tasks) == []

    asyncio.run(scenario())
