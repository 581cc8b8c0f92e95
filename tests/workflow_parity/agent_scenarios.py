"""Agent scenarios (Sequential, Loop, transfer, task mode) run the same way on google-adk 2.13 and on agentq.

Like ``scenarios.py``, this file imports neither library at module level: ``run_all(root)`` takes the package
root (``"google.adk"`` in bench/.adk-venv, ``"runtime"`` in agentq) and the very same code drives both. Run as a
script in the reference virtualenv it prints ADK's normalised results as JSON
(``test_agent_parity.py`` compares them with agentq's).
"""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
from typing import Any

try:
    from .scenarios import normalise
except ImportError:  # run as a script in the reference virtualenv, beside scenarios.py
    from scenarios import normalise  # type: ignore[no-redef]

SCENARIOS: dict[str, Any] = {}


def scenario(function):
    SCENARIOS[function.__name__] = function
    return function


class Lib:
    """The names an agent scenario uses, from one library."""

    def __init__(self, root: str):
        self.root = root
        agents = importlib.import_module(f"{root}.agents")
        self.LlmAgent, self.SequentialAgent, self.LoopAgent = agents.LlmAgent, agents.SequentialAgent, agents.LoopAgent
        self.ParallelAgent = agents.ParallelAgent
        self.InMemoryRunner = importlib.import_module(f"{root}.runners").InMemoryRunner
        apps = importlib.import_module(f"{root}.apps")
        self.App, self.ResumabilityConfig = apps.App, apps.ResumabilityConfig
        models = importlib.import_module(f"{root}.models")
        self.BaseLlm, self.LlmResponse = models.BaseLlm, models.LlmResponse
        self.UiWidget = importlib.import_module(f"{root}.events.ui_widget").UiWidget


def make_model(lib: Lib, replies: list[Any], seen: list | None = None):
    """A BaseLlm (written against the shared API) answering ``replies`` in turn: a text, or ``(name, args)`` for
    a function call. ``seen`` gets the tool names each request declared, in order."""
    from google.genai import types

    class Replies(lib.BaseLlm):
        texts: list[Any]

        async def generate_content_async(self, llm_request, stream: bool = False):
            if seen is not None:
                seen.append([d.name for tool in (llm_request.config.tools or [])
                             for d in (tool.function_declarations or [])])
            reply = self.texts.pop(0)
            if isinstance(reply, tuple):
                part = types.Part(function_call=types.FunctionCall(name=reply[0], args=reply[1]))
            else:
                part = types.Part(text=reply)
            yield lib.LlmResponse(content=types.Content(role="model", parts=[part]))

    return Replies(model="replies", texts=list(replies))


async def drive(lib: Lib, root, turns: list[Any], *, resumable: bool | str = False) -> dict[str, Any]:
    """Run ``root`` for each turn; the normalised events of every turn, the final state and each committed
    event's ``nodeInfo.path`` (None where the event has no nodeInfo; google-adk's always has one).

    A turn is a text, or a function of the session's committed events returning the message (a person's answer
    to a call the run left pending).

    ``resumable="durable"`` (agentq only) runs as agentq's workers do: a runner with a tool journal."""
    from google.genai import types

    if resumable == "durable":
        journal = importlib.import_module(f"{lib.root}.tools.tool_journal").InMemoryToolJournal()
        runner = lib.InMemoryRunner(agent=root, app_name="parity", tool_journal=journal)
    else:
        app = lib.App(name="parity", root_agent=root,
                      resumability_config=lib.ResumabilityConfig(is_resumable=True) if resumable else None)
        runner = lib.InMemoryRunner(app=app)
    session = await runner.session_service.create_session(app_name="parity", user_id="u")
    ids: dict[str, str] = {}
    out: dict[str, Any] = {"turns": []}
    for turn in turns:
        if isinstance(turn, str):
            message = types.Content(role="user", parts=[types.Part(text=turn)])
        else:
            stored = await runner.session_service.get_session(app_name="parity", user_id="u", session_id=session.id)
            message = turn(stored.events)
        events = []
        try:
            async for event in runner.run_async(user_id="u", session_id=session.id, new_message=message):
                events.append(normalise(event.model_dump(mode="json", by_alias=True, exclude_none=True), ids))
        except Exception as exc:  # noqa: BLE001 - the error is part of what is compared
            events.append({"raised": type(exc).__name__, "message": str(exc)})
        out["turns"].append(events)
    session = await runner.session_service.get_session(app_name="parity", user_id="u", session_id=session.id)
    out["committed"] = len(session.events)
    out["state"] = dict(session.state)
    out["paths"] = [event.node_info.path if event.node_info is not None else None for event in session.events]
    return out


