"""A function tool: the model asks for the weather, the tool answers (and records the city in state)."""

from conformance_lib import LlmAgent, ToolContext, answers, calls, scripted, text


def get_weather(city: str, tool_context: ToolContext) -> dict:
    """The forecast for a city."""
    tool_context.state["last_city"] = city
    return {"city": city, "forecast": "sunny", "celsius": 21}


def _reply(request):
    done = answers(request, "get_weather")
    if not done:
        return calls("get_weather", city="Paris")
    return text(f"It is {done[-1]['forecast']} in {done[-1]['city']}.")


root_agent = LlmAgent(name="weather", model=scripted(_reply), instruction="Answer questions about the weather.",
                      tools=[get_weather])
