"""Artifacts saved and loaded: one tool saves a note as an artifact, a second turn's tool loads it back."""

from conformance_lib import LlmAgent, ToolContext, answers, calls, said, scripted, text
from google.genai import types


async def save_note(body: str, tool_context: ToolContext) -> dict:
    """Save a note."""
    version = await tool_context.save_artifact("note.txt", types.Part(text=body))
    return {"saved": "note.txt", "version": version}


async def read_note(tool_context: ToolContext) -> dict:
    """Read the saved note."""
    part = await tool_context.load_artifact("note.txt")
    return {"body": part.text if part is not None else None}


def _reply(request):
    last = said(request)[-1]
    if "save" in last:
        saved = answers(request, "save_note")
        return text("Saved.") if saved else calls("save_note", body="buy milk")
    read = answers(request, "read_note")
    return text(f"The note says: {read[-1]['body']}") if read else calls("read_note")


root_agent = LlmAgent(name="notes", model=scripted(_reply), instruction="Keep notes.", tools=[save_note, read_note])
