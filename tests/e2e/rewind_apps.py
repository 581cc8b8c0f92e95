"""The app ``test_rewind_http`` rewinds: each message is saved as a note, in session state (a counter and the last
note) and as a new version of the artifact ``notes.txt``; the second note also creates ``second.txt``.

The model is a ScriptedLlm: it calls ``save_note`` with the user's text, then says it saved it.
"""

from __future__ import annotations

from google.genai import types

from runtime.agents import LlmAgent
from runtime.apps import App
from runtime.models import LlmRequest, ScriptedLlm
from runtime.tools import ToolContext


async def save_note(text: str, tool_context: ToolContext) -> dict:
    """Save a note."""
    count = int(tool_context.state.get("notes") or 0) + 1
    tool_context.state["notes"] = count
    tool_context.state["last_note"] = text
    version = await tool_context.save_artifact("notes.txt", types.Part(text=text))
    if count == 2:
        await tool_context.save_artifact("second.txt", types.Part(text=f"made by the second note, {text!r}"))
    return {"saved": text, "version": version}


def _turn(request: LlmRequest):
    last = request.contents[-1]
    if any(part.function_response for part in last.parts or ()):
        return f"Saved {last.parts[0].function_response.response['saved']!r}."
    return types.FunctionCall(name="save_note", args={"text": last.parts[0].text})


notes_app = App(name="notes", root_agent=LlmAgent(name="notes_agent", model=ScriptedLlm(responder=_turn),
                                                  tools=[save_note]))
