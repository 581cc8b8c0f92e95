"""Apps for the Redis-trouble and poison-invocation tests, served by their own worker processes.

``poison``: its (idempotent, so re-run on resume) tool kills the worker process running it (``os._exit`` on the first run, SIGKILL after), the way
a segfault or the OOM killer would. ``steps``: a few tool calls with a little model latency, so a batch keeps
commits, claims and settles in flight the whole time. ``logged_steps``: the same, with a (not idempotent) tool
that notes every run of itself in a file, to count tool runs across a Redis failover (and ``storm``, the same
slower, across worker kills).
"""

from __future__ import annotations

import os
import signal

from google.genai import types

from runtime.agents import LlmAgent
from runtime.apps import App
from runtime.models import LlmRequest, ScriptedLlm
from runtime.tools import FunctionTool, ToolContext


def _client():
    import redis

    return redis.Redis.from_url(os.environ["AGENTQ_REDIS_URL"], decode_responses=True)


def crashes_key(invocation_id: str) -> str:
    """How many times the poison tool killed a worker for this invocation."""
    return f"test:crashes:{invocation_id}"


def crash(tool_context: ToolContext) -> dict:
    """Kill the process running this tool (first by os._exit, then by SIGKILL)."""
    with _client() as client:
        done = client.incr(crashes_key(tool_context.invocation_id))
    if done == 1:
        os._exit(3)
    os.kill(os.getpid(), signal.SIGKILL)
    return {}


def _responses(request: LlmRequest) -> list[types.FunctionResponse]:
    return [p.function_response for c in request.contents for p in c.parts or () if p.function_response]


def _poison_turn(request: LlmRequest):
    if not _responses(request):
        return types.FunctionCall(name="crash", args={})
    return "survived"


poison_app = App(name="poison", root_agent=LlmAgent(
    name="poisoner", model=ScriptedLlm(responder=_poison_turn), tools=[FunctionTool(crash, idempotent=True)]))  # re-run on resume, as a model call would be

STEPS = 5


def step(n: int) -> dict:
    """Do step n."""
    return {"done": n}


def _stepper(tool_name: str):
    """A model turn that calls ``tool_name`` with n = 1 .. STEPS, one call a turn, then says it is done."""

    def turn(request: LlmRequest):
        done = len(_responses(request))
        if done < STEPS:
            return types.FunctionCall(name=tool_name, args={"n": done + 1})
        return f"all {STEPS} steps done"

    return turn


steps_app = App(name="steps", root_agent=LlmAgent(
    name="stepper", model=ScriptedLlm(responder=_stepper("step"), latency=0.2), tools=[FunctionTool(step)]))

TOOL_RUNS_ENV = "AGENTQ_TEST_TOOL_RUNS"
"""A file each run of ``logged_step`` appends a line to (outside Redis, so a failover cannot lose it)."""


def logged_step(n: int, tool_context: ToolContext) -> dict:
    """Do step n, noting the run as ``<invocation id> <function call id>`` in the tool-runs file."""
    line = f"{tool_context.invocation_id} {tool_context.function_call_id}\n"
    with open(os.environ[TOOL_RUNS_ENV], "a") as runs:  # one short O_APPEND write: whole lines across processes
        runs.write(line)
    return {"done": n}


logged_steps_app = App(name="logged_steps", root_agent=LlmAgent(
    name="logger", model=ScriptedLlm(responder=_stepper("logged_step"), latency=0.2), tools=[FunctionTool(logged_step)]))

storm_app = App(name="storm", root_agent=LlmAgent(
    name="weathering", model=ScriptedLlm(responder=_stepper("logged_step"), latency=0.5),
    tools=[FunctionTool(logged_step)]))
"""``logged_steps`` at 0.5 s a model turn (about 3 s an invocation): long enough for a kill storm to cut many off."""

APPS = ("tests.worker.chaos_apps:poison_app,tests.worker.chaos_apps:steps_app,"
        "tests.worker.chaos_apps:logged_steps_app,tests.worker.chaos_apps:storm_app")
