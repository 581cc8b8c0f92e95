"""Workflow apps the worker tests run in real worker processes.

Nodes keep a side-effect ledger in Redis (``AGENTQ_REDIS_URL``), keyed by invocation: how often each node began
and finished, so a test sees exactly which nodes ran again after a worker was killed. A node that should be
killed in flight raises a flag (``inside_key``) and sleeps, so the test knows when to kill its worker.
"""

from __future__ import annotations

import asyncio

from runtime.apps import App
from runtime.events import Event, RequestInput
from runtime.tools import FunctionTool, ToolContext
from runtime.workflow import START, JoinNode, RetryConfig, Workflow, node
from tests.worker.apps import _client


def ledger_key(invocation_id: str) -> str:
    """Hash: ``began:<node>`` / ``finished:<node>`` -> count."""
    return f"test:ledger:{invocation_id}"


def inside_key(invocation_id: str) -> str:
    """String: the node now running its slow part (the moment to kill its worker)."""
    return f"test:inside:{invocation_id}"


def _note(ctx, what: str) -> int:
    return _client().hincrby(ledger_key(ctx.invocation_id), what, 1)


# --- a 3-node chain whose middle node is slow the first time ---

async def fetch(ctx, node_input: str) -> dict:
    _note(ctx, "began:fetch")
    _note(ctx, "finished:fetch")
    return {"doc": f"text of {node_input}"}


async def draft(ctx, node_input: dict) -> str:
    if _note(ctx, "began:draft") == 1:
        _client().set(inside_key(ctx.invocation_id), "draft")
        await asyncio.sleep(60)  # killed here
    _note(ctx, "finished:draft")
    return node_input["doc"].upper()


async def publish(ctx, node_input: str) -> dict:
    _note(ctx, "began:publish")
    ctx.state["published"] = node_input
    _note(ctx, "finished:publish")
    return {"published": node_input}


chain_app = App(name="wf_chain", root_agent=Workflow(name="wf_chain", edges=[(START, fetch, draft, publish)]))


# --- a reviewer's RequestInput, with a route for "changes requested" ---

def prepare(node_input: str) -> str:
    return f"draft of {node_input}"


async def review(node_input: str):
    yield RequestInput(interrupt_id="review", message="Approve the draft?", payload={"draft": node_input},
                       response_schema={"type": "object", "properties": {"approved": {"type": "boolean"}},
                                        "required": ["approved"]})


def decide(node_input: dict):
    return Event(output=node_input, route="approved" if node_input.get("approved") else "changes")


def release(node_input: dict) -> str:
    return "released"


def revise(node_input: dict) -> str:
    return f"revise: {node_input.get('note', '')}"


review_app = App(name="wf_review", root_agent=Workflow(name="wf_review", edges=[
    (START, prepare, review, decide),
    (decide, {"approved": release, "changes": revise}),
]))


# --- a fan-out where one branch asks a person and the other finishes ---

def split(node_input: str) -> str:
    return node_input


async def ask_branch(ctx, node_input: str):
    _note(ctx, "began:ask_branch")
    yield RequestInput(interrupt_id="left-question", message="Left side?")


async def work_branch(ctx, node_input: str) -> str:
    _note(ctx, "began:work_branch")
    return f"worked {node_input}"


def merge(node_input: dict) -> dict:
    return {"merged": node_input}


fan_app = App(name="wf_fan", root_agent=Workflow(name="wf_fan", edges=[
    (START, split, (ask_branch, work_branch), JoinNode(name="both"), merge)]))


# --- retries across a killed worker ---

@node(retry_config=RetryConfig(max_attempts=3, initial_delay=0.0, jitter=0.0))
async def flaky(ctx, node_input: str) -> str:
    attempt = _note(ctx, "began:flaky")
    if attempt == 1:
        _client().set(inside_key(ctx.invocation_id), "flaky")
        await asyncio.sleep(60)  # killed here: the attempt counts
    if attempt == 2:
        raise ValueError("second attempt fails")
    _note(ctx, "finished:flaky")
    return f"ok on attempt {attempt}"


retry_app = App(name="wf_retry", root_agent=Workflow(name="wf_retry", edges=[(START, flaky)]))


@node(retry_config=RetryConfig(max_attempts=2, initial_delay=0.0, jitter=0.0))
async def fragile(ctx, node_input: str) -> str:
    attempt = _note(ctx, "began:fragile")
    if attempt == 1:
        _client().set(inside_key(ctx.invocation_id), "fragile")
        await asyncio.sleep(60)
    raise ValueError(f"attempt {attempt} fails")


exhausted_app = App(name="wf_exhausted", root_agent=Workflow(name="wf_exhausted", edges=[(START, fragile)]))


# --- a fan-out over many items, each a journaled tool call (idempotent: an item in flight when its worker died
# is run again; one that finished is never run again) ---

def items(node_input: str) -> list[int]:
    return list(range(int(node_input)))


def square(number: int, tool_context: ToolContext) -> dict:
    """Square one item (its side effect: one ledger entry)."""
    client = _client()
    client.hincrby(ledger_key(tool_context.invocation_id), f"item:{number}", 1)
    if client.hlen(ledger_key(tool_context.invocation_id)) >= 500:
        client.set(inside_key(tool_context.invocation_id), "halfway")
    return {"square": number * number}


def total(node_input: list) -> int:
    return sum(item["square"] for item in node_input)


items_app = App(name="wf_items", root_agent=Workflow(name="wf_items", edges=[
    (START, items, node(FunctionTool(square, idempotent=True), parallel_worker=True, max_parallel_workers=16), total)]))


# --- an agent node whose tool needs a person's confirmation ---

def pay(amount: int, tool_context: ToolContext) -> dict:
    """Pay an amount."""
    _client().hincrby(ledger_key(tool_context.invocation_id), "paid", 1)
    return {"paid": amount}


def _payer_turn(request):
    from runtime.models import call

    last = request.contents[-1].parts[0]
    if last.function_response is None:
        return call("pay", amount=500)
    return f"result {last.function_response.response}"


def receipt(node_input) -> str:
    return f"receipt: {node_input}"


def _payer_app() -> App:
    from runtime.agents import LlmAgent
    from runtime.models import ScriptedLlm

    payer = LlmAgent(name="payer", model=ScriptedLlm(responder=_payer_turn),
                     tools=[FunctionTool(pay, require_confirmation=True)])
    return App(name="wf_payer", root_agent=Workflow(name="wf_payer", edges=[(START, payer, receipt)]))


payer_app = _payer_app()
