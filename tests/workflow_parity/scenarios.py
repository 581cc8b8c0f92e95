"""Workflow scenarios run the same way on google-adk 2.13 and on agentq, to compare their events.

This file imports neither library at module level: ``run_all(lib)`` takes the package root (``"google.adk"`` in
the reference virtualenv, ``"runtime"`` in agentq) and imports the names from there, so the very same scenario
code drives both. Run as a script in bench/.adk-venv it prints ADK's normalised events as JSON
(``tests/workflow_parity/test_workflow_parity.py`` does that and compares them with agentq's).
"""

from __future__ import annotations

import asyncio
import importlib
import json
import re
import sys
from typing import Any

SCENARIOS: dict[str, Any] = {}


def scenario(function):
    SCENARIOS[function.__name__] = function
    return function


class Lib:
    """The names a scenario uses, from one library."""

    def __init__(self, root: str):
        self.root = root
        workflow = importlib.import_module(f"{root}.workflow")
        for name in ("Workflow", "node", "Node", "BaseNode", "FunctionNode", "JoinNode", "Edge", "START",
                     "DEFAULT_ROUTE", "RetryConfig", "NodeTimeoutError"):
            setattr(self, name, getattr(workflow, name))
        events = importlib.import_module(f"{root}.events")
        self.Event, self.RequestInput = events.Event, events.RequestInput
        self.InMemoryRunner = importlib.import_module(f"{root}.runners").InMemoryRunner
        apps = importlib.import_module(f"{root}.apps")
        self.App, self.ResumabilityConfig = apps.App, apps.ResumabilityConfig
        self.LlmAgent = importlib.import_module(f"{root}.agents").LlmAgent
        models = importlib.import_module(f"{root}.models")
        self.BaseLlm, self.LlmResponse = models.BaseLlm, models.LlmResponse


def make_model(lib: Lib, replies: list[str]):
    """A BaseLlm subclass (written against the shared API) that answers with ``replies`` in turn."""
    from google.genai import types

    class Replies(lib.BaseLlm):
        texts: list[str]
        seen: list[str] = []

        async def generate_content_async(self, llm_request, stream: bool = False):
            last = llm_request.contents[-1] if llm_request.contents else None
            self.seen.append("".join(p.text or "" for p in (last.parts or [])) if last else "")
            yield lib.LlmResponse(content=types.Content(role="model", parts=[types.Part(text=self.texts.pop(0))]))

    return Replies(model="replies", texts=list(replies))


async def drive(lib: Lib, root, turns: list[Any], *, resumable: bool | str = False) -> dict[str, Any]:
    """Run ``root`` for each turn (a text, a dict {interrupt id: answer} answering a RequestInput, or "RESUME") and
    return the normalised events of every turn and the final state.

    ``resumable="durable"`` (agentq only) runs as agentq's workers do: a runner with a tool journal."""
    from google.genai import types

    if resumable == "durable":
        journal = importlib.import_module(f"{lib.root}.tools.tool_journal").InMemoryToolJournal()
        runner = lib.InMemoryRunner(app=lib.App(name="parity", root_agent=root), tool_journal=journal)
    else:
        app = lib.App(name="parity", root_agent=root,
                      resumability_config=lib.ResumabilityConfig(is_resumable=resumable) if resumable else None)
        runner = lib.InMemoryRunner(app=app)
    session = await runner.session_service.create_session(app_name="parity", user_id="u")
    ids: dict[str, str] = {}
    out: dict[str, Any] = {"turns": []}
    last_invocation = None
    last_call = (None, None)
    for turn in turns:
        resume = None
        if turn == "RESUME":  # continue the last invocation from its committed events (after a failure)
            message, resume = None, last_invocation
        elif isinstance(turn, str):
            message = types.Content(role="user", parts=[types.Part(text=turn)])
        else:  # "*" answers the latest long-running call, whatever its (random) id and name
            message = types.Content(role="user", parts=[
                types.Part(function_response=types.FunctionResponse(
                    id=last_call[0] if call_id == "*" else call_id,
                    name=last_call[1] if call_id == "*" else "adk_request_input", response=answer))
                for call_id, answer in turn.items()])
        events = []
        try:
            async for event in runner.run_async(user_id="u", session_id=session.id, new_message=message,
                                                invocation_id=resume):
                last_invocation = event.invocation_id
                for call in event.get_function_calls():
                    if call.id in (event.long_running_tool_ids or ()):
                        last_call = (call.id, call.name)
                events.append(normalise(event.model_dump(mode="json", by_alias=True, exclude_none=True), ids))
        except Exception as exc:  # noqa: BLE001 - the error is part of what is compared
            events.append({"raised": type(exc).__name__, "message": str(exc)})
        out["turns"].append(events)
    session = await runner.session_service.get_session(app_name="parity", user_id="u", session_id=session.id)
    out["state"] = dict(session.state)
    return out


