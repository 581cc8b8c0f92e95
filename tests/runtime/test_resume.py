"""Resumption: a run stopped after any committed event continues under the same invocation id, with the
same history and the same tool side effects as a run that was never stopped."""

from __future__ import annotations

import pytest

from runtime.agents import LlmAgent, LoopAgent, ParallelAgent, SequentialAgent
from runtime.models import ScriptedLlm, call
from runtime.runners import InMemoryRunner
from runtime.tools import LongRunningFunctionTool
from runtime.tools.tool_journal import InMemoryToolJournal

from .helpers import USER, function_response, new_session, run, stored, user_text


def shape(events):
    """Everything but random ids and timestamps."""
    out = []
    for event in events:
        parts = []
        for part in event.content.parts if event.content else []:
            if part.text is not None:
                parts.append(part.text)
            elif part.function_call:
                parts.append(("call", part.function_call.name, part.function_call.args))
            elif part.function_response:
                parts.append(("response", part.function_response.name, part.function_response.response))
        out.append((event.author, event.branch, parts, event.actions.state_delta, event.actions.agent_state,
                    event.actions.end_of_agent, event.actions.escalate))
    return out


class Scenario:
    """A runner factory whose tools count their side effects."""

    def __init__(self, build, resumable=True):
        """``resumable="durable"``: as agentq's workers run an app that is not ADK-resumable (a tool journal)."""
        self.effects: list[str] = []
        if resumable == "durable":
            self.runner = InMemoryRunner(agent=build(self), app_name="app", tool_journal=InMemoryToolJournal())
        else:
            self.runner = InMemoryRunner(agent=build(self), app_name="app", resumable=resumable)

    def tool(self, label):
        def charge(amount: int) -> dict:
            """Charge an amount."""
            self.effects.append(f"{label}:{amount}")
            return {"charged": amount}

        charge.__name__ = f"charge_{label}"
        return charge


def single(s: Scenario):
    return LlmAgent(name="a", model=ScriptedLlm(turns=[call("charge_a", amount=5), "Charged 5."]),
                    tools=[s.tool("a")], output_key="out")


def sequence(s: Scenario):
    return SequentialAgent(name="seq", sub_agents=[
        LlmAgent(name="first", model=ScriptedLlm(turns=[call("charge_1", amount=1), "first done"]),
                 tools=[s.tool("1")]),
        LlmAgent(name="second", model=ScriptedLlm(turns=[call("charge_2", amount=2), "second done"]),
                 tools=[s.tool("2")]),
    ])


def loop(s: Scenario):
    return LoopAgent(name="loop", max_iterations=2, sub_agents=[
        LlmAgent(name="body", model=ScriptedLlm(responder=lambda r: call("charge_b", amount=3)
                                                if r.contents[-1].role == "user" and r.contents[-1].parts[-1].text
                                                and "charge_b" not in str(r.contents[-1]) else "ok"),
                 tools=[s.tool("b")]),
    ])


def loop_of_sequences(s: Scenario):
    def body(name):
        return LlmAgent(name=name, model=ScriptedLlm(responder=lambda r: call(f"charge_{name}", amount=1)
                                                     if "charge" not in str(r.contents[-1]) else f"{name} done"),
                        tools=[s.tool(name)])

    return LoopAgent(name="loop", max_iterations=2, sub_agents=[
        SequentialAgent(name="steps", sub_agents=[body("x"), body("y")])])


def parallel(s: Scenario):
    return ParallelAgent(name="par", sub_agents=[
        LlmAgent(name="left", model=ScriptedLlm(turns=[call("charge_l", amount=1), "left done"]),
                 tools=[s.tool("l")]),
        LlmAgent(name="right", model=ScriptedLlm(turns=[call("charge_r", amount=2), "right done"]),
                 tools=[s.tool("r")]),
    ])


async def _uninterrupted(build, resumable=True):
    s = Scenario(build, resumable)
    session = await new_session(s.runner)
    events = await run(s.runner, session, user_text("go"))
    return shape(await stored(s.runner, session)), sorted(s.effects), len(events)