def confirm_pending(events) -> Any:
    """A person's message confirming the last ``adk_request_confirmation`` call among ``events``."""
    from google.genai import types

    call = [call for event in events for call in event.get_function_calls()
            if call.name == "adk_request_confirmation"][-1]
    return types.Content(role="user", parts=[types.Part(function_response=types.FunctionResponse(
        id=call.id, name=call.name, response={"confirmed": True}))])


# --- scenarios -------------------------------------------------------------------------------------------


def sequence_of_two_tree(lib: Lib):
    """A SequentialAgent of two LlmAgents, each answering one text (also run on agentq's workers:
    tests/workflow_parity/worker_agent_apps.py)."""
    first = lib.LlmAgent(name="first", model=make_model(lib, ["one"]), output_key="a")
    second = lib.LlmAgent(name="second", model=make_model(lib, ["two"]), output_key="b")
    return lib.SequentialAgent(name="seq", sub_agents=[first, second])


def loop_of_two_tree(lib: Lib):
    """A LoopAgent of two LlmAgents for two iterations (also run on agentq's workers)."""
    first = lib.LlmAgent(name="first", model=make_model(lib, ["one", "three"]))
    second = lib.LlmAgent(name="second", model=make_model(lib, ["two", "four"]))
    return lib.LoopAgent(name="loop", sub_agents=[first, second], max_iterations=2)


@scenario
async def sequence_of_two(lib: Lib, resumable):
    return await drive(lib, sequence_of_two_tree(lib), ["go"], resumable=resumable)


@scenario
async def loop_of_two_for_two_iterations(lib: Lib, resumable):
    return await drive(lib, loop_of_two_tree(lib), ["go"], resumable=resumable)


@scenario
async def loop_left_by_exit_loop(lib: Lib, resumable):
    exit_loop = importlib.import_module(f"{lib.root}.tools").exit_loop
    worker = lib.LlmAgent(name="worker", model=make_model(lib, ["draft"]))
    critic = lib.LlmAgent(name="critic", model=make_model(lib, [("exit_loop", {}), "done"]), tools=[exit_loop])
    loop = lib.LoopAgent(name="loop", sub_agents=[worker, critic], max_iterations=5)
    return await drive(lib, loop, ["go"], resumable=resumable)


@scenario
async def sequence_inside_a_loop(lib: Lib, resumable):
    inner = lib.SequentialAgent(name="inner", sub_agents=[
        lib.LlmAgent(name="a", model=make_model(lib, ["a1", "a2"])),
        lib.LlmAgent(name="b", model=make_model(lib, ["b1", "b2"]))])
    loop = lib.LoopAgent(name="loop", sub_agents=[inner], max_iterations=2)
    return await drive(lib, loop, ["go"], resumable=resumable)


@scenario
async def parallel_of_two_in_a_sequence(lib: Lib, resumable):
    both = lib.ParallelAgent(name="both", sub_agents=[
        lib.LlmAgent(name="left", model=make_model(lib, ["L"])),
        lib.LlmAgent(name="right", model=make_model(lib, ["R"]))])
    after = lib.LlmAgent(name="after", model=make_model(lib, ["done"]))
    return await drive(lib, lib.SequentialAgent(name="seq", sub_agents=[both, after]), ["go"], resumable=resumable)


@scenario
async def tool_declarations_of_a_transferring_agent(lib: Lib, resumable):
    def lookup(city: str) -> dict:
        """Look a city up."""
        return {"city": city}

    seen: list = []
    helper = lib.LlmAgent(name="helper", description="Helps.", model=make_model(lib, ["helped"]))
    root = lib.LlmAgent(name="root", model=make_model(lib, [("transfer_to_agent", {"agent_name": "helper"})], seen),
                        tools=[lookup], sub_agents=[helper])
    result = await drive(lib, root, ["go"], resumable=resumable)
    return {**result, "declared": seen}


def task_tree(lib: Lib):
    """A coordinator delegating to a task agent that finishes at once (also run on agentq's workers)."""
    task = lib.LlmAgent(name="booker", description="Books flights.", mode="task",
                        model=make_model(lib, [("finish_task", {"result": "booked"})]))
    return lib.LlmAgent(name="coord", sub_agents=[task],
                        model=make_model(lib, [("booker", {"request": "book Paris"}), "Booked."]))


@scenario
async def a_task_finishes_with_its_output_on_the_finish_task_response(lib: Lib, resumable):
    return await drive(lib, task_tree(lib), ["Paris"], resumable=resumable)


