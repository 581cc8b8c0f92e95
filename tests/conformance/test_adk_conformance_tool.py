"""google-adk's own conformance tool (``adk conformance test``, from google-adk 2.13 in bench/.adk-venv) against
agentq's real server and workers, on the cases in ``cases/``: recorded with google-adk serving the very same agents
(``agents/``, one code base for both libraries; ``python -m tests.conformance.adk_server record`` re-records them).

Every model call and tool call is answered from the recordings (``runtime.conformance``, enabled on the workers by
``AGENTQ_CONFORMANCE_CASES``), after agentq checked that it asked what google-adk asked; the tool then compares
the session agentq committed, event by event, with google-adk's. Both streaming modes run.
"""

from __future__ import annotations

import shutil
import socket
import subprocess

import pytest

from agentq.local_stack import LocalStack

from .adk_server import AGENTS, CASES, PLUGINS, PORT, adk_api_server, adk_bin, conformance

APPS = [f"{name}.agent:root_agent" for name in (
    "weather", "approvals", "payments", "router", "review_flow", "parallel_calls", "translator", "pipeline",
    "refiner", "front_desk", "guarded", "notes", "join_flow", "concierge")]
CASE_COUNT = sum(1 for _ in CASES.rglob("spec.yaml"))


def _port_is_free(port: int) -> bool:
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@pytest.mark.timeout(900)  # a fresh machine installs google-adk into bench/.adk-venv first
def test_adk_conformance_test_passes_against_agentq_on_every_recorded_case(tmp_path, monkeypatch):
    tool = adk_bin()
    assert _port_is_free(PORT), f"adk conformance only talks to 127.0.0.1:{PORT}, which something else holds"
    monkeypatch.setenv("PYTHONPATH", str(AGENTS))  # the stack puts the project after it
    with LocalStack(tmp_path, apps=APPS, api_port=PORT,
                    extra_env={"AGENTQ_CONFORMANCE_CASES": str(CASES)}) as stack:
        done = subprocess.run([str(tool), "conformance", "test", str(CASES)], capture_output=True, text=True,
                              timeout=600)
        report = done.stdout + done.stderr
        print(report)
        assert done.returncode == 0, report + stack.log_tail("worker0")
    assert CASE_COUNT >= 15
    _assert_every_case_passed(report)


def _assert_every_case_passed(report: str) -> None:
    # one summary per streaming mode (none, sse), every case passed in each
    assert report.count(f"Total tests: {CASE_COUNT}") == 2, report
    assert report.count(f"Passed: {CASE_COUNT}") == 2, report
    assert "FAIL" not in report


@pytest.mark.timeout(900)
def test_every_recorded_case_passes_on_google_adk_itself(tmp_path):
    """The recordings are google-adk's own: replayed by its tool against its own server (its ReplayPlugin), every
    case passes, so a case agentq fails is agentq's difference, not a bad recording."""
    adk_bin()
    assert _port_is_free(PORT), f"adk conformance only talks to 127.0.0.1:{PORT}, which something else holds"
    agents = tmp_path / "agents"  # a copy: google-adk's server writes a session database beside each agent
    shutil.copytree(AGENTS, agents, ignore=shutil.ignore_patterns(".adk", "__pycache__"))
    with adk_api_server(PLUGINS["check"], tmp_path / "adk-server.log", agents):
        done = conformance("test", str(CASES))
    report = done.stdout + done.stderr
    print(report)
    assert done.returncode == 0, report + (tmp_path / "adk-server.log").read_text()[-3000:]
    _assert_every_case_passed(report)
