"""Reimbursements with human approval: small claims are paid at once, large ones wait for a manager.

``ask_for_approval`` is a LongRunningFunctionTool: it returns a pending ticket, the model tells the user,
and the invocation parks. A manager's FunctionResponse (``{"status": "approved"}``; the tool declares that
shape, so ``/ui`` shows Approve and Reject buttons) resumes the same invocation, and the agent pays. Run a worker with ``agentq worker --app examples.reimbursement:app``.
"""

from __future__ import annotations

import re
from typing import Literal

from google.genai import types
from pydantic import BaseModel, Field

from runtime.agents import LlmAgent
from runtime.apps import App
from runtime.models import LlmRequest
from runtime.models.scripted_llm import call
from runtime.tools import LongRunningFunctionTool

from .model_choice import pick_model

APPROVAL_LIMIT = 100.0
"""Claims above this many dollars need a manager's approval."""


def reimburse(purpose: str, amount: float) -> dict:
    """Pay the employee ``amount`` dollars for ``purpose``."""
    return {"status": "paid", "purpose": purpose, "amount": amount}


def ask_for_approval(purpose: str, amount: float) -> dict:
    """Ask a manager to approve a reimbursement above the limit; answers with a pending ticket."""
    return {"status": "pending", "purpose": purpose, "amount": amount, "ticket": f"approval-{purpose[:24]}"}


def _function_response(request: LlmRequest) -> types.FunctionResponse | None:
    parts = request.contents[-1].parts or [] if request.contents else []
    return next((part.function_response for part in parts if part.function_response), None)


def _approval_call(request: LlmRequest) -> types.FunctionCall | None:
    for content in reversed(request.contents):
        for part in content.parts or []:
            if part.function_call is not None and part.function_call.name == "ask_for_approval":
                return part.function_call
    return None


def _claim(text: str) -> tuple[str, float] | None:
    amount = re.search(r"\$?(\d+(?:\.\d+)?)", text)
    if amount is None:
        return None
    purpose = re.search(r"\bfor (.+?)[.!?]?$", text.strip())
    return (purpose.group(1) if purpose else "expenses"), float(amount.group(1))


def scripted_reimbursement(request: LlmRequest):
    """The offline model, a pure function of the conversation (so any worker can resume it)."""
    response = _function_response(request)
    if response is None:
        text = " ".join(part.text or "" for part in request.contents[-1].parts or [])
        claim = _claim(text)
        if claim is None:
            return "How much should I reimburse, and for what?"
        purpose, amount = claim
        if amount <= APPROVAL_LIMIT:
            return call("reimburse", purpose=purpose, amount=amount)
        return call("ask_for_approval", purpose=purpose, amount=amount)
    result = response.response or {}
    if response.name == "reimburse":
        return f"Paid ${result.get('amount', 0):.2f} for {result.get('purpose')}."
    asked = _approval_call(request)
    args = dict(asked.args or {}) if asked else {}
    status = result.get("status")
    if status == "pending":
        return (
            f"${args.get('amount', 0):.2f} for {args.get('purpose')} needs a manager's approval "
            f"(ticket {result.get('ticket')}); I will pay it once approved."
        )
    if status == "approved":
        return call("reimburse", purpose=args.get("purpose", "expenses"), amount=args.get("amount", 0))
    return f"The manager did not approve ${args.get('amount', 0):.2f} for {args.get('purpose')}."


class ManagerDecision(BaseModel):
    """The manager's decision on the claim."""

    # ask_for_approval's answer_schema: the server refuses an answer of any other shape (400 naming the field);
    # the docstring above becomes the JSON Schema's description.

    status: Literal["approved", "rejected"]
    note: str | None = Field(default=None, max_length=500)


approval_tool = LongRunningFunctionTool(
    func=ask_for_approval,
    answer_schema=ManagerDecision,
    # /ui shows these as one-click buttons (and a form for the schema) instead of a JSON box
    quick_answers={"Approve": {"status": "approved"}, "Reject": {"status": "rejected"}},
)

model = pick_model(scripted_reimbursement)

root_agent = LlmAgent(
    name="reimbursement_agent",
    model=model,
    description="Pays expense reimbursements, asking a manager to approve large ones.",
    instruction=(
        "You handle expense reimbursements. If the amount is at most $100, call reimburse at once. "
        "Otherwise call ask_for_approval; when it answers pending, tell the user the ticket and that you "
        "will pay once approved. When the approval comes back approved, call reimburse; if rejected, say so."
    ),
    tools=[reimburse, approval_tool],
)

app = App(name="reimbursement", root_agent=root_agent)
