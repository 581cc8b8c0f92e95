"""runtime.conformance.ConformanceReplay on the in-memory runner: the recorded answers are used, a run that
asks something else is stopped with the difference, and recordings outside the allowed folder are never read."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from google.genai import types

from runtime.agents import LlmAgent
from runtime.conformance import CONFIG_KEY, ConformanceReplay
from runtime.models import ScriptedLlm, call
from runtime.runners import InMemoryRunner


def get_weather(city: str) -> dict:
    """The forecast for a city."""
    return {"city": city, "forecast": "rain"}  # the recording says sunny: the recorded answer must win


def _recordings(case: Path, city: str, *, with_answer: bool = True) -> None:
    request = {"model": "scripted", "contents": [{"role": "user", "parts": [{"text": "weather?"}]}],
               "config": {"system_instruction": 'Be brief.\n\nYou are an agent. Your internal name is "w".',
                          "tools": [{"function_declarations": [{
                              "name": "get_weather", "description": "The forecast for a city.",
                              "parameters_json_schema": {"type": "object", "properties": {
                                  "city": {"type": "string", "title": "City"}}, "required": ["city"]}}]}]}}
    recordings = [
        {"user_message_index": 0, "agent_name": "w", "llm_recording": {
            "llm_request": request,
            "llm_responses": [{"content": {"role": "model", "parts": [
                {"function_call": {"name": "get_weather", "args": {"city": city}}}]}}]}},
        {"user_message_index": 0, "agent_name": "w", "tool_recording": {
            "tool_call": {"name": "get_weather", "args": {"city": city}},
            "tool_response": {"name": "get_weather", "response": {"city": city, "forecast": "sunny"}}}},
    ]
    if with_answer:  # the model's second call sees the call and the recorded answer, and says the forecast
        contents = [*request["contents"],
                    {"role": "model", "parts": [{"function_call": {"name": "get_weather", "args": {"city": city}}}]},
                    {"role": "user", "parts": [{"function_response": {
                        "name": "get_weather", "response": {"city": city, "forecast": "sunny"}}}]}]
        recordings.append({"user_message_index": 0, "agent_name": "w", "llm_recording": {
            "llm_request": {**request, "contents": contents},
            "llm_responses": [{"content": {"role": "model", "parts": [{"text": f"Sunny in {city}."}]}}]}})
    case.mkdir(parents=True, exist_ok=True)
    (case / "generated-recordings.yaml").write_text(yaml.safe_dump({"recordings": recordings}))


async def _run(root: Path, case: Path, agent_says: list) -> list:
    agent = LlmAgent(name="w", model=ScriptedLlm(turns=agent_says), instruction="Be brief.", tools=[get_weather])
    runner = InMemoryRunner(agent=agent, app_name="a", plugins=[ConformanceReplay(root)])
    session = await runner.session_service.create_session(app_name="a", user_id="u")
    config = {"dir": str(case), "user_message_index": 0, "streaming_mode": "none"}
    events = []
    async for event in runner.run_async(user_id="u", session_id=session.id, state_delta={CONFIG_KEY: config},
                                        new_message=types.Content(role="user", parts=[types.Part(text="weather?")])):
        events.append(event)
    return events


async def test_model_and_tool_calls_are_answered_from_the_recordings(tmp_path):
    _recordings(tmp_path / "cases" / "c", "Paris")
    # the agent's own model would call for Oslo and never finish; the recording calls for Paris
    events = await _run(tmp_path / "cases", tmp_path / "cases" / "c", [call("get_weather", city="Oslo")])
    answers = [r.response for e in events for r in e.get_function_responses()]
    assert [c.args for e in events for c in e.get_function_calls()] == [{"city": "Paris"}]
    assert answers == [{"city": "Paris", "forecast": "sunny"}]
    assert events[-1].content.parts[0].text == "Sunny in Paris."


async def test_a_model_call_the_recordings_do_not_have_stops_the_run_naming_it(tmp_path):
    _recordings(tmp_path / "cases" / "c", "Paris", with_answer=False)
    # after the tool answer the agent calls its model a second time: the recordings have one call
    with pytest.raises(Exception, match="made model call #2 for user message 0; the recordings have 1"):
        await _run(tmp_path / "cases", tmp_path / "cases" / "c", [])


async def test_recordings_outside_the_cases_folder_are_never_read(tmp_path):
    _recordings(tmp_path / "elsewhere", "Paris")
    with pytest.raises(Exception, match="not under the conformance cases folder"):
        await _run(tmp_path / "cases", tmp_path / "elsewhere", [])


async def test_an_agent_callback_that_answers_comes_before_the_replay_and_takes_no_recorded_call(tmp_path):
    """As google-adk replays at the model: the agent's before-model callback answers the second model call (the
    recordings hold only the first), so that call never reaches the recordings."""
    from runtime.models import LlmResponse

    _recordings(tmp_path / "cases" / "c", "Paris", with_answer=False)

    def answer_after_the_tool(callback_context, llm_request):
        if llm_request.contents[-1].parts[0].function_response is not None:
            return LlmResponse(content=types.Content(role="model", parts=[types.Part(text="From the callback.")]))
        return None

    agent = LlmAgent(name="w", model=ScriptedLlm(turns=[]), instruction="Be brief.", tools=[get_weather],
                     before_model_callback=answer_after_the_tool)
    runner = InMemoryRunner(agent=agent, app_name="a", plugins=[ConformanceReplay(tmp_path / "cases")])
    session = await runner.session_service.create_session(app_name="a", user_id="u")
    config = {"dir": str(tmp_path / "cases" / "c"), "user_message_index": 0, "streaming_mode": "none"}
    events = [event async for event in runner.run_async(
        user_id="u", session_id=session.id, state_delta={CONFIG_KEY: config},
        new_message=types.Content(role="user", parts=[types.Part(text="weather?")]))]
    assert [c.args for e in events for c in e.get_function_calls()] == [{"city": "Paris"}]
    assert events[-1].content.parts[0].text == "From the callback."
