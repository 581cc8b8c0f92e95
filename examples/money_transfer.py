"""Money transfers with ADK's tool confirmation: transfers above a limit wait for a person's approval.

``transfer_money`` is a plain FunctionTool declared with ``require_confirmation``: a callable that holds back
calls above ``CONFIRMATION_LIMIT``. A held call does not run; the invocation parks on an
``adk_request_confirmation`` call. Approving it (``{"confirmed": true}``) runs the transfer once and the agent
reports it; rejecting it (``{"confirmed": false}``) never runs it. Run a worker with
``agentq worker --app examples.money_transfer:app``.
"""

from __future__ import annotations

import re

from runtime.agents import LlmAgent
from runtime.apps import App
from runtime.models import LlmRequest
from runtime.models.scripted_llm import call
from runtime.tools import FunctionTool

from .model_choice import pick_model

CONFIRMATION_LIMIT = 100
"""Transfers above this many dollars need a person's confirmation."""


def transfer_money(amount: int, to: str) -> dict:
    """Transfer ``amount`` dollars to the account ``to``."""
    return {"status": "transferred", "amount": amount, "to": to}


def needs_confirmation(amount: int, to: str) -> bool:
    """Hold back transfers above the limit for a person's confirmation."""
    return amount > CONFIRMATION_LIMIT


def scripted_transfers(request: LlmRequest):
    """The offline model, a pure function of the conversation (so any worker can resume it)."""
    last = request.contents[-1].parts or [] if request.contents else []
    response = next((part.function_response for part in last if part.function_response), None)
    if response is None:
        text = " ".join(part.text or "" for part in last)
        wanted = re.search(r"\$?(\d+)\D+?to (\w+)", text)
        if wanted is None:
            return "How much should I transfer, and to whom?"
        return call("transfer_money", amount=int(wanted.group(1)), to=wanted.group(2))
    result = response.response or {}
    if result.get("status") == "transferred":
        return f"Transferred ${result['amount']} to {result['to']}."
    return f"The transfer was not made: {result.get('error', result)}"


model = pick_model(scripted_transfers)

root_agent = LlmAgent(
    name="transfer_agent",
    model=model,
    description="Transfers money; large transfers need a person's confirmation.",
    instruction="Transfer money with transfer_money when asked. Report what happened, including a rejection.",
    tools=[FunctionTool(transfer_money, require_confirmation=needs_confirmation)],
)

app = App(name="transfers", root_agent=root_agent)
