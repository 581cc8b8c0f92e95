"""App loading, and long-running calls inside workflow agents."""

from __future__ import annotations

import sys
import types as pytypes

import pytest

from runtime.agents import LlmAgent, ParallelAgent, SequentialAgent
from runtime.apps import App, load_app
from runtime.errors import AppNotFoundError
from runtime.models import ScriptedLlm, call
from runtime.runners import InMemoryRunner, pending_long_running_calls
from runtime.tools import LongRunningFunctionTool

from .helpers import function_response, new_session, run, summaries, user_text


def approve(what: str) -> None:
    """Ask a human to approve."""


def test_load_app_imports_an_app_or_wraps_a_bare_agent(monkeypatch):
    module = pytypes.ModuleType("agentq_test_app_module")
    agent = LlmAgent(name="helper", model=ScriptedLlm(turns=["x"]))
    module.app = App(name="demo", root_agent=agent)
    module.root_agent = LlmAgent(name="bare", model=ScriptedLlm(turns=["x"]))
    monkeypatch.setitem(sys.modules, module.__name__, module)
    assert load_app("agentq_test_app_module:app") is module.app
    bare = load_app("agentq_test_app_module:root_agent")
    assert (bare.name, bare.root_agent.name) == ("bare", "bare")
    with pytest.raises(AppNotFoundError, match="'nothing'"):
        load_app("agentq_test_app_module:nothing")
    with pytest.raises(AppNotFoundError, match="'no_such_module_xyz'"):
        load_app("no_such_module_xyz:app")


async def test_a_runner_built_from_an_app_uses_its_name_and_root_agent():
    app = App(name="demo", root_agent=LlmAgent(name="a", model=ScriptedLlm(turns=["hello"])))
    runner = InMemoryRunner(app=app)
    session = await new_session(runner)
    assert runner.app_name == "demo" and session.app_name == "demo"
    assert summaries(await run(runner, session, user_text("hi"))) == [("a", ["hello"])]


async def test_a_long_running_call_pauses_a_sequence_and_the_answer_resumes_it_to_the_end():
    first = LlmAgent(name="first", model=ScriptedLlm(turns=[call("approve", what="x"), "approved"]),
                     tools=[LongRunningFunctionTool(approve)])
    second = LlmAgent(name="second", model=ScriptedLlm(turns=["second ran"]))
    runner = InMemoryRunner(agent=SequentialAgent(name="seq", sub_agents=[first, second]), app_name="app",
                            resumable=True)
    session = await new_session(runner)
    parked = await run(runner, session, user_text("go"))
    assert summaries(parked) == [("first", [("call", "approve", {"what": "x"})])]
    assert [(e.author, e.actions.agent_state) for e in parked] == [
        ("seq", {"current_sub_agent": "first"}), ("first", None)]
    call_id = parked[-1].get_function_calls()[0].id
    resumed = await run(runner, session, function_response(call_id, "approve", {"ok": True}))
    assert summaries(resumed) == [("first", ["approved"]), ("second", ["second ran"])]
    assert {e.invocation_id for e in parked + resumed} == {parked[0].invocation_id}
    assert resumed[-1].actions.end_of_agent is True


async def test_a_parked_parallel_branch_lets_the_other_finish_and_resumes_alone():
    waiting = LlmAgent(name="waiting", model=ScriptedLlm(turns=[call("approve", what="y"), "now approved"]),
                       tools=[LongRunningFunctionTool(approve)])
    quick = LlmAgent(name="quick", model=ScriptedLlm(turns=["quick done"]))
    runner = InMemoryRunner(agent=ParallelAgent(name="par", sub_agents=[waiting, quick]), app_name="app",
                            resumable=True)
    session = await new_session(runner)
    parked = await run(runner, session, user_text("go"))
    assert sorted(summaries(parked)) == [("quick", ["quick done"]), ("waiting", [("call", "approve", {"what": "y"})])]
    fresh = await runner.session_service.get_session(app_name="app", user_id="u", session_id=session.id)
    call_id = next(e for e in parked if e.get_function_calls()).get_function_calls()[0].id
    assert [c.id for c in pending_long_running_calls(fresh, parked[0].invocation_id)] == [call_id]
    resumed = await run(runner, session, function_response(call_id, "approve", {"ok": True}))
    assert summaries(resumed) == [("waiting", ["now approved"])]
    assert resumed[0].branch == "par.waiting"
    assert resumed[-1].actions.end_of_agent is True


async def test_without_resumability_a_long_running_call_still_pauses_the_sequence_and_the_answer_resumes_the_caller():
    first = LlmAgent(name="first", model=ScriptedLlm(turns=[call("approve", what="x"), "approved"]),
                     tools=[LongRunningFunctionTool(approve)])
    second = LlmAgent(name="second", model=ScriptedLlm(turns=["second ran"]))
    runner = InMemoryRunner(agent=SequentialAgent(name="seq", sub_agents=[first, second]), app_name="app")
    session = await new_session(runner)
    events = await run(runner, session, user_text("go"))
    assert [(e.author, e.content is not None) for e in events] == [("first", True)]
    call_id = events[0].get_function_calls()[0].id
    answered = await run(runner, session, function_response(call_id, "approve", {"ok": True}))
    assert summaries(answered) == [("first", ["approved"])]
    assert answered[0].invocation_id == events[0].invocation_id


async def test_an_app_with_resumability_config_makes_the_runner_resumable():
    from runtime.apps import ResumabilityConfig

    app = App(name="demo", root_agent=LlmAgent(name="a", model=ScriptedLlm(turns=["hi"])),
              resumability_config=ResumabilityConfig(is_resumable=True))
    runner = InMemoryRunner(app=app)
    session = await new_session(runner)
    events = await run(runner, session, user_text("x"))
    assert [(e.author, e.text(), e.actions.end_of_agent) for e in events] == [("a", "hi", None), ("a", "", True)]
