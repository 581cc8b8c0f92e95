"""Apps the worker benchmark runs in real worker processes (stateless scripted models, as in bench/WORKLOAD.md)."""

from __future__ import annotations

import os

from google.genai import types

from runtime.agents import LlmAgent
from runtime.apps import App
from runtime.models import LlmRequest, LlmResponse, ScriptedLlm
from runtime.tools import LongRunningFunctionTool

_USAGE = types.GenerateContentResponseUsageMetadata(prompt_token_count=10, candidates_token_count=5,
                                                    total_token_count=15)
CAPACITY_STEPS = int(os.environ.get("BENCH_CAPACITY_STEPS", "10"))
CAPACITY_LATENCY = float(os.environ.get("BENCH_CAPACITY_LATENCY", "0.5"))


def get_weather(city: str) -> dict:
    """Returns the current weather for a city."""
    return {"city": city, "forecast": "sunny", "temperature_c": 21}


def _answer(part: types.Part) -> LlmResponse:
    return LlmResponse(content=types.Content(role="model", parts=[part]), usage_metadata=_USAGE)


def _weather(request: LlmRequest) -> LlmResponse:
    last = request.contents[-1]
    if any(part.function_response for part in last.parts or ()):
        return _answer(types.Part(text="It is sunny in Paris, 21 C."))
    return _answer(types.Part(function_call=types.FunctionCall(name="get_weather", args={"city": "Paris"})))


weather = App(name="weather", root_agent=LlmAgent(
    name="weather_agent", model=ScriptedLlm(responder=_weather),
    instruction="Answer weather questions with the get_weather tool.", tools=[get_weather],
))


def approve(amount: int) -> None:
    """Ask a human to approve an amount."""


def _approval(request: LlmRequest) -> LlmResponse:
    last = request.contents[-1]
    if any(part.function_response for part in last.parts or ()):
        return _answer(types.Part(text="Approved."))
    return _answer(types.Part(function_call=types.FunctionCall(name="approve", args={"amount": 5})))


approval = App(name="approval", root_agent=LlmAgent(
    name="approver", model=ScriptedLlm(responder=_approval), tools=[LongRunningFunctionTool(approve)],
))


def _steps(request: LlmRequest) -> LlmResponse:
    # The contents are the user message, then one (call, response) pair per step done. Counted from the length,
    # not by scanning every part: this model stands in for a remote one, so its own CPU is not what the capacity
    # run should measure.
    done = (len(request.contents) - 1) // 2
    if done < CAPACITY_STEPS - 1:
        return _answer(types.Part(function_call=types.FunctionCall(name="get_weather", args={"city": "Paris"})))
    return _answer(types.Part(text="done"))


capacity = App(name="capacity", root_agent=LlmAgent(
    name="thinker", model=ScriptedLlm(responder=_steps, latency=CAPACITY_LATENCY), tools=[get_weather],
))


BURST_LATENCY = float(os.environ.get("BENCH_BURST_LATENCY", "6.0"))

burst = App(name="burst", root_agent=LlmAgent(
    name="burst_agent", model=ScriptedLlm(responder=_weather, latency=BURST_LATENCY),
    instruction="Answer weather questions with the get_weather tool.", tools=[get_weather],
))
"""The tool round trip with a slow model, so that a burst of invocations is in flight at once (bench/rss_bench.py)."""
