"""UI widgets: the concierge's tool renders an itinerary widget; a second widget with the same id in the same call
is refused (ValueError, as google-adk), and the tool says so in its answer."""

from conformance_lib import LlmAgent, ToolContext, UiWidget, answers, calls, scripted, text


def show_itinerary(tool_context: ToolContext) -> dict:
    """Show the itinerary to the user."""
    tool_context.render_ui_widget(UiWidget(id="itinerary", provider="mcp", payload={"trip": "Paris"}))
    try:
        tool_context.render_ui_widget(UiWidget(id="itinerary", provider="mcp", payload={"trip": "again"}))
    except ValueError as exc:
        return {"shown": True, "second": str(exc)}
    return {"shown": True, "second": None}


def _concierge(request):
    if not answers(request, "show_itinerary"):
        return calls("show_itinerary")
    return text("Here is your itinerary.")


root_agent = LlmAgent(name="concierge", instruction="Help with travel.", model=scripted(_concierge),
                      tools=[show_itinerary])
