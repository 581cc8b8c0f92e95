"""SequentialAgent, ParallelAgent, LoopAgent, exit_loop and AgentTool."""

from __future__ import annotations

import asyncio

from runtime.agents import LlmAgent, LoopAgent, ParallelAgent, SequentialAgent
from runtime.models import ScriptedLlm, call
from runtime.runners import InMemoryRunner
from runtime.tools import AgentTool, exit_loop

from .helpers import new_session, run, stored, summaries, user_text


def texts(events):
    return [(e.author, e.text()) for e in events if e.content is not None]


async def test_sequential_runs_sub_agents_in_order_passing_state_along():
    first = LlmAgent(name="writer", model=ScriptedLlm(turns=["draft"]), output_key="draft")
    second = LlmAgent(name="editor", model=ScriptedLlm(turns=["final"]), instruction="Edit: {draft}")
    runner = InMemoryRunner(agent=SequentialAgent(name="seq", sub_agents=[first, second]), app_name="app")
    session = await new_session(runner)
    events = await run(runner, session, user_text("write"))
    assert [(e.author, e.text()) for e in events] == [("writer", "draft"), ("editor", "final")]


async def test_a_resumable_sequence_commits_its_progress_as_checkpoint_events():
    first = LlmAgent(name="writer", model=ScriptedLlm(turns=["draft"]))
    second = LlmAgent(name="editor", model=ScriptedLlm(turns=["final"]))
    runner = InMemoryRunner(agent=SequentialAgent(name="seq", sub_agents=[first, second]), app_name="app",
                            resumable=True)
    session = await new_session(runner)
    events = await run(runner, session, user_text("write"))
    assert [(e.author, e.text(), e.actions.agent_state, e.actions.end_of_agent) for e in events] == [
        ("seq", "", {"current_sub_agent": "writer"}, None),
        ("writer", "draft", None, None),
        ("writer", "", None, True),
        ("seq", "", {"current_sub_agent": "editor"}, None),
        ("editor", "final", None, None),
        ("editor", "", None, True),
        ("seq", "", None, True),
    ]


async def test_parallel_runs_sub_agents_concurrently_on_their_own_branches():
    order = []
    seen_by = {}

    class Timed(ScriptedLlm):
        async def generate_content_async(self, llm_request, stream=False):
            seen_by[self.model] = [p.text for c in llm_request.contents for p in c.parts]
            order.append(f"{self.model}-start")
            await asyncio.sleep(0.02 if self.model == "slow" else 0)
            order.append(f"{self.model}-end")
            async for response in super().generate_content_async(llm_request, stream):
                yield response

    def model_for(name):
        return Timed(model=name, turns=[f"{name} says"])

    slow = LlmAgent(name="slow", model=model_for("slow"))
    fast = LlmAgent(name="fast", model=model_for("fast"))
    runner = InMemoryRunner(agent=ParallelAgent(name="par", sub_agents=[slow, fast]), app_name="app")
    session = await new_session(runner)
    events = await run(runner, session, user_text("go"))
    assert order == ["slow-start", "fast-start", "fast-end", "slow-end"]
    assert sorted(texts(events)) == [("fast", "fast says"), ("slow", "slow says")]
    assert {e.author: e.branch for e in events if e.content is not None} == {"slow": "par.slow",
                                                                              "fast": "par.fast"}
    assert seen_by == {"slow": ["go"], "fast": ["go"]}


async def test_a_parallel_branch_sees_only_its_own_history_on_the_next_turn():
    seen = {}

    def recorder(name):
        def responder(request):
            seen[name] = [p.text for c in request.contents for p in c.parts]
            return f"{name} answer"
        return ScriptedLlm(responder=responder)

    par = ParallelAgent(name="par", sub_agents=[LlmAgent(name="x", model=recorder("x")),
                                                LlmAgent(name="y", model=recorder("y"))])
    runner = InMemoryRunner(agent=par, app_name="app")
    session = await new_session(runner)
    await run(runner, session, user_text("one"))
    await run(runner, session, user_text("two"))
    assert seen == {"x": ["one", "x answer", "two"], "y": ["one", "y answer", "two"]}


async def test_loop_repeats_until_max_iterations():
    agent = LlmAgent(name="step", model=ScriptedLlm(responder=lambda r: "tick"))
    runner = InMemoryRunner(agent=LoopAgent(name="loop", sub_agents=[agent], max_iterations=3), app_name="app")
    session = await new_session(runner)
    events = await run(runner, session, user_text("go"))
    assert texts(events) == [("step", "tick")] * 3


