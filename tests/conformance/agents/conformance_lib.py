"""The names the conformance agents use, from google-adk (when recording the cases with ``adk api_server``, in
bench/.adk-venv, ``CONFORMANCE_LIB=adk``) or from agentq's ``runtime`` (when agentq serves them): one agent code
base for both, so a recorded case says what google-adk does with exactly the agent agentq then runs.

The model of every agent is a ``Scripted`` model: its answer is a function of the request (which tool answers are
in it), so recording needs no network. Under replay both servers swap it for the recorded answers anyway.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable

from google.genai import types

ROOT = "google.adk" if os.environ.get("CONFORMANCE_LIB") == "adk" else "runtime"

_agents = importlib.import_module(f"{ROOT}.agents")
_models = importlib.import_module(f"{ROOT}.models")
_tools = importlib.import_module(f"{ROOT}.tools")
_workflow = importlib.import_module(f"{ROOT}.workflow")
_events = importlib.import_module(f"{ROOT}.events")

LlmAgent = _agents.LlmAgent
SequentialAgent, LoopAgent = _agents.SequentialAgent, _agents.LoopAgent
BaseLlm, LlmResponse = _models.BaseLlm, _models.LlmResponse
FunctionTool, LongRunningFunctionTool, ToolContext = _tools.FunctionTool, _tools.LongRunningFunctionTool, _tools.ToolContext
AgentTool, exit_loop = _tools.AgentTool, _tools.exit_loop
Workflow, node, START, JoinNode = _workflow.Workflow, _workflow.node, _workflow.START, _workflow.JoinNode
Event, RequestInput = _events.Event, _events.RequestInput
UiWidget = importlib.import_module(f"{ROOT}.events.ui_widget").UiWidget


def answers(request, name: str) -> list[dict]:
    """The responses to calls of ``name`` already in the request's contents, oldest first."""
    return [part.function_response.response or {}
            for content in request.contents for part in content.parts or ()
            if part.function_response is not None and part.function_response.name == name]


def text(value: str):
    """A model answer saying ``value``."""
    return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=value)]))


def calls(name: str, **args):
    """A model answer calling ``name`` with ``args``."""
    return LlmResponse(content=types.Content(
        role="model", parts=[types.Part(function_call=types.FunctionCall(name=name, args=args))]))


def calls_all(*named: tuple[str, dict]):
    """A model answer calling several functions at once: ``(name, args)`` each, in order."""
    return LlmResponse(content=types.Content(role="model", parts=[
        types.Part(function_call=types.FunctionCall(name=name, args=args)) for name, args in named]))


def said(request) -> list[str]:
    """The texts of the user's messages in the request's contents, oldest first."""
    return [part.text for content in request.contents if content.role == "user" for part in content.parts or ()
            if part.text]


def scripted(reply: Callable) -> BaseLlm:
    """A model whose answer to each request is ``reply(request)``."""

    class Scripted(BaseLlm):
        async def generate_content_async(self, llm_request, stream: bool = False):
            yield reply(llm_request)

    return Scripted(model="conformance-scripted")
