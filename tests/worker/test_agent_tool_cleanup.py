"""AgentTool child sessions never outlive their parent: a child paused on a confirmation is deleted when the
parent invocation is cancelled or the parent session is deleted (a scan of Redis finds nothing of it), and a
child whose agent answered leaves no link behind.

The caller runs in-process on the worker's session service (what ``agentq worker`` gives its runners), under the
id of an enqueued invocation, as the executor runs it."""

from __future__ import annotations

import pytest
from google.genai import types

from runtime.agents import LlmAgent
from runtime.models import ScriptedLlm, call
from runtime.redis_store import keys
from runtime.runners import Runner
from runtime.tools import AgentTool, FunctionTool, InMemoryToolJournal
from worker.records.store import InvocationStore

APP, USER = "bank", "u"


class _NoBroker:
    def send_task(self, *args, **kwargs) -> None:
        pass


def transfer_money(amount: int, to: str) -> dict:
    """Send money."""
    return {"status": "sent", "amount": amount}


def _runner(store, *, guarded: bool) -> Runner:
    teller = LlmAgent(name="teller", model=ScriptedLlm(turns=[call("transfer_money", amount=500, to="bo"), "Sent."]),
                      tools=[FunctionTool(transfer_money, require_confirmation=guarded)])
    bank = LlmAgent(name="bank", model=ScriptedLlm(turns=[call("teller", request="send 500 to bo"), "Done."]),
                    tools=[AgentTool(agent=teller)])
    return Runner(app_name=APP, agent=bank, session_service=store.session_service, tool_journal=InMemoryToolJournal())


@pytest.fixture
async def store(redis_url):
    store = InvocationStore(redis_url, celery_app=_NoBroker())
    yield store
    await store.aclose()


async def _run(store, *, guarded: bool) -> tuple[str, str]:
    """The parent session and invocation, run once (its AgentTool's agent pauses when ``guarded``)."""
    session = await store.create_session(APP, USER)
    invocation_id = await store.enqueue(APP, USER, session.id, "send 500 to bo", None, None)
    message = types.Content(role="user", parts=[types.Part(text="send 500 to bo")])
    async for _ in _runner(store, guarded=guarded).run_async(user_id=USER, session_id=session.id,
                                                             new_message=message, invocation_id=invocation_id):
        pass
    return session.id, invocation_id


async def _traces(store, session_id: str) -> list[str]:
    """Every key naming the session, and every index that lists it."""
    found = [key async for key in store.redis.scan_iter(match=f"*{session_id}*", count=1000)]
    if await store.redis.sismember(keys.user_sessions(APP, USER), session_id):
        found.append(keys.user_sessions(APP, USER))
    if await store.redis.zscore(keys.user_session_ids(APP, USER), session_id) is not None:
        found.append(keys.user_session_ids(APP, USER))
    return found


async def _child(store, session_id: str, invocation_id: str) -> str:
    links = await store.redis.hgetall(keys.session_children(APP, USER, session_id))
    [(child, parent)] = links.items()
    assert parent == invocation_id
    assert await _traces(store, child)  # it is there before the parent goes
    return child


async def test_a_paused_child_session_is_deleted_when_its_parent_invocation_is_cancelled(store):
    session_id, invocation_id = await _run(store, guarded=True)
    child = await _child(store, session_id, invocation_id)
    await store.cancel(invocation_id, "changed my mind", actor={"principal": "key:ops", "client": None})
    assert await _traces(store, child) == []
    assert await store.redis.hgetall(keys.session_children(APP, USER, session_id)) == {}
    assert await store.session_service.get_session(app_name=APP, user_id=USER, session_id=session_id) is not None


async def test_a_paused_child_session_is_deleted_with_its_parent_session(store):
    session_id, invocation_id = await _run(store, guarded=True)
    child = await _child(store, session_id, invocation_id)
    assert await store.delete_session(APP, USER, session_id) == [invocation_id]
    assert await _traces(store, child) == []
    assert await _traces(store, session_id) == []
    assert [key async for key in store.redis.scan_iter(match="*:children", count=1000)] == []


async def test_a_child_whose_agent_answered_is_deleted_and_leaves_no_link(store):
    session_id, _ = await _run(store, guarded=False)
    assert await store.redis.hgetall(keys.session_children(APP, USER, session_id)) == {}
    listed = await store.session_service.list_sessions(app_name=APP, user_id=USER)
    assert [s.id for s in listed.sessions] == [session_id]
