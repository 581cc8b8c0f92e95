"""FunctionTool: declarations from signatures, argument handling, results, execution."""

from __future__ import annotations

import enum
import threading
from typing import Literal

import pydantic
from google.genai import types

from runtime.agents import LlmAgent
from runtime.models import ScriptedLlm, call
from runtime.runners import InMemoryRunner
from runtime.tools import FunctionTool, ToolContext

from .helpers import new_session, run, summaries, user_text


class Unit(enum.Enum):
    C = "celsius"
    F = "fahrenheit"


class Place(pydantic.BaseModel):
    city: str
    country: str | None = None


def forecast(city: str, days: int, detail: float = 0.5, metric: bool = True, tags: list[str] | None = None,
             extra: dict | None = None, unit: Unit = Unit.C, mode: Literal["short", "long"] = "short",
             tool_context: ToolContext = None, *args, **kwargs) -> dict:
    """Forecast for a city.

    Args:
      city: where.
    """
    return {}


def test_declaration_is_built_from_name_docstring_and_type_hints():
    declaration = FunctionTool(forecast)._get_declaration()
    assert declaration == types.FunctionDeclaration(
        name="forecast",
        description="Forecast for a city.\n\nArgs:\n  city: where.",
        parameters=types.Schema(
            type=types.Type.OBJECT,
            properties={
                "city": types.Schema(type=types.Type.STRING),
                "days": types.Schema(type=types.Type.INTEGER),
                "detail": types.Schema(type=types.Type.NUMBER, default=0.5),
                "metric": types.Schema(type=types.Type.BOOLEAN, default=True),
                "tags": types.Schema(type=types.Type.ARRAY, items=types.Schema(type=types.Type.STRING),
                                     nullable=True),
                "extra": types.Schema(type=types.Type.OBJECT, nullable=True),
                "unit": types.Schema(type=types.Type.STRING, enum=["celsius", "fahrenheit"]),
                "mode": types.Schema(type=types.Type.STRING, enum=["short", "long"], default="short"),
            },
            required=["city", "days"],
        ),
    )


def test_pydantic_model_parameter_becomes_an_object_schema():
    def book(place: Place) -> str:
        """Book."""
        return place.city

    declaration = FunctionTool(book)._get_declaration()
    assert declaration.parameters.properties["place"] == types.Schema(
        type=types.Type.OBJECT,
        properties={"city": types.Schema(type=types.Type.STRING),
                    "country": types.Schema(type=types.Type.STRING, nullable=True)},
        required=["city"],
    )


def test_function_without_parameters_declares_none():
    def ping() -> str:
        """Ping."""
        return "pong"

    assert FunctionTool(ping)._get_declaration() == types.FunctionDeclaration(name="ping", description="Ping.")


def test_declaration_is_built_once_per_tool():
    tool = FunctionTool(forecast)
    assert tool._get_declaration() is tool._get_declaration()


async def _run_tool(tool_func, *calls_and_turns, tools=None):
    agent = LlmAgent(name="a", model=ScriptedLlm(turns=list(calls_and_turns)), tools=tools or [tool_func])
    runner = InMemoryRunner(agent=agent, app_name="app")
    session = await new_session(runner)
    return runner, session, await run(runner, session, user_text("go"))


async def test_missing_mandatory_arguments_are_answered_with_the_exact_error_text():
    def book(city: str, nights: int, note: str = "") -> str:
        """Book a room."""
        return "booked"

    _, _, events = await _run_tool(book, call("book"), "sorry")
    assert events[1].get_function_responses()[0].response == {
        "error": "Invoking `book()` failed as the following mandatory input parameters are not present:\n"
        "city\nnights\nYou could retry calling this tool, but it is IMPORTANT for you to provide all the "
        "mandatory parameters."
    }


async def test_arguments_not_in_the_signature_are_dropped():
    got = {}

    def book(city: str) -> dict:
        """Book."""
        got["city"] = city
        return {"ok": True}

    _, _, events = await _run_tool(book, call("book", city="Rome", stars=5), "done")
    assert got == {"city": "Rome"}
    assert events[1].get_function_responses()[0].response == {"ok": True}


async def test_a_non_dict_result_is_wrapped_as_result():
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    _, _, events = await _run_tool(add, call("add", a=2, b=3), "5")
    assert events[1].get_function_responses()[0].response == {"result": 5}


async def test_a_dict_argument_for_a_pydantic_parameter_is_validated_into_the_model():
    def book(place: Place) -> str:
        """Book."""
        return f"{type(place).__name__}:{place.city}"

    _, _, events = await _run_tool(book, call("book", place={"city": "Oslo"}), "ok")
    assert events[1].get_function_responses()[0].response == {"result": "Place:Oslo"}


async def test_sync_tools_run_off_the_event_loop_thread():
    threads = {}

    def where() -> str:
        """Where am I."""
        threads["tool"] = threading.get_ident()
        return "here"

    threads["loop"] = threading.get_ident()
    await _run_tool(where, call("where"), "ok")
    assert threads["tool"] != threads["loop"]


async def test_async_tools_are_awaited():
    async def fetch(key: str) -> dict:
        """Fetch."""
        return {"key": key}

    _, _, events = await _run_tool(fetch, call("fetch", key="k"), "ok")
    assert events[1].get_function_responses()[0].response == {"key": "k"}


