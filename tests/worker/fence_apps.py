"""Agent apps for the run-fence tests (tests/worker/test_run_fences.py), run by real ``agentq worker`` processes.

- ``translating``: an assistant that calls a translator agent through an AgentTool and quotes its answer.
- ``failing_tool``: a tool that raises ValueError.
- ``late_artifact``: a tool that saves an artifact only when the test says so (a Redis list it pushes to),
  from a task shielded from the run's cancellation: a save that comes after its invocation was cancelled.
"""

from __future__ import annotations

import asyncio
import os

from google.genai import types

from runtime.agents import LlmAgent
from runtime.apps import App
from runtime.errors import FencedOutError
from runtime.models import LlmRequest, ScriptedLlm
from runtime.tools import AgentTool, FunctionTool, ToolContext


def _responses(request: LlmRequest) -> list[types.FunctionResponse]:
    """The function responses after the request's last user text (this turn's)."""
    answers: list[types.FunctionResponse] = []
    for content in request.contents:
        parts = content.parts or ()
        if content.role == "user" and any(p.text for p in parts):
            answers = []
        answers += [p.function_response for p in parts if p.function_response]
    return answers


def _user_text(request: LlmRequest) -> str:
    texts = [p.text for c in request.contents if c.role == "user" for p in c.parts or () if p.text]
    return texts[-1] if texts else ""


# --- translating: an AgentTool ------------------------------------------------------------------------


def _translator_turn(request: LlmRequest) -> str:
    return {"hello": "Bonjour", "thank you": "Merci"}.get(_user_text(request).lower(), "?")


def _assistant_turn(request: LlmRequest):
    answered = _responses(request)
    if not answered:
        return types.FunctionCall(name="translator", args={"request": _user_text(request)})
    return f"In French: {(answered[-1].response or {}).get('result')}"


translator = LlmAgent(name="translator", description="Translates English into French.",
                      model=ScriptedLlm(responder=_translator_turn))
translating_app = App(name="translating", root_agent=LlmAgent(
    name="assistant", model=ScriptedLlm(responder=_assistant_turn), tools=[AgentTool(agent=translator)]))


# --- failing_tool: a tool that raises ------------------------------------------------------------------


def transfer_money(amount: int) -> dict:
    """Send money."""
    raise ValueError(f"amount must be positive, got {amount}")


def _failing_turn(request: LlmRequest):
    if not _responses(request):
        return types.FunctionCall(name="transfer_money", args={"amount": -5})
    return "unreachable"


failing_tool_app = App(name="failing_tool", root_agent=LlmAgent(
    name="teller", model=ScriptedLlm(responder=_failing_turn), tools=[transfer_money]))


# --- late_artifact: a save after the invocation was cancelled ------------------------------------------


def started_key(invocation_id: str) -> str:
    """List: the tool pushes once it runs (the test waits for it before cancelling)."""
    return f"test:late_artifact:started:{invocation_id}"


def go_key(invocation_id: str) -> str:
    """List: the test pushes to let the tool save its artifact."""
    return f"test:late_artifact:go:{invocation_id}"


def outcome_key(invocation_id: str) -> str:
    """List: the tool pushes 'saved' or 'fenced' once its save returned or was refused."""
    return f"test:late_artifact:outcome:{invocation_id}"


async def _save_when_told(tool_context: ToolContext) -> None:
    from runtime.redis_store.redis_url import redis_client_from_url

    client = redis_client_from_url(os.environ["AGENTQ_REDIS_URL"], asyncio=True, decode_responses=True)
    invocation_id = tool_context.invocation_id
    try:
        await client.rpush(started_key(invocation_id), "1")
        await client.blpop([go_key(invocation_id)], timeout=60)
        try:
            await tool_context.save_artifact("report.txt", types.Part(text=f"report of {invocation_id}"))
            outcome = "saved"
        except FencedOutError:
            outcome = "fenced"
        await client.rpush(outcome_key(invocation_id), outcome)
    finally:
        await client.aclose()


async def write_report(tool_context: ToolContext) -> dict:
    """Write the report when it is ready."""
    # Shielded: the save runs on even when the run's task is cancelled, as a save racing a cancel would.
    await asyncio.shield(asyncio.ensure_future(_save_when_told(tool_context)))
    return {"written": True}


def _reporting_turn(request: LlmRequest):
    if not _responses(request):
        return types.FunctionCall(name="write_report", args={})
    return "Report written."


late_artifact_app = App(name="late_artifact", root_agent=LlmAgent(
    name="reporter", model=ScriptedLlm(responder=_reporting_turn), tools=[write_report]))


# --- meddling: a write to a session the run's lease does not cover -------------------------------------


async def note_for_bo(tool_context: ToolContext) -> dict:
    """Leave a note in another user's session (which this run holds no lease on)."""
    from runtime.events import Event

    service = tool_context.invocation_context.session_service
    theirs = await service.create_session(app_name="meddling", user_id=f"bo-of-{tool_context.invocation_id}")
    await service.append_event(theirs, Event(invocation_id=tool_context.invocation_id, author="meddler",
                                             content=types.Content(role="model", parts=[types.Part(text="hi")])))
    return {"noted": True}


def _meddling_turn(request: LlmRequest):
    if not _responses(request):
        return types.FunctionCall(name="note_for_bo", args={})
    return "Noted."


meddling_app = App(name="meddling", root_agent=LlmAgent(
    name="meddler", model=ScriptedLlm(responder=_meddling_turn), tools=[note_for_bo]))


# --- banking: an AgentTool whose agent waits for a confirmation ----------------------------------------


def send_money(amount: int, to: str) -> dict:
    """Send money."""
    return {"status": "sent", "amount": amount, "to": to}


def _teller_turn(request: LlmRequest):
    answered = _responses(request)
    if not answered:
        return types.FunctionCall(name="send_money", args={"amount": 500, "to": "bo"})
    return f"Sent: {answered[-1].response}"


def _bank_turn(request: LlmRequest):
    answered = _responses(request)
    if not answered:
        return types.FunctionCall(name="teller", args={"request": _user_text(request)})
    return f"Done. {(answered[-1].response or {}).get('result')}"


teller = LlmAgent(name="teller", description="Moves money.", model=ScriptedLlm(responder=_teller_turn),
                  tools=[FunctionTool(send_money, require_confirmation=True)])
banking_app = App(name="banking", root_agent=LlmAgent(
    name="bank", model=ScriptedLlm(responder=_bank_turn), tools=[AgentTool(agent=teller)]))
