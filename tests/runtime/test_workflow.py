"""runtime.workflow in-process: what a workflow does, named by behaviour (the event-by-event comparison with
google-adk 2.13 is tests/workflow_parity). Crashes are simulated by abandoning a run mid-node and continuing the
invocation with ``run_async(invocation_id=...)``, as a worker that takes over does."""

from __future__ import annotations

import asyncio

import pytest

from runtime.apps import App
from runtime.events import Event, RequestInput
from runtime.runners import InMemoryRunner, Runner
from runtime.sessions import RedisSessionService
from runtime.tools import FunctionTool
from runtime.tools.tool_journal import InMemoryToolJournal
from runtime.workflow import (
    DEFAULT_ROUTE,
    START,
    JoinNode,
    NodeTimeoutError,
    RetryConfig,
    Workflow,
    WorkflowDataError,
    node,
)

from .helpers import USER, function_response, new_session, user_text


def _runner(workflow: Workflow, *, durable: bool = False) -> InMemoryRunner:
    app = App(name="app", root_agent=workflow)
    return InMemoryRunner(app=app, tool_journal=InMemoryToolJournal() if durable else None)


async def _run(runner, session, message=None, **kwargs) -> list[Event]:
    return [event async for event in runner.run_async(user_id=USER, session_id=session.id, new_message=message,
                                                      **kwargs)]


def _outputs(events: list[Event]) -> list[tuple[str, object]]:
    return [(e.node_info.path, e.output) for e in events if e.node_info and e.node_info.output_for]


async def _crash_inside(runner, session, message, started: asyncio.Event) -> str:
    """Run until ``started`` is set inside a node, then abandon the run as a killed worker would; the invocation id."""
    invocation_id = None
    events = runner.run_async(user_id=USER, session_id=session.id, new_message=message)
    pulling = asyncio.ensure_future(events.__anext__())
    waiting = asyncio.ensure_future(started.wait())
    while True:
        done, _ = await asyncio.wait({pulling, waiting}, return_when=asyncio.FIRST_COMPLETED)
        if pulling in done:
            invocation_id = pulling.result().invocation_id
            pulling = asyncio.ensure_future(events.__anext__())
        if waiting in done:
            break
    pulling.cancel()
    await asyncio.gather(pulling, return_exceptions=True)
    await events.aclose()
    if invocation_id is None:
        session = await runner.session_service.get_session(app_name="app", user_id=USER, session_id=session.id)
        invocation_id = session.events[-1].invocation_id
    return invocation_id


async def test_a_chain_hands_each_nodes_output_to_the_next_and_its_last_output_is_the_workflows():
    # a lambda's name is no identifier: @node names it
    wf = Workflow(name="chain", edges=[(START, node(lambda node_input: len(node_input), name="count"),
                                        node(lambda node_input: node_input * 2, name="double"))])
    runner = _runner(wf)
    events = await _run(runner, await new_session(runner), user_text("hello"))
    assert _outputs(events) == [("chain@1/count@1", 5), ("chain@1/double@1", 10)]
    assert events[-1].node_info.output_for == ["chain@1/double@1", "chain@1"]


async def test_a_route_follows_its_edges_and_the_default_route_takes_what_no_edge_matched():
    def sort(node_input: str):
        return Event(output=node_input, route=node_input)

    def red(node_input):
        return "is red"

    def other(node_input):
        return "is something else"

    wf = Workflow(name="sorter", edges=[(START, sort, {"red": red, DEFAULT_ROUTE: other})])
    runner = _runner(wf)
    session = await new_session(runner)
    assert _outputs(await _run(runner, session, user_text("red")))[-1] == ("sorter@1/red@1", "is red")
    assert _outputs(await _run(runner, session, user_text("blue")))[-1] == ("sorter@1/other@1", "is something else")


