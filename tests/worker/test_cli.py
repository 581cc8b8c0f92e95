"""The ``agentq`` terminal commands against real workers: enqueue, follow, respond, get, cancel."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

from tests.worker.conftest import ROOT


def agentq(redis_url: str, *args: str) -> list[dict]:
    """``agentq ARGS --json``: these tests read the wire form (the readable view: tests/worker/test_cli_readable.py)."""
    result = subprocess.run(
        [sys.executable, "-m", "agentq.cli", *args, "--json"], cwd=ROOT, capture_output=True, text=True, timeout=60,
        env={**os.environ, "AGENTQ_REDIS_URL": redis_url, "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_enqueue_follow_and_respond_from_the_terminal_run_the_approval_flow(workers, user):
    [enqueued, *entries] = agentq(workers.redis_url, "enqueue", "approval", user, "Please pay 100", "--follow")
    invocation_id = enqueued["invocationId"]
    assert [e["data"]["status"] for e in entries if e["kind"] == "status"] == ["queued", "running", "parked"]
    [call] = entries[-1]["data"]["detail"]["pendingCalls"]
    assert (call["name"], call["args"]) == ("ask_for_approval", {"amount": 100})

    [answered, *resumed] = agentq(workers.redis_url, "respond", invocation_id, call["id"], '{"approved": true}',
                                  "--follow")
    assert answered == {"invocationId": invocation_id, "status": "queued"}
    assert [e["data"]["status"] for e in resumed if e["kind"] == "status"] == ["queued", "running", "completed"]
    [record] = agentq(workers.redis_url, "get", invocation_id)
    assert (record["id"], record["status"], record["attempts"]) == (invocation_id, "completed", 2)
    assert [e["data"]["content"]["parts"][0].get("text") for e in resumed if e["kind"] == "event"
            and e["data"].get("content")][-1] == "Paid 100."


def _parked_transfer(redis_url: str, user: str, amount: int) -> str:
    [enqueued, *entries] = agentq(redis_url, "enqueue", "guarded", user, f"wire {amount}", "--follow")
    assert [e["data"]["status"] for e in entries if e["kind"] == "status"][-1] == "parked"
    return enqueued["invocationId"]


def test_approve_and_reject_from_the_terminal_answer_a_tool_confirmation(workers, user):
    approved = _parked_transfer(workers.redis_url, user, 500)
    [answered, *resumed] = agentq(workers.redis_url, "approve", approved, "--follow")
    assert answered == {"invocationId": approved, "status": "queued"}
    texts = [p.get("text") for e in resumed if e["kind"] == "event" and e["data"].get("content")
             for p in e["data"]["content"]["parts"]]
    assert texts[-1] == "result: {'wired': 500}"

    rejected = _parked_transfer(workers.redis_url, user, 600)
    [answered, *resumed] = agentq(workers.redis_url, "reject", rejected, "--follow")
    texts = [p.get("text") for e in resumed if e["kind"] == "event" and e["data"].get("content")
             for p in e["data"]["content"]["parts"]]
    assert texts[-1] == "result: {'error': 'This tool call is rejected.'}"


def test_a_refused_answer_from_the_terminal_is_one_line_naming_the_problem(workers, user):
    invocation_id = _parked_transfer(workers.redis_url, user, 700)
    result = subprocess.run(
        [sys.executable, "-m", "agentq.cli", "approve", invocation_id, "adk-not-a-call"], cwd=ROOT,
        capture_output=True, text=True, timeout=60,
        env={**os.environ, "AGENTQ_REDIS_URL": workers.redis_url, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 1
    [record] = agentq(workers.redis_url, "get", invocation_id)
    pending = [call["id"] for call in record["pendingCalls"]]
    assert result.stderr.strip().splitlines() == [
        f"agentq approve: function call 'adk-not-a-call' is not pending on invocation {invocation_id!r} (never "
        f"issued as a long-running call, or already answered): it is parked, waiting for {pending!r}; its pending "
        f"calls: agentq get {invocation_id}"]


def test_default_worker_names_differ_even_for_one_host_and_pid():
    from agentq.run_worker import default_worker_name

    names = {default_worker_name() for _ in range(50)}
    assert len(names) == 50
    assert all(name.startswith(f"agentq-{socket.gethostname()}-{os.getpid()}-") for name in names)
