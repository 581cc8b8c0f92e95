"""The matrix's agents: one app per ADK flow, written once for both google-adk 2.13 and agentq.

The library is chosen by ``MATRIX_LIB`` (``google.adk`` in bench/.adk-venv, where ``adk_reference.py`` runs
these apps on google-adk's in-memory Runner; ``runtime`` otherwise, where ``agentq worker`` serves them), so the
reference and the product run exactly the same agent code. Every model is a ``Scripted`` BaseLlm defined here:
its answer is a function of the request only (which tool answers are in it), so a worker that resumes an
invocation answers as the first one did, and no network is needed.

``FLOWS`` maps a flow's name to its app, its first user message, and how a person answers each kind of parked
call (by the call's name).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from google.genai import types

LIB = os.environ.get("MATRIX_LIB", "runtime")

_agents = importlib.import_module(f"{LIB}.agents")
_apps = importlib.import_module(f"{LIB}.apps")
_events = importlib.import_module(f"{LIB}.events")
_models = importlib.import_module(f"{LIB}.models")
_tools = importlib.import_module(f"{LIB}.tools")
_workflow = importlib.import_module(f"{LIB}.workflow")
AgentTool = importlib.import_module(f"{LIB}.tools.agent_tool").AgentTool

App = _apps.App
LlmAgent, SequentialAgent, LoopAgent = _agents.LlmAgent, _agents.SequentialAgent, _agents.LoopAgent
BaseLlm, LlmResponse = _models.BaseLlm, _models.LlmResponse
FunctionTool, LongRunningFunctionTool, ToolContext = _tools.FunctionTool, _tools.LongRunningFunctionTool, _tools.ToolContext
Workflow, JoinNode, node, START = _workflow.Workflow, _workflow.JoinNode, _workflow.node, _workflow.START
Event, RequestInput = _events.Event, _events.RequestInput

REPLIES: dict[str, Callable[[Any], Any]] = {}
"""A Scripted model's name -> its answer to a request (module level: a model object holds only its name)."""


class Scripted(BaseLlm):
    """A deterministic model: ``REPLIES[self.model](request)`` is its answer to each request."""

    async def generate_content_async(self, llm_request, stream: bool = False):
        yield REPLIES[self.model](llm_request)


def scripted(name: str, reply: Callable[[Any], Any]) -> Scripted:
    """A Scripted model named ``name`` answering with ``reply``."""
    REPLIES[name] = reply
    return Scripted(model=name)


def answers(request, name: str) -> list[dict]:
    """The responses to calls of ``name`` in the request's contents, oldest first."""
    return [part.function_response.response or {}
            for content in request.contents for part in content.parts or ()
            if part.function_response is not None and part.function_response.name == name]


def text(value: str):
    """A model answer saying ``value``."""
    return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=value)]))


def calls(*named: tuple[str, dict]):
    """A model answer calling each (name, args), in one response (parallel calls when there are several)."""
    return LlmResponse(content=types.Content(role="model", parts=[
        types.Part(function_call=types.FunctionCall(name=name, args=args)) for name, args in named]))


@dataclass
class Flow:
    """One flow of the matrix: the app, its first message, and the answer a person gives each parked call."""

    app: Any
    message: str
    answers: dict[str, dict] = field(default_factory=dict)
    """Pending call name -> the response a person sends (``adk_request_confirmation``: the confirmation)."""


FLOWS: dict[str, Flow] = {}


def flow(name: str, message: str, root: Any, answers: dict[str, dict] | None = None) -> Any:
    """Register ``root`` as the app ``mx_<name>``; the app."""
    app = App(name=f"mx_{name}", root_agent=root)
    FLOWS[name] = Flow(app=app, message=message, answers=answers or {})
    return app


# --- a function tool writing state -------------------------------------------------------------------------


def get_weather(city: str, tool_context: ToolContext) -> dict:
    """The forecast for a city (and the city remembered in state)."""
    tool_context.state["last_city"] = city
    return {"city": city, "forecast": "sunny"}


