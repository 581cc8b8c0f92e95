"""The Runner loop: user event, commit before resume, partial events, message checks, routing."""

from __future__ import annotations

import pytest
from google.genai import types

from runtime.agents import LlmAgent, RunConfig, StreamingMode
from runtime.errors import (
    FunctionCallNotFoundError,
    InvalidMessageError,
    InvalidStateValueError,
    InvocationNotFoundError,
    SessionNotFoundError,
)
from runtime.models import ScriptedLlm, call
from runtime.runners import InMemoryRunner

from .helpers import USER, function_response, new_session, run, stored, summaries, user_text


def get_weather(city: str) -> dict:
    """Returns the weather for a city."""
    return {"city": city, "forecast": "sunny"}


def weather_runner(*turns) -> InMemoryRunner:
    model = ScriptedLlm(turns=list(turns) or [call("get_weather", city="Paris"), "It is sunny in Paris."])
    return InMemoryRunner(agent=LlmAgent(name="weather", model=model, tools=[get_weather]), app_name="app")


async def test_tool_round_trip_yields_call_response_and_final_text():
    runner = weather_runner()
    session = await new_session(runner)
    events = await run(runner, session, user_text("Weather in Paris?"))
    assert summaries(events) == [
        ("weather", [("call", "get_weather", {"city": "Paris"})]),
        ("weather", [("response", "get_weather", {"city": "Paris", "forecast": "sunny"})]),
        ("weather", ["It is sunny in Paris."]),
    ]
    assert [e.is_final_response() for e in events] == [False, False, True]
    assert events[1].content.role == "user"
    assert events[1].get_function_responses()[0].id == events[0].get_function_calls()[0].id
    assert len({e.invocation_id for e in events}) == 1


async def test_user_message_is_committed_first_with_the_runs_state_delta():
    runner = weather_runner("Hello.")
    session = await new_session(runner)
    events = await run(runner, session, user_text("hi"), state_delta={"mood": "good"})
    history = await stored(runner, session)
    assert [(e.author, e.actions.state_delta) for e in history] == [("user", {"mood": "good"}), ("weather", {})]
    assert history[0].invocation_id == events[0].invocation_id
    fresh = await runner.session_service.get_session(app_name="app", user_id=USER, session_id=session.id)
    assert fresh.state == {"mood": "good"}


async def test_each_event_is_committed_before_the_caller_sees_it():
    runner = weather_runner()
    session = await new_session(runner)
    seen = []
    async for event in runner.run_async(user_id=USER, session_id=session.id, new_message=user_text("go")):
        history = await stored(runner, session)
        seen.append(history[-1].id == event.id)
    assert seen == [True, True, True]


async def test_streaming_forwards_partial_chunks_and_commits_one_aggregated_event():
    runner = weather_runner("It is sunny today.")
    session = await new_session(runner)
    events = await run(runner, session, user_text("hi"), run_config=RunConfig(streaming_mode=StreamingMode.SSE))
    assert [(e.partial, e.text()) for e in events] == [
        (True, "It "), (True, "is "), (True, "sunny "), (True, "today."), (None, "It is sunny today.")
    ]
    history = await stored(runner, session)
    assert summaries(history) == [("user", ["hi"]), ("weather", ["It is sunny today."])]


async def test_streaming_calls_the_model_with_stream_true():
    seen = []

    def responder(request):
        return "ok"

    class Recording(ScriptedLlm):
        async def generate_content_async(self, llm_request, stream=False):
            seen.append(stream)
            async for response in super().generate_content_async(llm_request, stream):
                yield response

    runner = InMemoryRunner(agent=LlmAgent(name="a", model=Recording(responder=responder)), app_name="app")
    session = await new_session(runner)
    await run(runner, session, user_text("x"), run_config=RunConfig(streaming_mode=StreamingMode.SSE))
    await run(runner, session, user_text("y"))
    assert seen == [True, False]