_CLIENT_CALL_ID = re.compile(r"^adk-[0-9a-f-]{36}$")


def normalise(value: Any, ids: dict[str, str]) -> Any:
    """Drop what differs run to run (ids, timestamps) and empty containers; a generated call id (``adk-<uuid>``)
    becomes ``adk-<n>`` by order of appearance."""
    if isinstance(value, str) and _CLIENT_CALL_ID.match(value):
        return ids.setdefault(value, f"adk-{len(ids) + 1}")
    if isinstance(value, dict):
        result = {}
        for key, item in value.items():
            key = normalise(key, ids) if isinstance(key, str) else key
            if key in ("timestamp", "invocationId"):
                continue
            if key == "id" and isinstance(item, str):
                continue
            item = normalise(item, ids)
            if item in ({}, [], None):
                continue
            result[key] = item
        return result
    if isinstance(value, list):
        return [normalise(item, ids) for item in value]
    return value


# --- scenarios -------------------------------------------------------------------------------------------


@scenario
async def chain_of_three(lib: Lib, resumable: bool):
    def fetch(node_input: str) -> dict:
        return {"doc": f"text of {node_input}"}

    def draft(node_input: dict) -> str:
        return node_input["doc"].upper()

    async def publish(node_input: str, ctx):
        ctx.state["published"] = node_input
        yield lib.Event(output={"published": node_input}, state={"x": 1})

    wf = lib.Workflow(name="pipeline", edges=[(lib.START, fetch, draft, publish)])
    return await drive(lib, wf, ["hello"], resumable=resumable)


@scenario
async def routes(lib: Lib, resumable: bool):
    def classify(node_input: str):
        return lib.Event(output=node_input, route="long" if len(node_input) > 3 else "short")

    def long_path(node_input: str) -> str:
        return f"long:{node_input}"

    def short_path(node_input: str) -> str:
        return f"short:{node_input}"

    def fallback(node_input: str) -> str:
        return "fallback"

    wf = lib.Workflow(name="router", edges=[
        (lib.START, classify),
        (classify, {"long": long_path, "short": short_path, lib.DEFAULT_ROUTE: fallback}),
    ])
    return await drive(lib, wf, ["hello", "hi"], resumable=resumable)


@scenario
async def fan_out_and_join(lib: Lib, resumable: bool):
    def split(node_input: str) -> str:
        return node_input

    def left(node_input: str) -> str:
        return "L" + node_input

    async def right(node_input: str) -> str:
        await asyncio.sleep(0.01)
        return "R" + node_input

    join = lib.JoinNode(name="join")

    def merge(node_input: dict) -> dict:
        return {"merged": sorted(node_input.items())}

    wf = lib.Workflow(name="fan", edges=[(lib.START, split, (left, right), join, merge)])
    return await drive(lib, wf, ["x"], resumable=resumable)


@scenario
async def state_parameters(lib: Lib, resumable: bool):
    def first(node_input: str):
        return lib.Event(output=node_input, state={"topic": "cats", "count": 2})

    def second(topic: str, count: int, node_input: str) -> str:
        return f"{topic}*{count}:{node_input}"

    wf = lib.Workflow(name="params", edges=[(lib.START, first, second)])
    return await drive(lib, wf, ["go"], resumable=resumable)