@scenario
async def a_tool_rendering_one_widget_id_twice(lib: Lib, resumable):
    def show(tool_context) -> dict:
        """Show the chart."""
        tool_context.render_ui_widget(lib.UiWidget(id="chart", provider="mcp", payload={"n": 1}))
        try:
            tool_context.render_ui_widget(lib.UiWidget(id="chart", provider="mcp", payload={"n": 2}))
        except ValueError as exc:
            return {"refused": str(exc)}
        return {"refused": None}

    root = lib.LlmAgent(name="root", tools=[show], model=make_model(lib, [("show", {}), "shown"]))
    return await drive(lib, root, ["go"], resumable=resumable)


@scenario
async def a_tool_rendering_the_widget_id_its_before_tool_callback_rendered(lib: Lib, resumable):
    def show(tool_context) -> dict:
        """Show the chart."""
        try:
            tool_context.render_ui_widget(lib.UiWidget(id="chart", provider="mcp", payload={"by": "tool"}))
        except ValueError as exc:
            return {"refused": str(exc)}
        return {"refused": None}

    def before_tool(tool, args, tool_context):
        tool_context.render_ui_widget(lib.UiWidget(id="chart", provider="mcp", payload={"by": "callback"}))

    root = lib.LlmAgent(name="root", tools=[show], before_tool_callback=before_tool,
                        model=make_model(lib, [("show", {}), "shown"]))
    return await drive(lib, root, ["go"], resumable=resumable)


@scenario
async def two_calls_rendering_one_widget_id(lib: Lib, resumable):
    def show(n: int, tool_context) -> dict:
        """Show the chart."""
        try:
            tool_context.render_ui_widget(lib.UiWidget(id="chart", provider="mcp", payload={"n": n}))
        except ValueError as exc:
            return {"refused": str(exc)}
        return {"refused": None}

    from google.genai import types

    class TwoCalls(lib.BaseLlm):
        turns: int = 0

        async def generate_content_async(self, llm_request, stream: bool = False):
            self.turns += 1
            parts = ([types.Part(function_call=types.FunctionCall(name="show", args={"n": n})) for n in (1, 2)]
                     if self.turns == 1 else [types.Part(text="shown")])
            yield lib.LlmResponse(content=types.Content(role="model", parts=parts))

    root = lib.LlmAgent(name="root", tools=[show], model=TwoCalls(model="two"))
    return await drive(lib, root, ["go"], resumable=resumable)


@scenario
async def a_transfer_there_and_back_then_a_second_turn(lib: Lib, resumable):
    """The paths of a transfer: the root's run, the sub-agent's run under it, the root's second run."""
    billing = lib.LlmAgent(name="billing", description="Bills.", model=make_model(
        lib, [("transfer_to_agent", {"agent_name": "desk"}), ("transfer_to_agent", {"agent_name": "desk"})]))
    desk = lib.LlmAgent(name="desk", sub_agents=[billing], model=make_model(lib, [
        ("transfer_to_agent", {"agent_name": "billing"}), "back", ("transfer_to_agent", {"agent_name": "billing"}),
        "back again"]))
    return await drive(lib, desk, ["invoice?", "again?"], resumable=resumable)


@scenario
async def a_transfer_into_a_sequence(lib: Lib, resumable):
    """A transfer to a SequentialAgent sub-agent: the paths of the sequence's own agents."""
    inner = lib.SequentialAgent(name="steps", description="Does steps.", sub_agents=[
        lib.LlmAgent(name="one", model=make_model(lib, ["1"])), lib.LlmAgent(name="two", model=make_model(lib, ["2"]))])
    desk = lib.LlmAgent(name="desk", sub_agents=[inner],
                        model=make_model(lib, [("transfer_to_agent", {"agent_name": "steps"})]))
    return await drive(lib, desk, ["steps?"], resumable=resumable)


@scenario
async def a_tool_held_for_confirmation_then_confirmed(lib: Lib, resumable):
    """google-adk commits the adk_request_confirmation call before the held tool's 'requires confirmation'
    response; the confirmed run then answers the call and runs the tool."""
    FunctionTool = importlib.import_module(f"{lib.root}.tools").FunctionTool

    def send_money(amount: int) -> dict:
        """Send money."""
        return {"sent": amount}

    root = lib.LlmAgent(name="payments", tools=[FunctionTool(send_money, require_confirmation=True)],
                        model=make_model(lib, [("send_money", {"amount": 5}), "Sent."]))
    return await drive(lib, root, ["send 5", confirm_pending], resumable=resumable)


@scenario
async def an_agent_called_as_a_tool(lib: Lib, resumable):
    AgentTool = importlib.import_module(f"{lib.root}.tools.agent_tool").AgentTool
    inner = lib.LlmAgent(name="translator", description="Translates.", model=make_model(lib, ["Bonjour"]))
    root = lib.LlmAgent(name="polyglot", tools=[AgentTool(agent=inner)],
                        model=make_model(lib, [("translator", {"request": "hello"}), "done"]))
    return await drive(lib, root, ["hello in French"], resumable=resumable)


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
