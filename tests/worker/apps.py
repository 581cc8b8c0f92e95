"""Agent apps the worker tests and the worker benchmark run in real worker processes.

Every model here is a ScriptedLlm with a ``responder``: the answer depends only on the current invocation's part
of the conversation, so any worker (the first, or the one that takes over) answers the same way. Tools count
their side effects in Redis (``AGENTQ_REDIS_URL``), keyed by invocation and call, so tests see doubles.
"""

from __future__ import annotations

import os

from google.genai import types

from runtime.agents import LlmAgent
from runtime.apps import App, EventsCompactionConfig
from runtime.apps.llm_event_summarizer import LlmEventSummarizer
from runtime.events import Event
from runtime.models import LlmRequest, ScriptedLlm
from runtime.plugins import BasePlugin
from runtime.tools import FunctionTool, LongRunningFunctionTool, ToolContext, request_input

_redis = None


def _client():
    global _redis
    if _redis is None:
        from runtime.redis_store.redis_url import redis_client_from_url

        # any store URL: one node, Sentinel, or a Cluster (the counters are one key per invocation)
        _redis = redis_client_from_url(os.environ["AGENTQ_REDIS_URL"], asyncio=False, decode_responses=True)
    return _redis


def side_effects_key(invocation_id: str) -> str:
    """Hash: ``tool:call_id`` -> how many times that call's side effect happened."""
    return f"test:side_effects:{invocation_id}"


def _count(tool_context: ToolContext, tool: str) -> None:
    _client().hincrby(side_effects_key(tool_context.invocation_id), f"{tool}:{tool_context.function_call_id}", 1)


def _since_user_text(request: LlmRequest) -> list[types.Content]:
    """The request's contents after the last user text message: this turn's calls and responses."""
    contents = request.contents
    for index in range(len(contents) - 1, -1, -1):
        if contents[index].role == "user" and any(p.text for p in contents[index].parts or ()):
            return contents[index + 1 :]
    return contents


def _responses(request: LlmRequest) -> list[types.FunctionResponse]:
    return [p.function_response for c in _since_user_text(request) for p in c.parts or () if p.function_response]


# --- human approval: ask (long-running), then pay, then answer ---------------------------------------


def ask_for_approval(amount: int, tool_context: ToolContext) -> None:
    """Ask a human to approve a payment; the answer arrives later."""
    _count(tool_context, "ask_for_approval")


def pay(amount: int, tool_context: ToolContext) -> dict:
    """Pay an approved amount."""
    _count(tool_context, "pay")
    return {"paid": amount}


def _approval_turn(request: LlmRequest):
    responses = _responses(request)
    if not responses:
        return types.FunctionCall(name="ask_for_approval", args={"amount": 100})
    last = responses[-1]
    if last.name == "ask_for_approval":
        if last.will_continue:
            return f"Approval still pending: {last.response}"
        if (last.response or {}).get("approved"):
            return types.FunctionCall(name="pay", args={"amount": 100})
        return f"Not approved: {last.response}"
    return "Paid 100."


approval_app = App(name="approval", root_agent=LlmAgent(
    name="payer", model=ScriptedLlm(responder=_approval_turn),
    tools=[LongRunningFunctionTool(ask_for_approval), FunctionTool(pay)],
))


def _two_calls_turn(request: LlmRequest):
    responses = _responses(request)
    if not responses:
        return [types.FunctionCall(name="ask", args={"q": "a"}), types.FunctionCall(name="ask", args={"q": "b"})]
    return "answers: " + ", ".join(str(r.response) for r in responses if not r.will_continue)


def ask(q: str) -> None:
    """Ask a question; the answer arrives later."""


two_calls_app = App(name="two_calls", root_agent=LlmAgent(
    name="asker", model=ScriptedLlm(responder=_two_calls_turn), tools=[LongRunningFunctionTool(ask)],
))


# --- slow steps: for SIGKILL failover and per-session ordering ---------------------------------------

STEPS = 6


def step(n: int, tool_context: ToolContext) -> dict:
    """Do step n (a side effect)."""
    _count(tool_context, "step")
    return {"done": n}


def _steps_turn(request: LlmRequest):
    done = len(_responses(request))
    if done < STEPS:
        return types.FunctionCall(name="step", args={"n": done + 1})
    return f"all {STEPS} steps done"


slow_app = App(name="slow", root_agent=LlmAgent(
    name="stepper", model=ScriptedLlm(responder=_steps_turn, latency=float(os.environ.get("TEST_MODEL_LATENCY", "0.25"))),
    tools=[FunctionTool(step)],
))


# --- the benchmark's tool round trip (mirrors bench/adk_side/_workload.py) ----------------------------


def get_weather(city: str) -> dict:
    """Returns the current weather for a city."""
    return {"city": city, "forecast": "sunny", "temperature_c": 21}


def _weather_turn(request: LlmRequest):
    if _responses(request):
        return "It is sunny in Paris, 21 C."
    return types.FunctionCall(name="get_weather", args={"city": "Paris"})


def make_weather_app(latency: float = 0.0) -> App:
    """The weather tool round trip, with ``latency`` seconds of model thinking per call."""
    return App(name="weather", root_agent=LlmAgent(
        name="weather_agent", model=ScriptedLlm(responder=_weather_turn, latency=latency),
        instruction="Answer weather questions with the get_weather tool.", tools=[get_weather],
    ))


weather_app = make_weather_app(float(os.environ.get("BENCH_MODEL_LATENCY", "0")))


