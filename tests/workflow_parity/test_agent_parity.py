"""agentq's Sequential, Loop, transferring and task agents against google-adk 2.13's, event by event (issue 24).

``agent_scenarios.py`` runs unchanged on both: here on agentq (``runtime``), and as a script in bench/.adk-venv
on google-adk 2.13. Ids, timestamps and a task's ``isolationScope`` (agentq keeps a task on its branch instead;
see tests/runtime/test_delegation_modes.py) are left out of the comparison; each committed event's ``nodeInfo``
path is compared (the scenario's ``paths``) apart from the events' other fields.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
from pathlib import Path

import pytest

from . import agent_scenarios

HERE = Path(__file__).parent

KNOWN_RESUMABLE_DIFFERENCES: set[str] = {
    # an agent the turn is transferred back to commits no end_of_agent for its second run (desk@2) in a
    # resumable app; google-adk commits one (its paths and every other event match)
    "a_transfer_there_and_back_then_a_second_turn/resumable",
}
"""ADK-resumable shapes agentq does not match yet."""


def comparable(value):
    """``value`` without nodeInfo / isolationScope, and with generated call ids inside strings (a task's branch
    ``booker@adk-<uuid>``) made equal."""
    if isinstance(value, dict):
        return {k: comparable(v) for k, v in value.items() if k not in ("nodeInfo", "isolationScope")}
    if isinstance(value, list):
        return [comparable(item) for item in value]
    if isinstance(value, str):
        return re.sub(r"adk-[0-9a-f-]{36}", "adk-<id>", value)
    return value


@pytest.fixture(scope="module")
def adk_results():
    from bench.adk_env import _clean_env, ensure_adk_venv

    try:
        python = ensure_adk_venv()
    except Exception as exc:  # noqa: BLE001 - no registry: the comparison cannot be made here
        pytest.skip(f"cannot install google-adk into bench/.adk-venv: {exc}")
    proc = subprocess.run([str(python), str(HERE / "agent_scenarios.py"), "google.adk"], capture_output=True,
                          text=True, env=_clean_env(), timeout=300, check=False, cwd=HERE)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return comparable(json.loads(proc.stdout))


@pytest.fixture(scope="module")
def agentq_results():
    results = asyncio.run(agent_scenarios.run_all("runtime", modes=(False, True, "durable")))
    return comparable(json.loads(json.dumps(results)))


@pytest.mark.timeout(600)
@pytest.mark.parametrize("case", [f"{name}{suffix}" for name in agent_scenarios.SCENARIOS
                                  for suffix in ("", "/resumable")])
def test_an_agent_scenario_yields_and_commits_the_events_google_adk_does(case, adk_results, agentq_results):
    if case in KNOWN_RESUMABLE_DIFFERENCES:
        pytest.xfail("a known difference of ADK's resumable event shape (see KNOWN_RESUMABLE_DIFFERENCES)")
    assert agentq_results[case] == adk_results[case]


@pytest.mark.parametrize("name", list(agent_scenarios.SCENARIOS))
def test_on_a_durable_runner_an_agent_commits_what_google_adk_commits_in_an_app_that_is_not_resumable(
        name, adk_results, agentq_results):
    """As agentq's workers run an app (a tool journal, no ResumabilityConfig): no agent_state / end_of_agent
    events, the same events as google-adk's plain run; the workflow agents' progress stays in the journal."""
    assert agentq_results[f"{name}/durable"] == adk_results[name]
