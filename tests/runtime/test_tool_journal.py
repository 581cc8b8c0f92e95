"""The tool journal: completed calls are never run again; calls in doubt are re-run only when idempotent."""

from __future__ import annotations

from runtime.agents import LlmAgent
from runtime.models import ScriptedLlm, call
from runtime.runners import Runner
from runtime.sessions import InMemorySessionService
from runtime.tools import FunctionTool, InMemoryToolJournal, ToolCallRecord

from .helpers import USER, new_session, run, user_text

IN_DOUBT = (
    "The outcome of tool `pay` is unknown: a previous attempt started but did not finish (the worker running it "
    "stopped). It was not retried because it is not declared idempotent."
)


def make(journal, effects, idempotent=False):
    def pay(amount: int) -> dict:
        """Pay."""
        effects.append(amount)
        return {"paid": amount}

    agent = LlmAgent(name="a", model=ScriptedLlm(turns=[call("pay", amount=7), "done"]),
                     tools=[FunctionTool(pay, idempotent=idempotent)])
    return Runner(app_name="app", agent=agent, session_service=InMemorySessionService(), tool_journal=journal)


async def _call_event_only(runner):
    """Start an invocation and stop right after the call event is committed (before the tool runs)."""
    session = await new_session(runner)
    events = runner.run_async(user_id=USER, session_id=session.id, new_message=user_text("go"))
    first = await events.__anext__()
    await events.aclose()
    return session, first


async def test_each_call_is_recorded_started_then_completed_with_its_response():
    journal, effects = InMemoryToolJournal(), []
    runner = make(journal, effects)
    session = await new_session(runner)
    events = await run(runner, session, user_text("go"))
    call_id = events[0].get_function_calls()[0].id
    assert journal.records == {
        (events[0].invocation_id, call_id): ToolCallRecord(status="completed", response={"paid": 7})
    }


async def test_a_completed_call_is_answered_from_the_journal_without_running_the_tool():
    journal, effects = InMemoryToolJournal(), []
    runner = make(journal, effects)
    session, first = await _call_event_only(runner)
    call_id = first.get_function_calls()[0].id
    journal.records[(first.invocation_id, call_id)] = ToolCallRecord(status="completed", response={"paid": 99})
    rest = await run(runner, session, invocation_id=first.invocation_id)
    assert rest[0].get_function_responses()[0].response == {"paid": 99}
    assert effects == []


async def test_a_call_in_doubt_is_not_retried_for_a_non_idempotent_tool():
    journal, effects = InMemoryToolJournal(), []
    runner = make(journal, effects)
    session, first = await _call_event_only(runner)
    call_id = first.get_function_calls()[0].id
    journal.records[(first.invocation_id, call_id)] = ToolCallRecord(status="started")
    rest = await run(runner, session, invocation_id=first.invocation_id)
    assert rest[0].get_function_responses()[0].response == {"error": IN_DOUBT}
    assert effects == []
    assert [e.text() for e in rest[1:]] == ["done"]


async def test_a_call_in_doubt_is_retried_for_an_idempotent_tool():
    journal, effects = InMemoryToolJournal(), []
    runner = make(journal, effects, idempotent=True)
    session, first = await _call_event_only(runner)
    call_id = first.get_function_calls()[0].id
    journal.records[(first.invocation_id, call_id)] = ToolCallRecord(status="started")
    rest = await run(runner, session, invocation_id=first.invocation_id)
    assert rest[0].get_function_responses()[0].response == {"paid": 7}
    assert effects == [7]


async def test_the_in_memory_journal_returns_the_previous_record_from_begin():
    journal = InMemoryToolJournal()
    assert await journal.begin("e-1", "c-1", "pay") is None
    assert await journal.begin("e-1", "c-1", "pay") == ToolCallRecord(status="started")
    await journal.complete("e-1", "c-1", {"ok": True})
    assert await journal.begin("e-1", "c-1", "pay") == ToolCallRecord(status="completed", response={"ok": True})
    assert journal.records[("e-1", "c-1")] == ToolCallRecord(status="completed", response={"ok": True})