def _weather(request):
    done = answers(request, "get_weather")
    return calls(("get_weather", {"city": "Paris"})) if not done else text(f"It is {done[-1]['forecast']}.")


function_tool = flow("function_tool", "Weather in Paris?", LlmAgent(
    name="weather", model=scripted("mx-weather", _weather), instruction="Answer about the weather.",
    tools=[get_weather]))


# --- parallel calls: two tools called in one model response -------------------------------------------------


def get_time(city: str) -> dict:
    """The local time in a city."""
    return {"city": city, "time": "10:00"}


def _both(request):
    weather, clock = answers(request, "get_weather"), answers(request, "get_time")
    if not weather and not clock:
        return calls(("get_weather", {"city": "Oslo"}), ("get_time", {"city": "Oslo"}))
    return text(f"{weather[-1]['forecast']} at {clock[-1]['time']}")


parallel = flow("parallel", "Weather and time in Oslo?", LlmAgent(
    name="both", model=scripted("mx-both", _both), instruction="Answer with both tools.",
    tools=[get_weather, get_time]))


# --- a long-running tool answered later -----------------------------------------------------------------------


def ask_manager(amount: int) -> dict:
    """Ask a manager to approve an expense; the answer comes later."""
    return {"status": "pending", "amount": amount}


def _approvals(request):
    done = answers(request, "ask_manager")
    if not done:
        return calls(("ask_manager", {"amount": 300}))
    if done[-1].get("status") == "pending":
        return text("Waiting for the manager.")
    return text("The manager approved." if done[-1].get("approved") else "The manager declined.")


long_running = flow("long_running", "File a 300 dollar expense", LlmAgent(
    name="approvals", model=scripted("mx-approvals", _approvals), instruction="File expenses.",
    tools=[LongRunningFunctionTool(func=ask_manager)]), answers={"ask_manager": {"approved": True}})


# --- a tool held for confirmation ------------------------------------------------------------------------------


def send_money(amount: int, to: str) -> dict:
    """Send money to someone."""
    return {"sent": amount, "to": to}


def _payments(request):
    done = answers(request, "send_money")
    if not done:
        return calls(("send_money", {"amount": 50, "to": "Ana"}))
    return text(f"Sent {done[-1]['sent']}." if "sent" in done[-1] else "Not confirmed.")


confirmation = flow("confirmation", "Send 50 to Ana", LlmAgent(
    name="payments", model=scripted("mx-payments", _payments), instruction="Make payments.",
    tools=[FunctionTool(send_money, require_confirmation=True)]),
    answers={"adk_request_confirmation": {"confirmed": True}})


# --- AgentTool: an agent called as a tool ----------------------------------------------------------------------

translator = LlmAgent(name="translator", model=scripted("mx-translator", lambda request: text("Bonjour")),
                      description="Translates into French.", instruction="Translate into French.")


def _asks_translator(request):
    done = answers(request, "translator")
    return calls(("translator", {"request": "Hello"})) if not done else text(f"In French: {done[-1].get('result')}")


agent_tool = flow("agent_tool", "Say hello in French", LlmAgent(
    name="polyglot", model=scripted("mx-polyglot", _asks_translator), instruction="Use the translator.",
    tools=[AgentTool(agent=translator)]))


# --- SequentialAgent -------------------------------------------------------------------------------------------

sequential = flow("sequential", "Write about tea", SequentialAgent(name="pipeline", sub_agents=[
    LlmAgent(name="writer", model=scripted("mx-writer", lambda request: text("Tea is a drink.")),
             instruction="Write.", output_key="draft"),
    LlmAgent(name="editor", model=scripted("mx-editor", lambda request: text("Tea is a fine drink.")),
             instruction="Edit the draft."),
]))


# --- LoopAgent ---------------------------------------------------------------------------------------------------

loop = flow("loop", "Polish the slogan", LoopAgent(name="polisher", max_iterations=2, sub_agents=[
    LlmAgent(name="drafter", model=scripted("mx-drafter", lambda request: text("Drink tea.")), instruction="Draft."),
    LlmAgent(name="critic", model=scripted("mx-critic", lambda request: text("Shorter.")), instruction="Criticise."),
]))