@scenario
async def request_input_pause_and_answer(lib: Lib, resumable: bool):
    def prepare(node_input: str) -> str:
        return f"draft of {node_input}"

    async def review(node_input: str):
        yield lib.RequestInput(interrupt_id="review-1", message="Approve the draft?", payload={"draft": node_input})

    def publish(node_input: dict) -> str:
        return f"published with {node_input}"

    wf = lib.Workflow(name="review_flow", edges=[(lib.START, prepare, review, publish)])
    return await drive(lib, wf, ["memo", {"review-1": {"approved": True}}], resumable=resumable)


@scenario
async def request_input_rerun_on_resume(lib: Lib, resumable: bool):
    @lib.node(rerun_on_resume=True)
    async def ask(ctx, node_input: str):
        answer = ctx.resume_inputs.get("q1")
        if answer is None:
            yield lib.RequestInput(interrupt_id="q1", message="Name?")
            return
        yield f"hello {answer['name']}"

    wf = lib.Workflow(name="asker", edges=[(lib.START, ask)])
    return await drive(lib, wf, ["start", {"q1": {"name": "Ada"}}], resumable=resumable)


@scenario
async def retry_then_succeed(lib: Lib, resumable: bool):
    attempts = {"n": 0}

    @lib.node(retry_config=lib.RetryConfig(max_attempts=3, initial_delay=0.0, jitter=0.0))
    def flaky(node_input: str) -> str:
        attempts["n"] += 1
        if attempts["n"] < 3:
            raise ValueError(f"boom {attempts['n']}")
        return f"ok after {attempts['n']}"

    wf = lib.Workflow(name="retrying", edges=[(lib.START, flaky)])
    return await drive(lib, wf, ["go"], resumable=resumable)


@scenario
async def failure_without_retry(lib: Lib, resumable: bool):
    def fine(node_input: str) -> str:
        return node_input

    def broken(node_input: str) -> str:
        raise RuntimeError("it broke")

    wf = lib.Workflow(name="failing", edges=[(lib.START, fine, broken)])
    return await drive(lib, wf, ["go"], resumable=resumable)


@scenario
async def timeout(lib: Lib, resumable: bool):
    @lib.node(timeout=0.05)
    async def slow(node_input: str) -> str:
        await asyncio.sleep(5)
        return "never"

    wf = lib.Workflow(name="timing", edges=[(lib.START, slow)])
    return await drive(lib, wf, ["go"], resumable=resumable)


@scenario
async def nested_workflow(lib: Lib, resumable: bool):
    def inner_a(node_input: str) -> str:
        return f"a({node_input})"

    def inner_b(node_input: str) -> str:
        return f"b({node_input})"

    inner = lib.Workflow(name="inner", edges=[(lib.START, inner_a, inner_b)])

    def after(node_input: str) -> str:
        return f"after({node_input})"

    outer = lib.Workflow(name="outer", edges=[(lib.START, inner, after)])
    return await drive(lib, outer, ["x"], resumable=resumable)


@scenario
async def agent_node(lib: Lib, resumable: bool):
    def fetch(node_input: str) -> str:
        return f"facts about {node_input}"

    model = make_model(lib, ["A fine draft."])
    writer = lib.LlmAgent(name="writer", model=model, instruction="Write it.")

    def publish(node_input: Any) -> str:
        return f"published: {node_input}"

    wf = lib.Workflow(name="doc", edges=[(lib.START, fetch, writer, publish)])
    result = await drive(lib, wf, ["otters"], resumable=resumable)
    result["model_saw"] = model.seen
    return result


@scenario
async def dynamic_node(lib: Lib, resumable: bool):
    def double(node_input: int) -> int:
        return node_input * 2

    @lib.node(rerun_on_resume=True)
    async def orchestrate(ctx, node_input: str):
        total = 0
        for number in (1, 2, 3):
            total += await ctx.run_node(double, node_input=number)
        yield total

    wf = lib.Workflow(name="dyn", edges=[(lib.START, orchestrate)])
    return await drive(lib, wf, ["go"], resumable=resumable)