async def test_a_join_waits_for_all_its_predecessors_and_outputs_their_outputs_by_name():
    async def slow(node_input):
        await asyncio.sleep(0.02)
        return "slow"

    def fast(node_input):
        return "fast"

    wf = Workflow(name="joined", edges=[(START, (slow, fast), JoinNode(name="both"))])
    runner = _runner(wf)
    events = await _run(runner, await new_session(runner), user_text("go"))
    assert _outputs(events) == [("joined@1/fast@1", "fast"), ("joined@1/slow@1", "slow"),
                                ("joined@1/both@1", {"slow": "slow", "fast": "fast"})]
    assert [e.branch for e in events if e.node_info.path != "joined@1/both@1"] == ["fast@1", "slow@1"]


async def test_node_parameters_are_filled_from_session_state_by_name_and_state_writes_are_committed():
    def greet(ctx, name: str, node_input: str, punctuation: str = "!"):
        ctx.state["greeted"] = name
        return f"{node_input} {name}{punctuation}"

    runner = _runner(Workflow(name="greeter", edges=[(START, greet)]))
    session = await new_session(runner, state={"name": "Ada"})
    events = await _run(runner, session, user_text("hello"))
    assert _outputs(events) == [("greeter@1/greet@1", "hello Ada!")]
    assert events[-1].actions.state_delta == {"greeted": "Ada"}
    stored = await runner.session_service.get_session(app_name="app", user_id=USER, session_id=session.id)
    assert stored.state["greeted"] == "Ada"


async def test_a_parameter_neither_in_state_nor_defaulted_fails_the_node_naming_it():
    def needs(topic: str):
        return topic

    runner = _runner(Workflow(name="needy", edges=[(START, needs)]))
    with pytest.raises(WorkflowDataError, match='Missing value for parameter "topic" of function "needs"'):
        await _run(runner, await new_session(runner), user_text("go"))


async def test_a_request_input_pauses_the_workflow_and_the_answer_becomes_the_nodes_output():
    async def ask(node_input):
        yield RequestInput(interrupt_id="q", message="Size?", payload={"options": ["S", "L"]},
                           response_schema={"type": "string"})

    def after(node_input):
        return f"size {node_input['size']}"

    runner = _runner(Workflow(name="asking", edges=[(START, ask, after)]))
    session = await new_session(runner)
    first = await _run(runner, session, user_text("go"))
    [call] = first[-1].get_function_calls()
    assert (call.id, call.name, call.args) == ("q", "adk_request_input", {
        "interruptId": "q", "payload": {"options": ["S", "L"]}, "message": "Size?",
        "response_schema": {"type": "string"}})
    assert first[-1].long_running_tool_ids == {"q"}
    second = await _run(runner, session, function_response("q", "adk_request_input", {"size": "L"}))
    assert {e.invocation_id for e in second} == {first[0].invocation_id}
    assert _outputs(second) == [("asking@1/after@1", "size L")]


async def test_a_rerun_on_resume_node_runs_again_with_the_answers_in_resume_inputs():
    seen = []

    @node(rerun_on_resume=True)
    async def ask(ctx, node_input):
        seen.append(dict(ctx.resume_inputs))
        if "q" not in ctx.resume_inputs:
            yield RequestInput(interrupt_id="q", message="Name?")
            return
        yield f"hi {ctx.resume_inputs['q']['name']}"

    runner = _runner(Workflow(name="rerun", edges=[(START, ask)]))
    session = await new_session(runner)
    await _run(runner, session, user_text("go"))
    events = await _run(runner, session, function_response("q", "adk_request_input", {"name": "Bo"}))
    assert seen == [{}, {"q": {"name": "Bo"}}]
    assert _outputs(events) == [("rerun@1/ask@1", "hi Bo")]


