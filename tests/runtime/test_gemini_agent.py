"""An LlmAgent with a tool on Gemini, end to end: runner -> google-genai client -> FakeGemini over HTTP and back."""

from __future__ import annotations

import pytest
from google.genai import types

from runtime.agents import LlmAgent
from runtime.agents.run_config import RunConfig, StreamingMode
from runtime.errors import RetryableModelError
from runtime.models import Gemini
from runtime.runners import InMemoryRunner
from tests.fake_gemini import FakeGemini, conversation_responder, error_reply

TOOL_CALLS: list[str] = []


def get_weather(city: str) -> dict:
    """The weather in a city."""
    TOOL_CALLS.append(city)
    return {"weather": "sunny", "city": city}


@pytest.fixture
def fake(monkeypatch):
    TOOL_CALLS.clear()
    with FakeGemini() as server:
        monkeypatch.setenv("AGENTQ_GEMINI_BASE_URL", server.base_url)
        monkeypatch.setenv("GOOGLE_API_KEY", "test-key")
        yield server


async def run_turn(agent: LlmAgent, text: str, run_config: RunConfig | None = None):
    runner = InMemoryRunner(agent=agent, app_name="weather_app")
    session = await runner.session_service.create_session(app_name="weather_app", user_id="u")
    message = types.Content(role="user", parts=[types.Part(text=text)])
    return [event async for event in runner.run_async(
        user_id="u", session_id=session.id, new_message=message, run_config=run_config)]


def summary(event) -> tuple:
    part = event.content.parts[0] if event.content and event.content.parts else None
    if part is not None and part.function_call:
        return (event.author, "call", part.function_call.name, part.function_call.args)
    if part is not None and part.function_response:
        return (event.author, "response", part.function_response.name, part.function_response.response)
    return (event.author, "text" if not event.error_code else "error", event.partial, part.text if part else
            (event.error_code, event.error_message))


@pytest.mark.parametrize("streaming", [StreamingMode.NONE, StreamingMode.SSE])
async def test_agent_calls_its_tool_through_gemini_and_answers_with_the_result(fake, streaming):
    fake.responder = conversation_responder([("get_weather", {"city": "Paris"}), "It is sunny in Paris."])
    agent = LlmAgent(name="weather", model="gemini-2.5-flash", instruction="You report the weather.",
                     tools=[get_weather])

    events = await run_turn(agent, "Weather in Paris?", RunConfig(streaming_mode=streaming))

    assert [summary(e) for e in events] == [
        ("weather", "call", "get_weather", {"city": "Paris"}),
        ("weather", "response", "get_weather", {"weather": "sunny", "city": "Paris"}),
        *([("weather", "text", True, "It is sunny in Paris.")] if streaming == StreamingMode.SSE else []),
        ("weather", "text", False if streaming == StreamingMode.SSE else None, "It is sunny in Paris."),
    ]
    assert TOOL_CALLS == ["Paris"]
    first, second = fake.requests
    assert first.body["systemInstruction"]["parts"][0]["text"].startswith("You report the weather.")
    assert first.body["tools"] == [{"functionDeclarations": [{
        "name": "get_weather", "description": "The weather in a city.",
        "parameters": {"type": "OBJECT", "properties": {"city": {"type": "STRING"}}, "required": ["city"]},
    }]}]
    # Client-made call ids stay on our side; Gemini sees the call and its answer in order.
    assert second.body["contents"] == [
        {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}]},
        {"role": "user", "parts": [{"functionResponse": {
            "name": "get_weather", "response": {"weather": "sunny", "city": "Paris"}}}]},
    ]


async def test_a_gemini_client_error_becomes_an_error_event_of_the_agent(fake):
    fake.add(error_reply(400, "Function declaration is invalid."))
    agent = LlmAgent(name="weather", model=Gemini(), tools=[get_weather])

    events = await run_turn(agent, "Weather in Paris?")

    assert [summary(e) for e in events] == [
        ("weather", "error", None, ("400", "Function declaration is invalid.")),
    ]
    assert events[-1].is_final_response()


async def test_a_gemini_rate_limit_propagates_out_of_the_runner_for_the_worker_to_retry(fake):
    fake.add(error_reply(429, "Resource has been exhausted."))
    agent = LlmAgent(name="weather", model=Gemini(), tools=[get_weather])

    with pytest.raises(RetryableModelError) as caught:
        await run_turn(agent, "Weather in Paris?")

    assert (caught.value.code, TOOL_CALLS, len(fake.requests)) == ("429", [], 1)