@scenario
async def loop_with_a_routed_edge_back(lib: Lib, resumable: bool):
    def start(node_input: str):
        return lib.Event(output=0, state={"rounds": 0})

    def step(ctx, node_input: int):
        ctx.state["rounds"] = node_input + 1
        return lib.Event(output=node_input + 1, route="again" if node_input + 1 < 3 else "done")

    def finish(node_input: int) -> str:
        return f"looped {node_input}"

    wf = lib.Workflow(name="looping", edges=[(lib.START, start, step), (step, {"again": step, "done": finish})])
    return await drive(lib, wf, ["go"], resumable=resumable)


@scenario
async def parallel_worker_over_items(lib: Lib, resumable: bool):
    def items(node_input: str) -> list:
        return [1, 2, 3, 4]

    @lib.node(parallel_worker=True, max_parallel_workers=2)
    async def square(node_input: int) -> int:
        return node_input * node_input

    def add(node_input: list) -> int:
        return sum(node_input)

    wf = lib.Workflow(name="items", edges=[(lib.START, items, square, add)])
    return await drive(lib, wf, ["go"], resumable=resumable)


@scenario
async def tool_node(lib: Lib, resumable: bool):
    tools = importlib.import_module(f"{lib.root}.tools")

    def lookup(city: str, units: str = "C") -> dict:
        """Look up the weather."""
        return {"city": city, "temp": 21, "units": units}

    def ask(node_input: str) -> dict:
        return {"city": node_input}

    wf = lib.Workflow(name="tooling", edges=[(lib.START, ask, tools.FunctionTool(lookup))])
    return await drive(lib, wf, ["Oslo"], resumable=resumable)


@scenario
async def request_input_with_a_model_schema(lib: Lib, resumable: bool):
    from pydantic import BaseModel

    class Decision(BaseModel):
        approved: bool
        note: str = ""

    async def ask(node_input: str):
        yield lib.RequestInput(interrupt_id="d1", message="Decide", response_schema=Decision)

    def after(node_input: dict) -> str:
        return f"got {node_input}"

    wf = lib.Workflow(name="schema", edges=[(lib.START, ask, after)])
    return await drive(lib, wf, ["go", {"d1": {"approved": True, "note": "ok"}}], resumable=resumable)


@scenario
async def resume_after_a_failure(lib: Lib, resumable: bool):
    calls = {"n": 0}

    def first(node_input: str) -> str:
        return f"first({node_input})"

    def shaky(node_input: str) -> str:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("down for now")
        return f"shaky({node_input})"

    wf = lib.Workflow(name="recovering", edges=[(lib.START, first, shaky)])
    return await drive(lib, wf, ["go", "RESUME"], resumable=resumable)


@scenario
async def message_events_and_no_output(lib: Lib, resumable: bool):
    async def talk(ctx, node_input: str):
        yield lib.Event(message=f"Working on {node_input}")
        ctx.state["talked"] = True

    def silent(node_input) -> None:
        return None

    def last(node_input) -> str:
        return f"last saw {node_input!r}"

    wf = lib.Workflow(name="talking", edges=[(lib.START, talk, silent, last)])
    return await drive(lib, wf, ["go"], resumable=resumable)


@scenario
async def missing_state_parameter(lib: Lib, resumable: bool):
    def needs(topic: str) -> str:
        return topic

    wf = lib.Workflow(name="needy", edges=[(lib.START, needs)])
    return await drive(lib, wf, ["go"], resumable=resumable)


@scenario
async def three_way_join_and_two_ends(lib: Lib, resumable: bool):
    def a(node_input: str) -> str:
        return "a"

    def b(node_input: str) -> str:
        return "b"

    def c(node_input: str) -> str:
        return "c"

    join = lib.JoinNode(name="all3")

    def end_one(node_input: dict) -> str:
        return "one:" + ",".join(sorted(node_input))

    def end_two(node_input: dict) -> str:
        return "two"

    wf = lib.Workflow(name="joins", edges=[(lib.START, (a, b, c), join, (end_one, end_two))])
    return await drive(lib, wf, ["go"], resumable=resumable)