async def test_exit_loop_escalates_and_ends_the_loop_after_that_sub_agent():
    def checker_turn(request):
        rounds = sum(1 for c in request.contents for p in c.parts if p.text and "[worker] said" in p.text)
        return call("exit_loop") if rounds >= 2 else "not yet"

    worker = LlmAgent(name="worker", model=ScriptedLlm(responder=lambda r: "work"))
    checker = LlmAgent(name="checker", model=ScriptedLlm(responder=checker_turn), tools=[exit_loop])
    after = LlmAgent(name="after", model=ScriptedLlm(responder=lambda r: "never"))
    loop = LoopAgent(name="loop", sub_agents=[worker, checker, after])
    runner = InMemoryRunner(agent=loop, app_name="app")
    session = await new_session(runner)
    events = await run(runner, session, user_text("go"))
    assert summaries(events) == [
        ("worker", ["work"]), ("checker", ["not yet"]), ("after", ["never"]),
        ("worker", ["work"]), ("checker", [("call", "exit_loop", {})]),
        ("checker", [("response", "exit_loop", {"result": None})]),
    ]
    assert events[-1].actions.escalate is True and events[-1].actions.skip_summarization is True


async def test_agent_tool_runs_the_agent_on_a_copy_of_state_and_returns_its_final_text():
    def note(tool_context) -> str:
        """Note."""
        tool_context.state["noted"] = tool_context.state["topic"]
        return "noted"

    helper = LlmAgent(name="summarizer", description="Summarizes text.",
                      model=ScriptedLlm(turns=[call("note"), "summary of {topic}"]), tools=[note],
                      instruction="Summarize {topic}")
    root = LlmAgent(name="root", model=ScriptedLlm(turns=[call("summarizer", request="long text"), "Done."]),
                    tools=[AgentTool(agent=helper)])
    runner = InMemoryRunner(agent=root, app_name="app")
    session = await new_session(runner, state={"topic": "cats"})
    events = await run(runner, session, user_text("summarize"))
    assert summaries(events) == [
        ("root", [("call", "summarizer", {"request": "long text"})]),
        ("root", [("response", "summarizer", {"result": "summary of {topic}"})]),
        ("root", ["Done."]),
    ]
    assert events[1].actions.state_delta == {"noted": "cats"}
    fresh = await runner.session_service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert fresh.state == {"topic": "cats", "noted": "cats"}


async def test_agent_tool_with_skip_summarization_makes_its_answer_final_and_adds_it_as_text():
    helper = LlmAgent(name="helper", model=ScriptedLlm(turns=["helper says"]))
    root = LlmAgent(name="root", model=ScriptedLlm(turns=[call("helper", request="x"), "never"]),
                    tools=[AgentTool(agent=helper, skip_summarization=True)])
    runner = InMemoryRunner(agent=root, app_name="app")
    session = await new_session(runner)
    events = await run(runner, session, user_text("go"))
    assert summaries(events) == [
        ("root", [("call", "helper", {"request": "x"})]),
        ("root", [("response", "helper", {"result": "helper says"}), "helper says"]),
    ]
    assert events[-1].is_final_response()
    assert len(await stored(runner, session)) == 3


def test_agent_tool_declares_a_request_string_parameter():
    tool = AgentTool(agent=LlmAgent(name="helper", description="Helps."))
    declaration = tool._get_declaration()
    assert (declaration.name, declaration.description, declaration.parameters.required,
            declaration.parameters.properties["request"].type.value) == ("helper", "Helps.", ["request"], "STRING")


async def test_an_error_in_one_parallel_branch_stops_the_run_and_the_other_branch():
    import pytest

    started = []

    class Failing(ScriptedLlm):
        async def generate_content_async(self, llm_request, stream=False):
            raise RuntimeError("model backend exploded")
            yield  # pragma: no cover

    class Slow(ScriptedLlm):
        async def generate_content_async(self, llm_request, stream=False):
            started.append("slow")
            await asyncio.sleep(5)
            yield  # pragma: no cover

    par = ParallelAgent(name="par", sub_agents=[LlmAgent(name="bad", model=Failing()),
                                                LlmAgent(name="slow", model=Slow())])
    runner = InMemoryRunner(agent=par, app_name="app")
    session = await new_session(runner)
    with pytest.raises(RuntimeError, match="exploded"):
        await run(runner, session, user_text("go"))
    assert started == ["slow"]
    assert [t for t in asyncio.all_tasks() if t is not asyncio.current_task()] == []


async def test_a_custom_agent_yields_events_that_are_committed_in_the_invocation():
    from runtime.agents import BaseAgent
    from runtime.events import Event, EventActions

    class Greeter(BaseAgent):
        greeting: str = "hello"

        async def _run_async_impl(self, ctx):
            from google.genai import types

            yield Event(author=self.name, content=types.Content(role="model", parts=[types.Part(text=self.greeting)]),
                        actions=EventActions(state_delta={"greeted": True}))

    runner = InMemoryRunner(agent=SequentialAgent(name="seq", sub_agents=[
        Greeter(name="greeter", greeting="hi there"), LlmAgent(name="after", model=ScriptedLlm(turns=["{x}"]))]),
        app_name="app")
    session = await new_session(runner)
    events = await run(runner, session, user_text("go"))
    assert texts(events) == [("greeter", "hi there"), ("after", "{x}")]
    history = await stored(runner, session)
    assert len({e.invocation_id for e in history}) == 1
    fresh = await runner.session_service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert fresh.state == {"greeted": True}
