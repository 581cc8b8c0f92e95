"""Apps the Redis cost benchmark (bench/rediscost_bench.py) runs, importable as a top-level module so that
the benchmark can run the workers of another checkout (``--tree``) on the same apps.

``weather`` is bench/WORKLOAD.md's one-tool round trip. The others differ from it in one thing, so that a
difference in Redis cost divided by the difference in what was done is the cost of that one thing: ``steps`` commits more events (more tool rounds),
``chatter`` answers a text of ``CHATTER_WORDS`` words, streamed one word per partial chunk when the run asks for
SSE streaming and in one piece otherwise.
"""

from __future__ import annotations

import os

from google.genai import types

from runtime.agents import LlmAgent
from runtime.apps import App
from runtime.models import LlmRequest, LlmResponse, ScriptedLlm

STEPS = int(os.environ.get("BENCH_REDISCOST_STEPS", "6"))
"""Tool rounds of the ``steps`` app: it commits 2 x STEPS events (user message, STEPS - 1 call/response pairs,
the final text) against the weather app's 4."""
CHATTER_WORDS = 20

def get_weather(city: str) -> dict:
    """Returns the current weather for a city."""
    return {"city": city, "forecast": "sunny", "temperature_c": 21}


_USAGE = types.GenerateContentResponseUsageMetadata(prompt_token_count=10, candidates_token_count=5,
                                                    total_token_count=15)


def _answer(part: types.Part) -> LlmResponse:
    return LlmResponse(content=types.Content(role="model", parts=[part]), usage_metadata=_USAGE)


def _weather(request: LlmRequest) -> LlmResponse:
    if any(part.function_response for part in request.contents[-1].parts or ()):
        return _answer(types.Part(text="It is sunny in Paris, 21 C."))
    return _answer(types.Part(function_call=types.FunctionCall(name="get_weather", args={"city": "Paris"})))


weather = App(name="weather", root_agent=LlmAgent(
    name="weather_agent", model=ScriptedLlm(responder=_weather),
    instruction="Answer weather questions with the get_weather tool.", tools=[get_weather],
))
"""bench/WORKLOAD.md's one-tool round trip (as bench.worker_apps:weather): 4 committed events."""


def _steps(request: LlmRequest) -> LlmResponse:
    done = (len(request.contents) - 1) // 2  # the user message, then one (call, response) pair per round
    if done < STEPS - 1:
        return _answer(types.Part(function_call=types.FunctionCall(name="get_weather", args={"city": "Paris"})))
    return _answer(types.Part(text="done"))


steps = App(name="steps", root_agent=LlmAgent(
    name="stepper", model=ScriptedLlm(responder=_steps), tools=[get_weather],
))


def _chatter(request: LlmRequest) -> LlmResponse:
    return _answer(types.Part(text=" ".join(f"word{n}" for n in range(CHATTER_WORDS))))


chatter = App(name="chatter", root_agent=LlmAgent(name="chatterer", model=ScriptedLlm(responder=_chatter)))
