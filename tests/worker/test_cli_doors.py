"""The terminal goes through the doors (``api.doors``) as principal ``cli:<os user>``: it is recorded as who
enqueued, and the approval rules the API reads from the environment hold for it too (a quorum of two approvers
is not met by one terminal approving twice), against real workers."""

from __future__ import annotations

import getpass
import json
import os
import subprocess
import sys

from tests.worker.conftest import ROOT

QUORUM_OF_TWO = json.dumps({"guarded": {"*": {"quorum": 2}}})


def agentq(redis_url: str, *args: str, ok: bool = True) -> subprocess.CompletedProcess:
    """``agentq ARGS --json``: these tests read the wire form."""
    result = subprocess.run(
        [sys.executable, "-m", "agentq.cli", *args, "--json"], cwd=ROOT, capture_output=True, text=True, timeout=60,
        env={**os.environ, "AGENTQ_REDIS_URL": redis_url, "PYTHONPATH": str(ROOT),
             "AGENTQ_APPROVAL_POLICY": QUORUM_OF_TWO})
    assert (result.returncode == 0) == ok, result.stderr
    return result


def lines(result: subprocess.CompletedProcess) -> list[dict]:
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_the_terminal_is_recorded_as_who_enqueued_and_one_terminal_approving_twice_does_not_meet_a_quorum(
        workers, user):
    [enqueued, *entries] = lines(agentq(workers.redis_url, "enqueue", "guarded", user, "wire 500", "--follow"))
    invocation_id = enqueued["invocationId"]
    assert [e["data"]["status"] for e in entries if e["kind"] == "status"][-1] == "parked"
    [record] = lines(agentq(workers.redis_url, "get", invocation_id))
    assert record["enqueuedBy"] == f"cli:{getpass.getuser()}"

    [approved] = lines(agentq(workers.redis_url, "approve", invocation_id))
    assert approved == {"invocationId": invocation_id, "status": "parked"}  # one approver of two: recorded
    again = agentq(workers.redis_url, "approve", invocation_id, ok=False)
    assert "approval rule 'quorum'" in again.stderr and f"'cli:{getpass.getuser()}'" in again.stderr
    [record] = lines(agentq(workers.redis_url, "get", invocation_id))
    assert record["status"] == "parked"
    assert list(record["approvals"].values()) == [[f"cli:{getpass.getuser()}"]]