@scenario
async def nested_workflow_asking_a_person(lib: Lib, resumable: bool):
    async def inner_ask(node_input: str):
        yield lib.RequestInput(interrupt_id="inner-q", message="Inner?")

    def inner_after(node_input: dict) -> str:
        return f"inner got {node_input}"

    inner = lib.Workflow(name="inner", edges=[(lib.START, inner_ask, inner_after)])

    def outer_after(node_input: str) -> str:
        return f"outer got {node_input}"

    outer = lib.Workflow(name="outer", edges=[(lib.START, inner, outer_after)])
    return await drive(lib, outer, ["go", {"inner-q": {"v": 1}}], resumable=resumable)


@scenario
async def agent_node_calling_a_tool(lib: Lib, resumable: bool):
    from google.genai import types

    def lookup(city: str) -> dict:
        """Look up a city."""
        return {"city": city, "population": 5}

    class ToolThenText(lib.BaseLlm):
        async def generate_content_async(self, llm_request, stream: bool = False):
            last = llm_request.contents[-1].parts[0]
            if last.function_response is None:
                part = types.Part(function_call=types.FunctionCall(name="lookup", args={"city": "Oslo"}))
            else:
                part = types.Part(text=f"Oslo has {last.function_response.response['population']}")
            yield lib.LlmResponse(content=types.Content(role="model", parts=[part]))

    agent = lib.LlmAgent(name="researcher", model=ToolThenText(model="tt"), tools=[lookup])

    def done(node_input) -> str:
        return f"done: {node_input}"

    wf = lib.Workflow(name="research", edges=[(lib.START, agent, done)])
    return await drive(lib, wf, ["Oslo?"], resumable=resumable)


@scenario
async def agent_node_asking_for_a_confirmation(lib: Lib, resumable: bool):
    from google.genai import types

    tools = importlib.import_module(f"{lib.root}.tools")
    paid = []

    def pay(amount: int) -> dict:
        """Pay an amount."""
        paid.append(amount)
        return {"paid": amount}

    class PayThenText(lib.BaseLlm):
        async def generate_content_async(self, llm_request, stream: bool = False):
            last = llm_request.contents[-1].parts[0]
            if last.function_response is None:
                part = types.Part(function_call=types.FunctionCall(name="pay", args={"amount": 500}))
            else:
                part = types.Part(text=f"result {last.function_response.response}")
            yield lib.LlmResponse(content=types.Content(role="model", parts=[part]))

    agent = lib.LlmAgent(name="payer", model=PayThenText(model="p"),
                         tools=[tools.FunctionTool(pay, require_confirmation=True)])

    def receipt(node_input) -> str:
        return f"receipt: {node_input}"

    wf = lib.Workflow(name="paying", edges=[(lib.START, agent, receipt)])
    result = await drive(lib, wf, ["pay 500", {"*": {"confirmed": True}}], resumable=resumable)
    result["paid"] = paid
    return result


@scenario
async def input_and_output_schemas(lib: Lib, resumable: bool):
    from pydantic import BaseModel

    class Order(BaseModel):
        item: str
        quantity: int = 1

    def parse(node_input: str) -> dict:
        return {"item": node_input, "quantity": "3"}

    class Echo(lib.Node):
        async def run_node_impl(self, *, ctx, node_input):
            yield node_input

    class Bad(lib.Node):
        async def run_node_impl(self, *, ctx, node_input):
            yield {"quantity": "many"}

    checked = Echo(name="checked", input_schema=Order, output_schema=Order)
    strict = Bad(name="strict", output_schema=Order)
    ok = lib.Workflow(name="schemas", edges=[(lib.START, parse, checked)])
    failing = lib.Workflow(name="schemas_bad", edges=[(lib.START, strict)])
    first = await drive(lib, ok, ["tea"], resumable=resumable)
    second = await drive(lib, failing, ["tea"], resumable=resumable)
    for event in second["turns"][0]:  # pydantic's message names its own version's docs URL
        for key in ("errorMessage", "message"):
            if key in event:
                event[key] = event[key].split("\n")[0]
    return {"ok": first, "bad": second}