async def test_a_failing_node_is_retried_as_its_retry_config_says_each_failure_an_error_event():
    attempts = []

    @node(retry_config=RetryConfig(max_attempts=3, initial_delay=0, jitter=0, exceptions=[KeyError]))
    def shaky(node_input):
        attempts.append(1)
        if len(attempts) < 3:
            raise KeyError(f"try {len(attempts)}")
        return "steady"

    runner = _runner(Workflow(name="retrying", edges=[(START, shaky)]))
    events = await _run(runner, await new_session(runner), user_text("go"))
    assert [(e.error_code, e.error_message) for e in events if e.error_code] == [
        ("KeyError", "'try 1'"), ("KeyError", "'try 2'")]
    assert _outputs(events) == [("retrying@1/shaky@1", "steady")]


async def test_an_exception_the_retry_config_does_not_name_is_not_retried():
    @node(retry_config=RetryConfig(max_attempts=5, initial_delay=0, exceptions=["KeyError"]))
    def wrong(node_input):
        raise ValueError("not retried")

    runner = _runner(Workflow(name="picky", edges=[(START, wrong)]))
    with pytest.raises(ValueError, match="not retried"):
        await _run(runner, await new_session(runner), user_text("go"))


async def test_a_node_past_its_timeout_fails_with_node_timeout_error_and_can_be_retried():
    calls = []

    @node(timeout=0.05, retry_config=RetryConfig(max_attempts=2, initial_delay=0, jitter=0))
    async def sleepy(node_input):
        calls.append(1)
        if len(calls) == 1:
            await asyncio.sleep(5)
        return "woke"

    runner = _runner(Workflow(name="timed", edges=[(START, sleepy)]))
    events = await _run(runner, await new_session(runner), user_text("go"))
    assert [e.error_code for e in events if e.error_code] == ["NodeTimeoutError"]
    assert _outputs(events) == [("timed@1/sleepy@1", "woke")]
    assert issubclass(NodeTimeoutError, Exception)


async def test_after_a_crash_inside_a_node_a_durable_run_reruns_that_node_only():
    ran = []
    inside = asyncio.Event()

    def first(node_input):
        ran.append("first")
        return "1"

    async def second(node_input):
        ran.append("second")
        if ran.count("second") == 1:
            inside.set()
            await asyncio.sleep(10)
        return node_input + "2"

    def third(node_input):
        ran.append("third")
        return node_input + "3"

    runner = _runner(Workflow(name="crashy", edges=[(START, first, second, third)]), durable=True)
    session = await new_session(runner)
    invocation_id = await _crash_inside(runner, session, user_text("go"), inside)
    events = await _run(runner, session, invocation_id=invocation_id)
    assert ran == ["first", "second", "second", "third"]
    assert _outputs(events) == [("crashy@1/second@1", "12"), ("crashy@1/third@1", "123")]


async def test_a_nodes_deadline_holds_across_a_crash_the_lost_attempt_keeps_its_time_left():
    inside = asyncio.Event()

    @node(timeout=1.0)
    async def deadline(node_input):
        if not inside.is_set():
            inside.set()
            await asyncio.sleep(10)
        return "in time"

    runner = _runner(Workflow(name="deadlines", edges=[(START, deadline)]), durable=True)
    session = await new_session(runner)
    invocation_id = await _crash_inside(runner, session, user_text("go"), inside)
    await asyncio.sleep(1.1)  # the attempt's second ran out while nobody ran it
    with pytest.raises(NodeTimeoutError, match="Node 'deadline' timed out after 1.0 seconds."):
        await _run(runner, session, invocation_id=invocation_id)


async def test_after_a_crash_the_finished_children_of_a_dynamic_node_are_not_run_again():
    ran = []
    inside = asyncio.Event()

    def child(node_input: int) -> int:
        ran.append(node_input)
        return node_input * 10

    @node(rerun_on_resume=True)
    async def parent(ctx, node_input):
        total = 0
        for number in (1, 2, 3):
            total += await ctx.run_node(child, node_input=number)
            if number == 2 and not inside.is_set():
                inside.set()
                await asyncio.sleep(10)
        yield total

    runner = _runner(Workflow(name="dynamic", edges=[(START, parent)]), durable=True)
    session = await new_session(runner)
    invocation_id = await _crash_inside(runner, session, user_text("go"), inside)
    events = await _run(runner, session, invocation_id=invocation_id)
    assert ran == [1, 2, 3]
    assert _outputs(events) == [("dynamic@1/parent@1/child@3", 30), ("dynamic@1/parent@1", 60)]