async def _stopped_after(build, k, resumable=True):
    s = Scenario(build, resumable)
    session = await new_session(s.runner)
    events = s.runner.run_async(user_id=USER, session_id=session.id, new_message=user_text("go"))
    seen = []
    async for event in events:
        seen.append(event)
        if len(seen) == k:
            break
    await events.aclose()
    rest = await run(s.runner, session, invocation_id=seen[0].invocation_id)
    assert {e.invocation_id for e in rest} <= {seen[0].invocation_id}
    return shape(await stored(s.runner, session)), sorted(s.effects)


@pytest.mark.parametrize(
    ("build", "resumable"),
    [(single, True), (sequence, True), (loop, True), (single, False), (sequence, False),
     (sequence, "durable"), (loop, "durable"), (loop_of_sequences, "durable"), (loop_of_sequences, True)],
    ids=["single", "sequence", "loop", "single-not-resumable", "sequence-not-resumable", "sequence-durable",
         "loop-durable", "loop-of-sequences-durable", "loop-of-sequences"],
)
async def test_a_run_stopped_after_any_event_resumes_to_the_same_history_and_side_effects(build, resumable):
    expected_history, expected_effects, n = await _uninterrupted(build, resumable)
    assert n >= 3
    for k in range(1, n + 1):
        history, effects = await _stopped_after(build, k, resumable)
        assert (k, history) == (k, expected_history)
        assert (k, effects) == (k, expected_effects)


async def test_a_parallel_run_stopped_after_any_event_resumes_with_each_tool_run_once():
    expected_history, expected_effects, n = await _uninterrupted(parallel)
    for k in range(1, n + 1):
        history, effects = await _stopped_after(parallel, k)
        assert (k, effects) == (k, expected_effects)
        # branches interleave differently after a stop; each branch's own history is the same
        for branch in ("par.left", "par.right", None):
            assert (k, [h for h in history if h[1] == branch]) == (k, [h for h in expected_history
                                                                       if h[1] == branch])


async def test_resuming_a_finished_invocation_runs_nothing():
    s = Scenario(single)
    session = await new_session(s.runner)
    events = await run(s.runner, session, user_text("go"))
    again = await run(s.runner, session, invocation_id=events[0].invocation_id)
    assert again == []
    assert s.effects == ["a:5"]


async def test_a_parked_invocation_stopped_after_the_answer_is_committed_resumes_the_model():
    def ask(question: str) -> None:
        """Ask a human."""

    agent = LlmAgent(name="a", model=ScriptedLlm(turns=[call("ask", question="ok?"), "Human said yes."]),
                     tools=[LongRunningFunctionTool(ask)])
    runner = InMemoryRunner(agent=agent, app_name="app")
    session = await new_session(runner)
    first = await run(runner, session, user_text("go"))
    call_id = first[0].get_function_calls()[0].id
    # The answer is committed, then the process dies before the model is called.
    events = runner.run_async(user_id=USER, session_id=session.id,
                              new_message=function_response(call_id, "ask", {"answer": "yes"}))
    await events.aclose()  # never started: nothing committed
    assert len(await stored(runner, session)) == 2
    resumed = await run(runner, session, function_response(call_id, "ask", {"answer": "yes"}))
    redelivered = await run(runner, session, invocation_id=first[0].invocation_id)
    assert [e.text() for e in resumed] == ["Human said yes."]
    assert redelivered == []


async def test_a_redelivered_message_for_a_started_invocation_is_not_appended_twice():
    s = Scenario(single)
    session = await new_session(s.runner)
    events = s.runner.run_async(user_id=USER, session_id=session.id, new_message=user_text("go"),
                                invocation_id="e-fixed")
    first = await events.__anext__()
    await events.aclose()
    rest = await run(s.runner, session, user_text("go"), invocation_id="e-fixed")
    history = await stored(s.runner, session)
    assert [e.author for e in history] == ["user", "a", "a", "a", "a"]  # the last one: end_of_agent
    assert first.invocation_id == "e-fixed" and {e.invocation_id for e in rest} == {"e-fixed"}
    assert s.effects == ["a:5"]


