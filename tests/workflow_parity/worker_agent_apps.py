"""Apps for agentq's workers built from the agent parity scenarios (``agent_scenarios.py``), to compare what a
worker commits with what google-adk 2.13 yields for the same agents (``test_agents_on_workers.py``)."""

from __future__ import annotations

from runtime.agents import LlmAgent, LoopAgent
from runtime.apps import App, ResumabilityConfig
from runtime.models import LlmRequest, ScriptedLlm, call
from runtime.tools import FunctionTool, LongRunningFunctionTool, ToolContext

from . import agent_scenarios

_lib = agent_scenarios.Lib("runtime")
_RESUMABLE = ResumabilityConfig(is_resumable=True)

sequence_app = App(name="par_seq", root_agent=agent_scenarios.sequence_of_two_tree(_lib))
sequence_resumable_app = App(name="par_seq_r", root_agent=agent_scenarios.sequence_of_two_tree(_lib),
                             resumability_config=_RESUMABLE)
loop_app = App(name="par_loop", root_agent=agent_scenarios.loop_of_two_tree(_lib))
loop_resumable_app = App(name="par_loop_r", root_agent=agent_scenarios.loop_of_two_tree(_lib),
                         resumability_config=_RESUMABLE)

task_app = App(name="par_task", root_agent=agent_scenarios.task_tree(_lib))

# The same agents again for the node-path test: a scenario's scripted model answers one run (its replies are
# used up), so each test runs its own copy.
sequence_paths_app = App(name="par_seq_p", root_agent=agent_scenarios.sequence_of_two_tree(_lib))
sequence_resumable_paths_app = App(name="par_seq_r_p", root_agent=agent_scenarios.sequence_of_two_tree(_lib),
                                   resumability_config=_RESUMABLE)
loop_paths_app = App(name="par_loop_p", root_agent=agent_scenarios.loop_of_two_tree(_lib))
task_paths_app = App(name="par_task_p", root_agent=agent_scenarios.task_tree(_lib))


def ask(question: str) -> None:
    """Ask the user; answered later."""


def _body_turn(request: LlmRequest):
    """First iteration: a text; second: a long-running question (the invocation parks); answered: a text."""
    last = request.contents[-1]
    if any(part.function_response for part in last.parts or []):
        return "answered"
    said = sum(1 for content in request.contents if content.role == "model" and content.parts[0].text)
    return "first pass" if said == 0 else call("ask", question="go on?")


parking_loop_app = App(name="par_park_loop", root_agent=LoopAgent(name="loop", max_iterations=2, sub_agents=[
    LlmAgent(name="body", model=ScriptedLlm(responder=_body_turn), tools=[LongRunningFunctionTool(ask)])]))

APPS = ",".join(f"tests.workflow_parity.worker_agent_apps:{name}" for name in (
    "sequence_app", "sequence_resumable_app", "loop_app", "loop_resumable_app", "parking_loop_app",
    "task_app", "sequence_paths_app", "sequence_resumable_paths_app", "loop_paths_app", "task_paths_app"))


# --- a loop whose worker is killed in its second iteration ---------------------------------------------


def ledger_key(invocation_id: str) -> str:
    """Hash: ``round:<n>`` -> how many times round n's work began."""
    return f"test:parity:ledger:{invocation_id}"


def inside_key(invocation_id: str) -> str:
    """String set while round 2's first attempt runs (the moment to kill its worker)."""
    return f"test:parity:inside:{invocation_id}"


def _redis():
    import os

    from runtime.redis_store.redis_url import redis_client_from_url

    return redis_client_from_url(os.environ["AGENTQ_REDIS_URL"], asyncio=False, decode_responses=True)


async def work(round: int, tool_context: ToolContext) -> dict:  # noqa: A002 - the model's argument name
    """Do one round of work (safe to repeat)."""
    import asyncio

    with _redis() as client:
        began = client.hincrby(ledger_key(tool_context.invocation_id), f"round:{round}", 1)
        if round == 2 and began == 1:
            client.set(inside_key(tool_context.invocation_id), "2")
    if round == 2 and began == 1:
        await asyncio.sleep(120)  # the worker is killed here
    return {"round": round}


def _working_turn(request: LlmRequest):
    """Call work for the next round; once it answered, say that round is done."""
    done = [part.function_response for content in request.contents for part in content.parts or ()
            if part.function_response and part.function_response.name == "work"]
    last = request.contents[-1]
    if any(part.function_response for part in last.parts or []):
        return f"round {len(done)} done"
    return call("work", round=len(done) + 1)


crash_loop_app = App(name="par_crash_loop", root_agent=LoopAgent(name="rounds", max_iterations=3, sub_agents=[
    LlmAgent(name="body", model=ScriptedLlm(responder=_working_turn), tools=[FunctionTool(work, idempotent=True)])]))

APPS += ",tests.workflow_parity.worker_agent_apps:crash_loop_app"
