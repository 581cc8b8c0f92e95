"""Plugins on an App: an audit log of every model and tool call, and a guardrail that blocks a tool.

``AuditPlugin`` counts the model and tool calls of each session in its state (``audit_model_calls``,
``audit_tool_calls``) and logs one line per call. ``GuardrailPlugin`` answers a call of a blocked tool from
``before_tool_callback`` with an error dict, so the tool never runs and the model is told why. Both run for
every agent of the app, in the worker too: ``agentq worker --app examples.plugin_audit:app``. Offline demo:
``python -m examples.plugin_audit``.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from runtime.agents import LlmAgent
from runtime.apps import App
from runtime.models import LlmRequest
from runtime.models.scripted_llm import call
from runtime.plugins import BasePlugin

from .model_choice import pick_model

log = logging.getLogger("examples.plugin_audit")

BALANCES = {"checking": 1250, "savings": 8400}


def get_balance(account: str) -> dict:
    """Return the balance of ``account`` in dollars."""
    if account not in BALANCES:
        return {"error": f"no account {account!r}"}
    return {"account": account, "balance": BALANCES[account]}


def close_account(account: str) -> dict:
    """Close ``account`` for good."""
    BALANCES.pop(account, None)
    return {"account": account, "status": "closed"}


class AuditPlugin(BasePlugin):
    """Counts model and tool calls in the session's state and logs each one with its invocation id."""

    def __init__(self, name: str = "audit"):
        super().__init__(name)

    async def before_model_callback(self, *, callback_context, llm_request):
        callback_context.state["audit_model_calls"] = callback_context.state.get("audit_model_calls", 0) + 1
        log.info("audit %s: model call by %s", callback_context.invocation_id, callback_context.agent_name)

    async def before_tool_callback(self, *, tool, tool_args, tool_context):
        tool_context.state["audit_tool_calls"] = tool_context.state.get("audit_tool_calls", 0) + 1
        log.info("audit %s: tool %s(%s)", tool_context.invocation_id, tool.name, tool_args)


class GuardrailPlugin(BasePlugin):
    """Refuses calls of the tools named in ``blocked``: its answer replaces the tool's result."""

    def __init__(self, blocked: set[str], name: str = "guardrail"):
        super().__init__(name)
        self.blocked = blocked

    async def before_tool_callback(self, *, tool, tool_args, tool_context) -> dict[str, Any] | None:
        if tool.name in self.blocked:
            log.warning("guardrail %s: blocked %s(%s)", tool_context.invocation_id, tool.name, tool_args)
            return {"error": f"{tool.name} is disabled by policy; ask a human operator"}
        return None


def scripted_banker(request: LlmRequest):
    """The offline model: look up or close the account the user names, then report what the tool said."""
    last = request.contents[-1].parts or [] if request.contents else []
    response = next((part.function_response for part in last if part.function_response), None)
    if response is not None:
        result = response.response or {}
        if "error" in result:
            return f"I could not do that: {result['error']}."
        if response.name == "get_balance":
            return f"Your {result['account']} account holds ${result['balance']}."
        return f"Your {result['account']} account is closed."
    text = " ".join(part.text or "" for part in last).lower()
    account = re.search(r"\b(checking|savings)\b", text)
    if account is None:
        return "Which account: checking or savings?"
    tool = "close_account" if "close" in text else "get_balance"
    return call(tool, account=account.group(1))


def build_app(model) -> App:
    """The banking app with its two plugins, on ``model``."""
    agent = LlmAgent(
        name="banker",
        model=model,
        description="Answers balance questions; account closing is blocked by policy.",
        instruction="Use get_balance to answer balance questions and close_account to close accounts.",
        tools=[get_balance, close_account],
    )
    return App(name="plugin_audit", root_agent=agent,
               plugins=[AuditPlugin(), GuardrailPlugin(blocked={"close_account"})])


app = build_app(pick_model(scripted_banker))


async def _demo() -> None:
    from google.genai import types

    from runtime.runners import InMemoryRunner

    runner = InMemoryRunner(app=app)
    session = await runner.session_service.create_session(app_name=app.name, user_id="demo")
    for question in ("What is in my savings account?", "Close my checking account."):
        print(f"user: {question}")
        message = types.Content(role="user", parts=[types.Part(text=question)])
        async for event in runner.run_async(user_id="demo", session_id=session.id, new_message=message):
            if event.is_final_response() and event.content:
                print(f"{event.author}: {event.content.parts[0].text}")
    session = await runner.session_service.get_session(app_name=app.name, user_id="demo", session_id=session.id)
    print(f"audit: {session.state}")


if __name__ == "__main__":
    import asyncio

    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
    asyncio.run(_demo())