def _flaky_turn(request: LlmRequest):
    from runtime.errors import RetryableModelError

    if _client().incr("test:flaky_calls") <= 2:
        raise RetryableModelError("429 resource exhausted", code="429")
    return "finally answered"


flaky_app = App(name="flaky", root_agent=LlmAgent(name="flaky", model=ScriptedLlm(responder=_flaky_turn)))


def _broken_turn(request: LlmRequest):
    from runtime.errors import ModelError

    raise ModelError("400 invalid argument", code="400")


broken_app = App(name="broken", root_agent=LlmAgent(name="broken", model=ScriptedLlm(responder=_broken_turn)))


# --- tools whose worker dies while they run: in-doubt calls ---------------------------------------------


def _slow_side_effect(tool_context: ToolContext, tool: str) -> dict:
    import time

    _count(tool_context, tool)
    time.sleep(float(os.environ.get("TEST_TOOL_SECONDS", "3")))  # the worker is SIGKILLed meanwhile
    return {"done": tool}


def transfer_money(tool_context: ToolContext) -> dict:
    """Move money (not safe to repeat)."""
    return _slow_side_effect(tool_context, "transfer_money")


def refresh_cache(tool_context: ToolContext) -> dict:
    """Refresh a cache (safe to repeat)."""
    return _slow_side_effect(tool_context, "refresh_cache")


def _risky_turn(tool_name: str):
    def turn(request: LlmRequest):
        responses = _responses(request)
        if not responses:
            return types.FunctionCall(name=tool_name, args={})
        return f"result: {responses[-1].response}"

    return turn


risky_app = App(name="risky", root_agent=LlmAgent(
    name="risky", model=ScriptedLlm(responder=_risky_turn("transfer_money")), tools=[FunctionTool(transfer_money)],
))
idempotent_app = App(name="idempotent", root_agent=LlmAgent(
    name="idempotent", model=ScriptedLlm(responder=_risky_turn("refresh_cache")),
    tools=[FunctionTool(refresh_cache, idempotent=True)],
))


# --- tool confirmation and request_input ---------------------------------------------------------------


def wire_money(amount: int, tool_context: ToolContext) -> dict:
    """Wire money; amounts above 100 need a person's confirmation. 999 is slow (the worker is killed meanwhile)."""
    _count(tool_context, "wire_money")
    if amount == 999:
        import time

        time.sleep(float(os.environ.get("TEST_TOOL_SECONDS", "3")))
    return {"wired": amount}


def _user_amount(request: LlmRequest) -> int:
    text = next(p.text for c in reversed(request.contents) for p in c.parts or () if c.role == "user" and p.text)
    return int(text.split()[-1])


def _guarded_turn(request: LlmRequest):
    responses = _responses(request)
    if not responses:
        return types.FunctionCall(name="wire_money", args={"amount": _user_amount(request)})
    return f"result: {responses[-1].response}"


guarded_app = App(name="guarded", root_agent=LlmAgent(
    name="banker", model=ScriptedLlm(responder=_guarded_turn),
    tools=[FunctionTool(wire_money, require_confirmation=lambda amount: amount > 100)],
))


def _asking_turn(request: LlmRequest):
    responses = _responses(request)
    if not responses:
        return types.FunctionCall(name="adk_request_input", args={
            "message": "Which city?", "response_schema": {"type": "object", "properties": {"city": {"type": "string"}}}})
    return f"Booked {responses[-1].response.get('city')}."


asking_app = App(name="asking", root_agent=LlmAgent(
    name="planner", model=ScriptedLlm(responder=_asking_turn), tools=[request_input]))


# --- plugins: an App's plugins run in the worker ---------------------------------------------------------


class _WorkerPlugin(BasePlugin):
    """Shouts the user's message, answers get_weather itself, and stamps the agent's events."""

    async def on_user_message_callback(self, *, invocation_context, user_message):
        return types.Content(role="user", parts=[types.Part(text=user_message.parts[0].text.upper())])

    async def before_tool_callback(self, *, tool, tool_args, tool_context):
        return {"answered_by": self.name}

    async def on_event_callback(self, *, invocation_context, event):
        return Event(author=event.author, custom_metadata={"stamped_by": self.name})


def _plugged_turn(request: LlmRequest):
    responses = _responses(request)
    if responses:
        return f"tool said {responses[-1].response}"
    return types.FunctionCall(name="get_weather", args={"city": request.contents[-1].parts[0].text})


plugged_app = App(name="plugged", root_agent=LlmAgent(
    name="plugged", model=ScriptedLlm(responder=_plugged_turn), tools=[get_weather]), plugins=[_WorkerPlugin("wp")])


# --- events compaction: the model is shown a summary of older invocations ------------------------------


def _shown(request: LlmRequest) -> str:
    """The request's contents as ``role:text`` lines joined by '|': the answer shows what the model was sent."""
    return "|".join(f"{c.role}:{c.parts[0].text}" for c in request.contents)


def _summary(request: LlmRequest) -> str:
    history = request.contents[0].parts[0].text.split("\n\n", 1)[1]
    return f"summary of {len(history.splitlines())} lines"


compacting_app = App(
    name="compacting", root_agent=LlmAgent(name="compacting", model=ScriptedLlm(responder=_shown)),
    events_compaction_config=EventsCompactionConfig(
        compaction_interval=2, overlap_size=0, summarizer=LlmEventSummarizer(llm=ScriptedLlm(responder=_summary))))