@scenario
async def review_loop_reusing_its_interrupt_id(lib: Lib, resumable: bool):
    def write(node_input) -> str:
        return "draft" if not isinstance(node_input, dict) else f"draft after {node_input['note']}"

    async def review(node_input: str):
        yield lib.RequestInput(interrupt_id="review", message=f"Approve {node_input}?")

    def decide(node_input: dict):
        return lib.Event(output=node_input, route="ok" if node_input.get("ok") else "again")

    def publish(node_input: dict) -> str:
        return "published"

    wf = lib.Workflow(name="reviewing", edges=[(lib.START, write, review, decide),
                                               (decide, {"ok": publish, "again": write})])
    return await drive(lib, wf, ["go", {"review": {"ok": False, "note": "n1"}}, {"review": {"ok": True}}],
                       resumable=resumable)


@scenario
async def agent_node_run_again_after_a_pause(lib: Lib, resumable: bool):
    model = make_model(lib, ["first draft", "second draft"])
    writer = lib.LlmAgent(name="writer", model=model, instruction="Write.")

    async def review(node_input: str):
        yield lib.RequestInput(interrupt_id="r", message=f"OK? {node_input}")

    def decide(node_input: dict):
        return lib.Event(output="please improve", route="ok" if node_input.get("ok") else "again")

    def done(node_input) -> str:
        return "done"

    wf = lib.Workflow(name="writing", edges=[(lib.START, writer, review, decide),
                                             (decide, {"ok": done, "again": writer})])
    result = await drive(lib, wf, ["topic", {"r": {"ok": False}}, {"r": {"ok": True}}], resumable=resumable)
    result["model_saw"] = model.seen
    return result


@scenario
async def wait_for_output_until_triggered_twice(lib: Lib, resumable: bool):
    class Collector(lib.Node):
        async def run_node_impl(self, *, ctx, node_input):
            seen = ctx.state.get("seen", 0) + 1
            ctx.state["seen"] = seen
            if seen == 2:
                yield f"collected after {seen}"

    def left(node_input):
        return "l"

    async def right(node_input):
        await asyncio.sleep(0.01)
        return "r"

    def after(node_input):
        return f"after {node_input}"

    collector = Collector(name="collector", wait_for_output=True)
    wf = lib.Workflow(name="collecting", edges=[(lib.START, (left, right), collector, after)])
    return await drive(lib, wf, ["go"], resumable=resumable)


@scenario
async def graph_errors(lib: Lib, resumable: bool):
    def one(node_input):
        return 1

    def other(node_input):
        return 2

    other.__name__ = "one"
    errors = []
    for edges in ([(lib.START, one, other)], [(lib.START, one), (other, one)]):
        try:
            lib.Workflow(name="bad", edges=edges)
            errors.append(None)
        except Exception as exc:  # noqa: BLE001 - the error is compared
            errors.append([type(exc).__name__, str(exc).splitlines()[-1][:200]])
    return {"errors": errors}


async def run_all(root: str, names: list[str] | None = None, modes: tuple = (False, True)) -> dict[str, Any]:
    lib = Lib(root)
    results = {}
    for name, function in SCENARIOS.items():
        if names and name not in names:
            continue
        for resumable in modes:
            key = name + {False: "", True: "/resumable", "durable": "/durable"}[resumable]
            try:
                results[key] = await function(lib, resumable)
            except Exception as exc:  # noqa: BLE001 - a scenario that cannot even be set up is compared too
                results[key] = {"setup_raised": type(exc).__name__, "message": str(exc)}
    return results


if __name__ == "__main__":
    import warnings

    warnings.simplefilter("ignore")
    print(json.dumps(asyncio.run(run_all(sys.argv[1], sys.argv[2:] or None)), indent=1, sort_keys=True))