async def test_several_calls_in_one_turn_merge_into_one_response_event_in_call_order():
    import asyncio

    order = []

    async def slow(tool_context: ToolContext) -> str:
        """Slow."""
        await asyncio.sleep(0.05)
        order.append("slow")
        tool_context.state["slow"] = 1
        return "slow done"

    async def fast(tool_context: ToolContext) -> str:
        """Fast."""
        order.append("fast")
        tool_context.state["fast"] = 2
        return "fast done"

    runner, session, events = await _run_tool(None, [call("slow"), call("fast")], "both done", tools=[slow, fast])
    assert order == ["fast", "slow"]  # they ran concurrently
    assert summaries(events) == [
        ("a", [("call", "slow", {}), ("call", "fast", {})]),
        ("a", [("response", "slow", {"result": "slow done"}), ("response", "fast", {"result": "fast done"})]),
        ("a", ["both done"]),
    ]
    assert events[1].content.role == "user"
    assert events[1].actions.state_delta == {"slow": 1, "fast": 2}
    calls = events[0].get_function_calls()
    assert [r.id for r in events[1].get_function_responses()] == [c.id for c in calls]


async def test_calling_an_unknown_tool_answers_the_model_with_the_available_tools():
    def known() -> str:
        """Known."""
        return "x"

    _, _, events = await _run_tool(known, call("unknown_tool"), "oops")
    assert events[1].get_function_responses()[0].response == {
        "error": "Invoking `unknown_tool()` failed as no tool with that name is available. The tools you can "
        "call are: known. You could retry, but it is IMPORTANT that you only call a tool from that list."
    }
    assert events[2].text() == "oops"


async def test_a_crashing_tool_ends_the_invocation_with_a_committed_error_event():
    def boom() -> str:
        """Boom."""
        raise RuntimeError("disk on fire")

    runner, session, events = await _run_tool(boom, call("boom"), "never")
    assert [(e.author, e.error_code, e.error_message, e.is_final_response()) for e in events[1:]] == [
        ("a", "RuntimeError", "disk on fire", True)
    ]
    stored = await runner.session_service.get_session(app_name="app", user_id=session.user_id, session_id=session.id)
    assert [e.error_code for e in stored.events] == [None, None, "RuntimeError"]


async def test_a_crashing_tool_among_parallel_calls_keeps_the_other_answers_before_the_error_event():
    def boom() -> str:
        """Boom."""
        raise RuntimeError("disk on fire")

    def fine() -> str:
        """Fine."""
        return "ok"

    _, _, events = await _run_tool(boom, [call("fine"), call("boom")], "never", tools=[fine, boom])
    assert summaries(events[:2]) == [
        ("a", [("call", "fine", {}), ("call", "boom", {})]),
        ("a", [("response", "fine", {"result": "ok"})]),
    ]
    assert [(e.error_code, e.error_message) for e in events[2:]] == [("RuntimeError", "disk on fire")]


async def test_tool_context_exposes_state_ids_agent_and_artifacts():
    seen = {}

    async def inspect_ctx(tool_context: ToolContext) -> dict:
        """Inspect."""
        seen["call_id"] = tool_context.function_call_id
        seen["invocation_id"] = tool_context.invocation_id
        seen["agent"] = tool_context.agent_name
        seen["color"] = tool_context.state["color"]
        tool_context.state["seen"] = True
        version = await tool_context.save_artifact("notes.txt", types.Part(text="v0"))
        await tool_context.save_artifact("notes.txt", types.Part(text="v1"))
        loaded = await tool_context.load_artifact("notes.txt", version=version)
        return {"files": await tool_context.list_artifacts(), "loaded": loaded.text}

    agent = LlmAgent(name="a", model=ScriptedLlm(turns=[call("inspect_ctx"), "ok"]), tools=[inspect_ctx])
    runner = InMemoryRunner(agent=agent, app_name="app")
    session = await new_session(runner, state={"color": "red"})
    events = await run(runner, session, user_text("go"))
    assert seen == {
        "call_id": events[0].get_function_calls()[0].id,
        "invocation_id": events[0].invocation_id,
        "agent": "a",
        "color": "red",
    }
    assert events[1].get_function_responses()[0].response == {"files": ["notes.txt"], "loaded": "v0"}
    assert events[1].actions.state_delta == {"seen": True}
    assert events[1].actions.artifact_delta == {"notes.txt": 1}


async def test_a_plain_function_in_tools_is_wrapped_as_a_function_tool():
    def hello() -> str:
        """Say hello."""
        return "hi"

    agent = LlmAgent(name="a", model=ScriptedLlm(turns=["x"]), tools=[hello])
    tool = agent.tools_dict()["hello"]
    assert (type(tool).__name__, tool.name, tool.description, tool.idempotent) == (
        "FunctionTool", "hello", "Say hello.", False)


async def test_sync_tools_called_in_one_turn_run_at_the_same_time_in_threads():
    barrier = threading.Barrier(2, timeout=10)  # passes only if both tools are inside it at once

    def left() -> str:
        """Left."""
        barrier.wait()
        return "left"

    def right() -> str:
        """Right."""
        barrier.wait()
        return "right"

    _, _, events = await _run_tool(None, [call("left"), call("right")], "both", tools=[left, right])
    assert [r.response for r in events[1].get_function_responses()] == [{"result": "left"}, {"result": "right"}]
