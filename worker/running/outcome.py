"""How a finished Runner pass ends the invocation: parked on pending calls, completed, or failed."""

from __future__ import annotations

import time

from google.genai import types

from runtime.contexts.failures import failed_tool
from runtime.events import Event
from worker.records.record import PendingCall


def pending_call(call: types.FunctionCall, park_timeout: float | None, answer: dict | None = None) -> PendingCall:
    """A long-running call as the record keeps it, with its deadline when the invocation has a park timeout and
    the answer shape its tool declared (``answer``, see worker.records.answer_check)."""
    return PendingCall(id=call.id or "", name=call.name or "", args=dict(call.args or {}),
                       deadline=time.time() + park_timeout if park_timeout else None, answer=answer)


def last_said(events: list[Event], invocation_id: str) -> Event | None:
    """The invocation's last event with content, an error or a workflow node's output (not the end_of_agent /
    checkpoint bookkeeping): a workflow node that failed and was then retried successfully ends on its output."""
    return next((e for e in reversed(events) if e.invocation_id == invocation_id and is_said(e)), None)


def is_said(event: Event) -> bool:
    """True for an event that says something (content, an error, a workflow node's output), unlike the
    bookkeeping events (end_of_agent, checkpoints, attempt markers)."""
    return (event.content is not None or bool(event.error_code)
            or (event.node_info is not None and bool(event.node_info.output_for)))


def final_status(last: Event | None) -> tuple[str, dict]:
    """``failed`` when the run ended on an error event, else ``completed``.

    The error is a ``ToolError`` naming the tool and its exception when a tool raised (google-adk 2.13 raises
    the tool's own exception out of the run, never a model error), else the model's ``ModelError``."""
    if last is None or not last.error_code:
        return "completed", {}
    tool = failed_tool(last)
    if tool is not None:
        message = f"tool {tool!r} raised {last.error_code}: {last.error_message or ''}".strip()
        return "failed", {"error": {"type": "ToolError", "message": message}}
    error = {"type": "ModelError", "message": f"{last.error_code}: {last.error_message or ''}".strip()}
    return "failed", {"error": error}
