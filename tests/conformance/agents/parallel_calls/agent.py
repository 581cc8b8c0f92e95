"""Parallel calls: the model asks for two cities' weather in one answer; both tools run, one event answers both."""

from conformance_lib import LlmAgent, ToolContext, answers, calls_all, scripted, text


def get_weather(city: str, tool_context: ToolContext) -> dict:
    """The forecast for a city."""
    tool_context.state[f"asked_{city.lower()}"] = True
    return {"city": city, "forecast": "sunny" if city == "Paris" else "rainy"}


def _reply(request):
    done = answers(request, "get_weather")
    if not done:
        return calls_all(("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Oslo"}))
    return text(" ".join(f"{d['city']}: {d['forecast']}." for d in done))


root_agent = LlmAgent(name="parallel_calls", model=scripted(_reply), instruction="Compare the weather of cities.",
                      tools=[get_weather])
