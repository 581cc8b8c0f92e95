"""The apps google-adk's dev UI drives in ``test_adk_dev_ui``: a payment tool held for a person's confirmation
(``confirm_app``), claims paid at once when small and held for confirmation when large (``claims_app``), and an
ADK 2 workflow that retries a node and asks a person through a RequestInput (``review_workflow_app``, also the
workflow of ``test_workflow_ui``).

The model is a ScriptedLlm: it calls ``pay`` once, then says what the tool answered. ``pay`` counts its side
effect in Redis (``AGENTQ_REDIS_URL``) per invocation and call, so the test sees a double or a missing run.
"""

from __future__ import annotations

import asyncio
import os

from google.genai import types

from runtime.agents import LlmAgent
from runtime.apps import App
from runtime.events import Event, RequestInput
from runtime.models import LlmRequest, ScriptedLlm
from runtime.tools import FunctionTool, ToolContext
from runtime.workflow import START, RetryConfig, Workflow, node

AMOUNT = 100
FINAL_TEXT = f"Paid {AMOUNT} euros after your approval."


def payments_key(invocation_id: str) -> str:
    """Hash: ``call_id`` -> how many times ``pay`` ran for that call."""
    return f"test:dev_ui:payments:{invocation_id}"


def pay(amount: int, tool_context: ToolContext) -> dict:
    """Pay an amount of euros (a person confirms each payment first)."""
    import redis

    with redis.Redis.from_url(os.environ["AGENTQ_REDIS_URL"]) as client:
        client.hincrby(payments_key(tool_context.invocation_id), tool_context.function_call_id, 1)
    return {"paid": amount}


def _pay_turn(request: LlmRequest):
    """Call pay once; when its answer is in, say what happened."""
    answers = [
        part.function_response
        for content in request.contents
        for part in content.parts or ()
        if part.function_response is not None and part.function_response.name == "pay"
    ]
    if not answers:
        return types.FunctionCall(name="pay", args={"amount": AMOUNT})
    result = answers[-1].response or {}
    return FINAL_TEXT if result.get("paid") == AMOUNT else f"Not paid: {result}"


confirm_app = App(name="confirm_payment", root_agent=LlmAgent(
    name="cashier", model=ScriptedLlm(responder=_pay_turn),
    instruction="Pay what the user asks for with the pay tool.",
    tools=[FunctionTool(pay, require_confirmation=True)],
))


# --- claims: small claims are paid at once, larger ones wait for a person's confirmation -------------------

CONFIRM_ABOVE = 100


def claim_paid_text(amount: int) -> str:
    """What the claims agent says once a claim of ``amount`` euros is paid."""
    return f"Claim of {amount} euros paid."


def pay_claim(amount: int, tool_context: ToolContext) -> dict:
    """Pay a claim of an amount of euros (above 100 euros a person confirms it first)."""
    import redis

    with redis.Redis.from_url(os.environ["AGENTQ_REDIS_URL"]) as client:
        client.hincrby(payments_key(tool_context.invocation_id), tool_context.function_call_id, 1)
    return {"paid": amount}


def _claim_turn(request: LlmRequest):
    """A new claim in the user's words ("Claim 40 euros"): pay it; the payment's answer: say so."""
    for content in reversed(request.contents):
        for part in content.parts or ():
            answer = part.function_response
            if answer is not None and answer.name == "pay_claim":
                paid = (answer.response or {}).get("paid")
                return claim_paid_text(paid) if paid is not None else f"Claim not paid: {answer.response}"
            if content.role == "user" and part.text:
                amount = int(next(word for word in part.text.split() if word.isdigit()))
                return types.FunctionCall(name="pay_claim", args={"amount": amount})
    return "Which claim should I pay?"


claims_app = App(name="claims", root_agent=LlmAgent(
    name="claims_clerk", model=ScriptedLlm(responder=_claim_turn),
    instruction="Pay the claims the user sends with the pay_claim tool.",
    tools=[FunctionTool(pay_claim, require_confirmation=lambda amount: amount > CONFIRM_ABOVE)],
))


# --- doc_review: an ADK 2 workflow. fetch -> polish (its first attempt fails, the retry succeeds) -> review (a
# RequestInput for a person) -> decide -> publish, or revise when changes are asked for. ---------------------

REVIEW_WORKFLOW = "doc_review"
REVIEW_MESSAGE = "Publish this draft?"
REVIEW_SCHEMA = {"type": "object", "required": ["approved"], "properties": {
    "approved": {"type": "boolean", "description": "tick to publish"},
    "note": {"type": "string", "description": "what to change"}}}
HOLD = "[hold]"
"""In the workflow's input: polish's second attempt waits until ``release_key(invocation)`` is set."""


def attempts_key(invocation_id: str) -> str:
    """Hash: ``<node>`` -> how many attempts of it began."""
    return f"test:dev_ui:attempts:{invocation_id}"


def release_key(invocation_id: str) -> str:
    """String: set it to let a held retry of polish go on."""
    return f"test:dev_ui:release:{invocation_id}"


def _redis():
    import redis.asyncio as redis

    return redis.Redis.from_url(os.environ["AGENTQ_REDIS_URL"], decode_responses=True)


def fetch(node_input: str) -> dict:
    return {"topic": node_input, "text": f"notes on {node_input.replace(HOLD, '').strip()}"}


@node(retry_config=RetryConfig(max_attempts=3, initial_delay=0.0, jitter=0.0))
async def polish(ctx, node_input: dict) -> str:
    async with _redis() as client:
        attempt = await client.hincrby(attempts_key(ctx.invocation_id), "polish", 1)
        if attempt == 1:
            raise ValueError("the spell checker timed out")
        while HOLD in node_input["topic"] and not await client.get(release_key(ctx.invocation_id)):
            await asyncio.sleep(0.05)
    return node_input["text"].capitalize() + "."


async def review(node_input: str):
    yield RequestInput(interrupt_id="review", message=REVIEW_MESSAGE, payload={"draft": node_input},
                       response_schema=REVIEW_SCHEMA)


def decide(node_input: dict):
    return Event(output=node_input, route="approved" if node_input.get("approved") else "changes")


def publish(node_input: dict) -> str:
    return "published"


def revise(node_input: dict) -> str:
    return f"to revise: {node_input.get('note') or 'no note'}"


review_workflow_app = App(name=REVIEW_WORKFLOW, root_agent=Workflow(name=REVIEW_WORKFLOW, edges=[
    (START, fetch, polish, review, decide),
    (decide, {"approved": publish, "changes": revise}),
]))