async def test_a_resumed_park_stopped_after_any_event_still_ends_like_an_uninterrupted_one():
    def build(s: Scenario):
        def approve(what: str) -> None:
            """Ask for approval."""
            s.effects.append(f"asked:{what}")

        return SequentialAgent(name="seq", sub_agents=[
            LlmAgent(name="ask", model=ScriptedLlm(turns=[call("approve", what="x"), "approved"]),
                     tools=[LongRunningFunctionTool(approve)]),
            LlmAgent(name="pay", model=ScriptedLlm(turns=[call("charge_p", amount=9), "paid"]),
                     tools=[s.tool("p")]),
        ])

    async def parked():
        s = Scenario(build)
        session = await new_session(s.runner)
        first = await run(s.runner, session, user_text("go"))
        call_id = next(e for e in first if e.get_function_calls()).get_function_calls()[0].id
        return s, session, first[0].invocation_id, function_response(call_id, "approve", {"ok": True})

    s, session, invocation_id, answer = await parked()
    n = len(await run(s.runner, session, answer))
    expected = shape(await stored(s.runner, session)), sorted(s.effects)
    for k in range(1, n + 1):
        s, session, invocation_id, answer = await parked()
        events = s.runner.run_async(user_id=USER, session_id=session.id, new_message=answer)
        seen = 0
        async for _ in events:
            seen += 1
            if seen == k:
                break
        await events.aclose()
        await run(s.runner, session, invocation_id=invocation_id)
        assert (k, shape(await stored(s.runner, session)), sorted(s.effects)) == (k, *expected)


def transfer(s: Scenario):
    billing = LlmAgent(name="billing", model=ScriptedLlm(turns=[call("charge_t", amount=4), "billed"]),
                       tools=[s.tool("t")])
    return LlmAgent(name="front", model=ScriptedLlm(turns=[call("transfer_to_agent", agent_name="billing")]),
                    sub_agents=[billing])


@pytest.mark.parametrize("resumable", [True, False], ids=["resumable", "not-resumable"])
async def test_a_run_stopped_after_any_event_of_a_transfer_resumes_through_the_transfer(resumable):
    expected_history, expected_effects, n = await _uninterrupted(transfer, resumable)
    for k in range(1, n + 1):
        history, effects = await _stopped_after(transfer, k, resumable)
        assert (k, history, effects) == (k, expected_history, expected_effects)


async def test_an_invocation_that_started_at_a_sub_agent_resumes_there():
    s = Scenario(transfer, resumable=False)  # resumable, the root's end_of_agent takes the next turn back
    session = await new_session(s.runner)
    await run(s.runner, session, user_text("bill me"))
    events = s.runner.run_async(user_id=USER, session_id=session.id, new_message=user_text("again"))
    first = await events.__anext__()
    await events.aclose()
    assert first.author == "billing"
    rest = await run(s.runner, session, invocation_id=first.invocation_id)
    assert {e.author for e in rest} == {"billing"}


@pytest.mark.parametrize("resumable", [True, False, None], ids=["resumable", "not-resumable", "journaled"])
async def test_resuming_a_finished_invocation_does_not_repeat_the_after_agent_callback(resumable):
    from google.genai import types

    from runtime.tools import InMemoryToolJournal

    def after(callback_context):
        return types.Content(role="model", parts=[types.Part(text="appendix")])

    agent = LlmAgent(name="a", model=ScriptedLlm(turns=["answer"]), after_agent_callback=after)
    runner = InMemoryRunner(agent=agent, app_name="app", resumable=resumable,
                            tool_journal=InMemoryToolJournal() if resumable is None else None)
    session = await new_session(runner)
    events = await run(runner, session, user_text("go"))
    assert await run(runner, session, invocation_id=events[0].invocation_id) == []
    assert [e.text() for e in await stored(runner, session) if e.content] == ["go", "answer", "appendix"]


async def test_a_tool_answer_computed_but_not_committed_is_reused_with_its_actions():
    # Simulate a stop between the tool finishing and its answer being committed (as a stopped parallel
    # branch can): the runner remembers the answer and what the tool asked for, and does not run it again.
    s = Scenario(single)
    session = await new_session(s.runner)
    events = s.runner.run_async(user_id=USER, session_id=session.id, new_message=user_text("go"))
    first = await events.__anext__()
    await events.aclose()
    from runtime.events import EventActions

    call_id = first.get_function_calls()[0].id
    s.runner._uncommitted[(first.invocation_id, call_id)] = (
        {"charged": 5}, EventActions(state_delta={"paid": True}))
    rest = await run(s.runner, session, invocation_id=first.invocation_id)
    assert s.effects == []
    assert (rest[0].get_function_responses()[0].response, rest[0].actions.state_delta) == (
        {"charged": 5}, {"paid": True})
    assert s.runner._uncommitted == {}