# --- transfer to a sub-agent and back --------------------------------------------------------------------------


def declared(request) -> str:
    """The names of the tools the request declares to the model, in the order it declares them (each agent says
    them in its answer, so the committed events show the order google-adk and agentq declare them in)."""
    return ", ".join(declaration.name for tool in request.config.tools or ()
                     for declaration in tool.function_declarations or ())


def open_hours() -> dict:
    """When the desk is open."""
    return {"hours": "9-17"}


def _route(request):
    if answers(request, "transfer_to_agent"):  # its own transfer is in its history: it is the return
        return text(f"Back at the front desk (tools: {declared(request)}).")
    return calls(("transfer_to_agent", {"agent_name": "billing"}))


def _bill(request):
    return LlmResponse(content=types.Content(role="model", parts=[
        types.Part(text=f"Billing (tools: {declared(request)}) hands back."),
        types.Part(function_call=types.FunctionCall(name="transfer_to_agent", args={"agent_name": "desk"}))]))


billing = LlmAgent(name="billing", description="Answers invoice questions.", instruction="Answer invoices.",
                   model=scripted("mx-billing", _bill), tools=[open_hours])
transfer = flow("transfer", "Is my invoice paid?", LlmAgent(
    name="desk", model=scripted("mx-desk", _route), instruction="Route questions.", tools=[open_hours],
    sub_agents=[billing]))


# --- callbacks that answer instead of the model, the tool and after the agent -----------------------------------


def lookup(item: str) -> dict:
    """Look an item up (the before-tool callback answers first, so this never runs)."""
    raise AssertionError("the before_tool_callback answers this tool")


def _cached(tool, args, tool_context):
    return {"item": args.get("item"), "cached": True}


def _model_answers_once(callback_context, llm_request):
    if answers(llm_request, "lookup"):
        return text("From the callback: cached.")
    return None


def _sign_off(callback_context):
    return types.Content(role="model", parts=[types.Part(text="Signed off by the callback.")])


callbacks = flow("callbacks", "Look up tea", LlmAgent(
    name="librarian", model=scripted("mx-librarian", lambda request: calls(("lookup", {"item": "tea"}))),
    instruction="Look things up.", tools=[lookup], before_tool_callback=_cached,
    before_model_callback=_model_answers_once, after_agent_callback=_sign_off))


# --- artifacts saved by one tool and loaded by another -----------------------------------------------------------


async def save_note(note: str, tool_context: ToolContext) -> dict:
    """Save a note as the artifact note.txt."""
    version = await tool_context.save_artifact("note.txt", types.Part(text=note))
    return {"version": version}


async def read_note(tool_context: ToolContext) -> dict:
    """Read the artifact note.txt back."""
    part = await tool_context.load_artifact("note.txt")
    return {"note": part.text if part is not None else None}


def _notes(request):
    if not answers(request, "save_note"):
        return calls(("save_note", {"note": "buy tea"}))
    read = answers(request, "read_note")
    return calls(("read_note", {})) if not read else text(f"The note says: {read[-1]['note']}")


artifacts = flow("artifacts", "Note: buy tea", LlmAgent(
    name="notes", model=scripted("mx-notes", _notes), instruction="Keep notes.", tools=[save_note, read_note]))


# --- a workflow: a fan-out joined, then a RequestInput answered by a person ------------------------------------


@node
def split(node_input: str) -> str:
    return node_input


@node
def left(node_input: str) -> str:
    return "L:" + node_input


@node
def right(node_input: str) -> str:
    return "R:" + node_input


@node
def review(node_input: dict):
    yield RequestInput(interrupt_id="approve-merge", message="Approve the merge?",
                       payload={"merged": sorted(node_input.items())})


@node
def publish(node_input):
    yield Event(output={"published": node_input}, state={"published": True})


workflow = flow("workflow", "merge this", Workflow(name="merger", edges=[
    (START, split, (left, right), JoinNode(name="join"), review, publish)]),
    answers={"adk_request_input": {"decision": "approve"}})
