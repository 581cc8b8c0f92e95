"""An app whose long-running tool declares its answer (answer_schema, quick_answers): the worker carries the
shape to the pending call, /ui renders it as buttons and a form, and the server refuses answers that do not match.
"""

from __future__ import annotations

from typing import Literal

from google.genai import types
from pydantic import BaseModel, Field

from runtime.agents import LlmAgent
from runtime.apps import App
from runtime.models import LlmRequest, ScriptedLlm
from runtime.tools import FunctionTool, LongRunningFunctionTool, ToolContext


class Decision(BaseModel):
    """How the invoice is decided."""

    status: Literal["approved", "rejected"]
    note: str | None = Field(default=None, max_length=200)


def review_invoice(invoice: str, amount: int) -> None:
    """Send an invoice to a person for review (None: nothing now, the invocation waits for the answer)."""
    return None


review_tool = LongRunningFunctionTool(review_invoice, answer_schema=Decision, quick_answers={
    "Approve": {"status": "approved"},
    "Reject": {"status": "rejected", "note": "rejected with one click"},
})


def _turn(request: LlmRequest):
    answers = [p.function_response for c in request.contents for p in c.parts or ()
               if p.function_response and p.function_response.name == "review_invoice"]
    if not answers:
        return types.FunctionCall(name="review_invoice", args={"invoice": "INV-7", "amount": 1200})
    answer = answers[-1].response
    return f"Invoice INV-7 {answer['status']}" + (f" ({answer['note']})" if answer.get("note") else "") + "."


invoice_app = App(name="invoices", root_agent=LlmAgent(
    name="clerk", model=ScriptedLlm(responder=_turn), tools=[review_tool]))


# --- a confirmation whose approval carries a declared payload ---------------------------------------------


class Release(BaseModel):
    """What the approver sends with an approval."""

    reference: str = Field(pattern=r"^REF-\d+$")
    split: int = Field(default=1, ge=1, le=4)


def release_funds(amount: int, tool_context: ToolContext) -> dict:
    """Release funds (held for a person's approval, which carries a reference)."""
    confirmation = tool_context.tool_confirmation
    return {"released": amount, "reference": confirmation.payload["reference"] if confirmation else None}


def _release_turn(request: LlmRequest):
    answers = [p.function_response for c in request.contents for p in c.parts or ()
               if p.function_response and p.function_response.name == "release_funds"]
    if not answers:
        return types.FunctionCall(name="release_funds", args={"amount": 900})
    return f"result: {answers[-1].response}"


release_app = App(name="releases", root_agent=LlmAgent(
    name="treasurer", model=ScriptedLlm(responder=_release_turn),
    tools=[FunctionTool(release_funds, require_confirmation=True, confirmation_payload_schema=Release)]))
