"""An app slow enough to SIGKILL its worker mid-invocation: eight ticks, each a tool call after a 1 s model turn.

Mounted into the containers by tests/deploy/compose.hostnet.yaml (it is a test app, not part of the image).
The model is a pure function of the conversation, so the worker that takes over continues where the committed
events stop.
"""

from __future__ import annotations

from google.genai import types

from runtime.agents import LlmAgent
from runtime.apps import App
from runtime.models import LlmRequest, ScriptedLlm

TICKS = 8


def tick(n: int) -> dict:
    """Count tick ``n``."""
    return {"tick": n}


def _ticks_done(request: LlmRequest) -> int:
    return sum(1 for content in request.contents for part in content.parts or [] if part.function_response)


def _next_turn(request: LlmRequest):
    done = _ticks_done(request)
    if done < TICKS:
        return types.FunctionCall(name="tick", args={"n": done + 1})
    return f"counted {TICKS} ticks"


app = App(name="countdown", root_agent=LlmAgent(
    name="counter", model=ScriptedLlm(responder=_next_turn, latency=1.0), tools=[tick]))