async def test_a_tool_node_that_finished_before_a_crash_is_not_run_again():
    charged = []
    inside = asyncio.Event()

    def charge(amount: int) -> dict:
        """Charge a card."""
        charged.append(amount)
        return {"charged": amount}

    async def after(node_input):
        if not inside.is_set():
            inside.set()
            await asyncio.sleep(10)
        return f"after {node_input}"

    order = node(lambda node_input: {"amount": 7}, name="order")
    runner = _runner(Workflow(name="billing", edges=[(START, order, FunctionTool(charge), after)]), durable=True)
    session = await new_session(runner)
    invocation_id = await _crash_inside(runner, session, user_text("go"), inside)
    events = await _run(runner, session, invocation_id=invocation_id)
    assert charged == [7]
    assert _outputs(events) == [("billing@1/after@1", "after {'charged': 7}")]


async def test_a_parallel_worker_runs_every_item_with_at_most_its_limit_in_flight():
    in_flight, peak = 0, 0

    @node(parallel_worker=True, max_parallel_workers=3)
    async def work(node_input: int) -> int:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.005)
        in_flight -= 1
        return node_input + 100

    wf = Workflow(name="fan", edges=[(START, node(lambda node_input: list(range(10)), name="items"), work)])
    runner = _runner(wf)
    events = await _run(runner, await new_session(runner), user_text("go"))
    assert events[-1].output == [n + 100 for n in range(10)]
    assert peak == 3
    assert sorted(e.node_info.path for e in events if e.node_info.path.startswith("fan@1/work@1/")) == sorted(
        f"fan@1/work@1/work@{n}" for n in range(1, 11))


def test_a_graph_with_two_distinct_nodes_of_one_name_is_refused_naming_the_name():
    # as in ADK 2.13, pydantic wraps the graph error in a ValidationError (a ValueError) carrying its message
    def one(node_input):
        return 1

    def two(node_input):
        return 2

    two.__name__ = "one"
    with pytest.raises(ValueError, match=r"Duplicate node names found: \['one'\]"):
        Workflow(name="bad", edges=[(START, one, two)])


def test_a_cycle_without_a_routed_edge_is_refused():
    def a(node_input):
        return 1

    def b(node_input):
        return 2

    with pytest.raises(ValueError, match="Unconditional cycle detected: a -> b -> a"):
        Workflow(name="loop", edges=[(START, a, b, a)])


def test_event_shorthands_land_in_their_fields():
    event = Event(output=1, state={"k": "v"}, route=["a", "b"], message="hi", node_path="w@1/n@1")
    assert (event.actions.state_delta, event.actions.route, event.content.parts[0].text, event.node_info.path) == (
        {"k": "v"}, ["a", "b"], "hi", "w@1/n@1")
    assert Event.model_validate_json(event.to_json()) == event


async def test_workflow_events_are_stored_and_read_back_whole_by_the_redis_session_service(redis_url):
    async def ask(node_input):
        yield Event(output={"n": 1}, route="x", state={"seen": True})

    service = RedisSessionService(redis_url)
    runner = Runner(app=App(name="app", root_agent=Workflow(name="stored", edges=[(START, ask)])),
                    session_service=service)
    session = await new_session(runner)
    events = await _run(runner, session, user_text("go"))
    stored = await RedisSessionService(redis_url).get_session(app_name="app", user_id=USER, session_id=session.id)
    assert stored.events[-1] == events[-1]
    assert (stored.events[-1].output, stored.events[-1].node_info.output_for) == (
        {"n": 1}, ["stored@1/ask@1", "stored@1"])
