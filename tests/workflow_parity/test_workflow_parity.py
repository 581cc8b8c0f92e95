"""agentq's workflows against google-adk 2.13's, scenario by scenario, event by event.

``scenarios.py`` runs unchanged on both: here on agentq (``runtime``), and as a script in bench/.adk-venv on
google-adk 2.13 (installed there by ``bench.adk_env``; agentq never imports it). Ids and timestamps are left
out; everything else (authors, node paths, outputs, routes, branches, checkpoints, errors, final state) must be
equal, except where a known difference is written down below with its reason.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from . import scenarios

HERE = Path(__file__).parent

# Concurrent nodes' checkpoint events interleave with their outputs as the event loop happens to schedule them:
# ADK 2.13 yields the second branch's RUNNING checkpoint after the first branch's output, agentq before it.
# Each branch's own events, and everything before and after the fan-out, are in the same order.
INTERLEAVED = {"fan_out_and_join/resumable", "three_way_join_and_two_ends/resumable",
               "wait_for_output_until_triggered_twice/resumable"}


@pytest.fixture(scope="module")
def adk_results():
    from bench.adk_env import _clean_env, ensure_adk_venv

    try:
        python = ensure_adk_venv()
    except Exception as exc:  # noqa: BLE001 - no registry: the comparison cannot be made here
        pytest.skip(f"cannot install google-adk into bench/.adk-venv: {exc}")
    proc = subprocess.run([str(python), str(HERE / "scenarios.py"), "google.adk"], capture_output=True,
                          text=True, env=_clean_env(), timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def agentq_results():
    import asyncio

    return json.loads(json.dumps(asyncio.run(scenarios.run_all("runtime", modes=(False, True, "durable")))))


@pytest.mark.timeout(600)
@pytest.mark.parametrize("case", [f"{name}{suffix}" for name in scenarios.SCENARIOS for suffix in ("", "/resumable")])
def test_a_workflow_scenario_yields_the_events_google_adk_yields(case, adk_results, agentq_results):
    expected, actual = adk_results[case], agentq_results[case]
    if case in INTERLEAVED:
        expected, actual = _per_author_and_branch(expected), _per_author_and_branch(actual)
    assert actual == expected


@pytest.mark.parametrize("name", list(scenarios.SCENARIOS))
def test_on_a_durable_runner_a_workflow_yields_adks_events_plus_only_its_own_bookkeeping(name, agentq_results):
    """As agentq's workers run it (a tool journal: resumable, one commit per node boundary), a workflow yields
    what ADK yields without resumability, plus attempt markers and bare completion events, nothing else."""
    plain, durable = agentq_results[name], agentq_results[f"{name}/durable"]
    if "turns" not in plain:  # a scenario about construction: nothing runs
        assert durable == plain
        return
    assert {**durable, "turns": [[e for e in turn if not _bookkeeping(e)] for turn in durable["turns"]]} == plain


def _bookkeeping(event) -> bool:
    if "agentq:node_attempt" in event.get("actions", {}).get("agentState", {}):
        return True
    info = event.get("nodeInfo", {})
    return bool(info.get("outputFor")) and "output" not in event and "content" not in event and not event.get("actions")


def _per_author_and_branch(result):
    """The events of each turn grouped by (branch, node) in order, checkpoints compared as a set of snapshots."""
    turns = []
    for events in result["turns"]:
        grouped: dict[str, list] = {}
        snapshots = []
        for event in events:
            if "agentState" in event.get("actions", {}):
                snapshots.append(json.dumps(event, sort_keys=True))
                continue
            key = f"{event.get('branch')}|{event.get('nodeInfo', {}).get('path')}"
            grouped.setdefault(key, []).append(event)
        turns.append({"by_node": grouped, "checkpoints": sorted(snapshots)})
    return {**result, "turns": turns}
