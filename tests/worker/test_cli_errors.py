"""Errors that say what is wrong (issue 27 item 5), and what the servers say at start: an answer to an invocation
that waits for none names its status; the worker's banner counts what agentq keeps in flight; ``agentq api``
says where ``/ui`` is. Against real workers, a real API process and a real redis-server."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from runtime.redis_store.launcher import free_port
from tests.worker.conftest import ROOT


def agentq(redis_url: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agentq.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=60, env=_env(redis_url))


def _env(redis_url: str) -> dict[str, str]:
    return {**os.environ, "AGENTQ_REDIS_URL": redis_url, "PYTHONPATH": str(ROOT)}


def _completed(redis_url: str, user: str) -> str:
    result = agentq(redis_url, "enqueue", "weather", user, "weather in Paris?", "--follow", "--json")
    [enqueued, *entries] = [json.loads(line) for line in result.stdout.splitlines()]
    assert entries[-1]["data"]["status"] == "completed"
    return enqueued["invocationId"]


def test_approving_a_completed_invocation_says_it_is_completed(workers, user):
    invocation_id = _completed(workers.redis_url, user)
    result = agentq(workers.redis_url, "approve", invocation_id)
    assert (result.returncode, result.stderr.splitlines()) == (2, [
        f"agentq approve: invocation {invocation_id!r} is completed: it waits for no confirmation"])


def test_answering_a_completed_invocation_says_its_status(workers, user):
    invocation_id = _completed(workers.redis_url, user)
    result = agentq(workers.redis_url, "respond", invocation_id, "c1", '{"status": "approved"}')
    assert (result.returncode, result.stderr.splitlines()) == (1, [
        f"agentq respond: function call 'c1' is not pending on invocation {invocation_id!r} (never issued as a "
        f"long-running call, or already answered): it is completed and waits for no answer; its pending calls: "
        f"agentq get {invocation_id}"])


def test_the_worker_banner_counts_the_invocations_agentq_keeps_in_flight(worker_redis):
    worker = subprocess.Popen([sys.executable, "-m", "agentq.cli", "worker", "--app", "tests.worker.apps:weather_app",
                               "--concurrency", "250"], cwd=ROOT, env=_env(worker_redis.url),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        line = next(line for line in worker.stdout if ".> concurrency:" in line)
        assert line.split(".> ", 1)[1].strip() == "concurrency: 250 invocations in flight (agentq; Celery pool: 4 (solo))"
    finally:
        worker.terminate()
        worker.wait(timeout=30)
        worker.stdout.close()


def test_the_api_says_where_the_approvers_page_is(worker_redis):
    port = free_port()
    api = subprocess.Popen([sys.executable, "-m", "agentq.cli", "api", "--app", "tests.worker.apps:weather_app",
                            "--port", str(port)], cwd=ROOT, env=_env(worker_redis.url),
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert api.stdout.readline().strip() == (
            f"agentq api: the approver's page is http://127.0.0.1:{port}/ui, the HTTP API http://127.0.0.1:{port} "
            f"(its docs: http://127.0.0.1:{port}/docs)")
    finally:
        api.terminate()
        try:
            api.wait(timeout=120)  # a loaded machine can take long to shut the server down
        except subprocess.TimeoutExpired:
            api.kill()
            api.wait()
        api.stdout.close()
