"""Apps for agentq's workers built from the agent parity scenarios (``agent_scenarios.py``), to compare what a
worker commits with what google-adk 2.13 yields for the same agents (``test_agents_on_workers.py``)."""

from __future__ import annotations

from runtime.agents import LlmAgent, LoopAgent
from runtime.apps import App, ResumabilityConfig
from runtime.models import LlmRequest, ScriptedLlm, call
from runtime.tools import LongRunningFunctionTool

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
    "task_app"))
