"""Callbacks that answer: a before-agent callback answers Sunday questions (the agent does not run), a
before-model callback answers opening-hours questions without the model; other questions reach the model."""

from conformance_lib import LlmAgent, LlmResponse, answers, calls, said, scripted, text
from google.genai import types


def get_weather(city: str) -> dict:
    """The forecast for a city."""
    return {"city": city, "forecast": "sunny"}


def _reply(request):
    done = answers(request, "get_weather")
    if len(done) < sum(1 for s in said(request) if "weather" in s):
        return calls("get_weather", city="Paris")
    return text(f"Forecast: {done[-1]['forecast']}.")


def answer_sundays(callback_context):
    message = callback_context.user_content
    if message is not None and "Sunday" in "".join(p.text or "" for p in message.parts or ()):
        callback_context.state["answered_by"] = "agent callback"
        return types.Content(role="model", parts=[types.Part(text="We are closed on Sundays.")])
    return None


def answer_hours(callback_context, llm_request):
    if "hours" in said(llm_request)[-1]:
        callback_context.state["answered_by"] = "model callback"
        return LlmResponse(content=types.Content(role="model", parts=[types.Part(text="We open at 9.")]))
    return None


root_agent = LlmAgent(name="guarded", model=scripted(_reply), instruction="Answer questions.",
                      tools=[get_weather], before_agent_callback=answer_sundays, before_model_callback=answer_hours)