async def test_message_without_parts_is_refused():
    runner = weather_runner()
    session = await new_session(runner)
    with pytest.raises(InvalidMessageError, match="no parts"):
        await run(runner, session, types.Content(role="user", parts=[]))
    assert await stored(runner, session) == []


async def test_message_carrying_a_function_call_is_refused():
    runner = weather_runner()
    session = await new_session(runner)
    message = types.Content(role="user", parts=[types.Part(function_call=types.FunctionCall(name="x", args={}))])
    with pytest.raises(InvalidMessageError, match="function call"):
        await run(runner, session, message)


async def test_function_response_to_an_unknown_call_names_the_ids():
    runner = weather_runner()
    session = await new_session(runner)
    await run(runner, session, user_text("go"))
    with pytest.raises(FunctionCallNotFoundError, match="'nope-1'"):
        await run(runner, session, function_response("nope-1", "get_weather", {"x": 1}))


async def test_unknown_session_is_an_error_naming_it():
    runner = weather_runner()
    with pytest.raises(SessionNotFoundError, match="'missing'"):
        await run(runner, type("S", (), {"id": "missing"})(), user_text("hi"))


async def test_tool_writing_a_non_serialisable_state_value_fails_naming_the_key():
    def bad(tool_context) -> str:
        """Writes an object."""
        tool_context.state["obj"] = object()
        return "done"

    runner = InMemoryRunner(
        agent=LlmAgent(name="a", model=ScriptedLlm(turns=[call("bad"), "ok"]), tools=[bad]), app_name="app"
    )
    session = await new_session(runner)
    with pytest.raises(InvalidStateValueError, match="'obj'"):
        await run(runner, session, user_text("go"))


def test_sync_run_yields_the_same_events_as_run_async():
    runner = weather_runner()
    import asyncio

    session = asyncio.run(new_session(runner))
    events = list(runner.run(user_id=USER, session_id=session.id, new_message=user_text("go")))
    assert summaries(events) == [
        ("weather", [("call", "get_weather", {"city": "Paris"})]),
        ("weather", [("response", "get_weather", {"city": "Paris", "forecast": "sunny"})]),
        ("weather", ["It is sunny in Paris."]),
    ]


def test_sync_run_raises_the_runs_error_in_the_callers_thread():
    runner = weather_runner()
    with pytest.raises(SessionNotFoundError):
        list(runner.run(user_id=USER, session_id="nope", new_message=user_text("go")))


async def test_a_model_error_response_becomes_a_final_error_event():
    runner = InMemoryRunner(agent=LlmAgent(name="a", model=ScriptedLlm(turns=[])), app_name="app")
    session = await new_session(runner)
    events = await run(runner, session, user_text("go"))
    assert [(e.error_code, e.is_final_response()) for e in events] == [("SCRIPT_EXHAUSTED", True)]


async def test_a_second_turn_continues_the_conversation_with_history():
    seen = []

    def responder(request):
        seen.append([c.parts[0].text for c in request.contents])
        return f"answer {len(seen)}"

    runner = InMemoryRunner(agent=LlmAgent(name="a", model=ScriptedLlm(responder=responder)), app_name="app")
    session = await new_session(runner)
    first = await run(runner, session, user_text("one"))
    second = await run(runner, session, user_text("two"))
    assert seen == [["one"], ["one", "answer 1", "two"]]
    assert first[0].invocation_id != second[0].invocation_id


async def test_resuming_an_invocation_without_committed_events_is_refused():
    runner = weather_runner()
    session = await new_session(runner)
    with pytest.raises(InvocationNotFoundError, match="'e-unknown'"):
        await run(runner, session, invocation_id="e-unknown")


async def test_a_new_message_may_start_an_invocation_under_a_given_id():
    runner = weather_runner()
    session = await new_session(runner)
    events = await run(runner, session, user_text("go"), invocation_id="e-chosen")
    assert {e.invocation_id for e in await stored(runner, session)} == {"e-chosen"}
    assert len(events) == 3
