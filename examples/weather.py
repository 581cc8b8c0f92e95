"""A simple tool agent: asks ``get_weather`` and answers in one sentence.

Run a worker with ``agentq worker --app examples.weather:app``.
"""

from __future__ import annotations

import re

from google.genai import types

from runtime.agents import LlmAgent
from runtime.apps import App
from runtime.models import LlmRequest
from runtime.models.scripted_llm import call

from .model_choice import pick_model

REPORTS = {"paris": "sunny, 21°C", "london": "light rain, 14°C", "tokyo": "cloudy, 18°C"}


def get_weather(city: str) -> dict:
    """Return the current weather report for a city."""
    report = REPORTS.get(city.strip().lower())
    if report is None:
        return {"status": "error", "error_message": f"no weather report for {city!r}"}
    return {"status": "success", "report": f"The weather in {city} is {report}."}


def _last_parts(request: LlmRequest) -> list[types.Part]:
    return list(request.contents[-1].parts or []) if request.contents else []


def scripted_weather(request: LlmRequest):
    """The offline model: call get_weather for the city in the question, then read the report back."""
    for part in _last_parts(request):
        if part.function_response is not None:
            result = part.function_response.response or {}
            return result.get("report") or f"Sorry: {result.get('error_message', 'no report')}."
    question = " ".join(part.text or "" for part in _last_parts(request))
    match = re.search(r"\bin ([A-Z][\w-]*(?: [A-Z][\w-]*)*)", question)
    if match is None:
        return "Which city would you like the weather for?"
    return call("get_weather", city=match.group(1))


model = pick_model(scripted_weather)

root_agent = LlmAgent(
    name="weather_agent",
    model=model,
    description="Answers questions about the weather in a city.",
    instruction="You answer questions about the weather. Use the get_weather tool, then answer in one sentence.",
    tools=[get_weather],
)

app = App(name="weather", root_agent=root_agent)
