"""A new user's first hour with ``agentq``: the inbox, status, one-line errors, and the embedded redis-server's
lifecycle (found by clients, stopped by ``agentq stop`` and by the last process using it), against real
workers, a real API process and real redis-servers."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from runtime.redis_store.launcher import free_port
from tests.worker.conftest import ROOT
from worker.config.local_redis import answers

AGENTQ_BIN = Path(sys.executable).parent


def run(*args: str, redis_url: str | None = None, cwd: Path = ROOT, timeout: float = 60) -> subprocess.CompletedProcess:
    """``agentq ARGS``; ``redis_url`` None: no AGENTQ_REDIS_URL, so the embedded redis-server of
    ``cwd/.agentq`` (AGENTQ_DATA_DIR: a test never uses the user's own data directory)."""
    return subprocess.run([sys.executable, "-m", "agentq.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=_env(redis_url, cwd))


def _env(redis_url: str | None, folder: Path | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("AGENTQ_REDIS_URL", "AGENTQ_DATA_DIR")}
    env.update(PYTHONPATH=str(ROOT), PATH=f"{AGENTQ_BIN}{os.pathsep}{env.get('PATH', '')}")
    if redis_url:
        env["AGENTQ_REDIS_URL"] = redis_url
    if folder is not None:
        env["AGENTQ_DATA_DIR"] = str(folder / ".agentq")
    return env


def lines(result: subprocess.CompletedProcess) -> list[dict]:
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def park(redis_url: str, user: str) -> dict:
    """An approval invocation of ``user``, parked on ask_for_approval; its enqueue line."""
    [enqueued, *entries] = lines(run("enqueue", "approval", user, "Please pay 100", "--follow", "--json",
                                    redis_url=redis_url))
    assert [e["data"]["status"] for e in entries if e["kind"] == "status"][-1] == "parked"
    return enqueued


# --- the inbox ----------------------------------------------------------------------------------------------


def test_inbox_lists_a_users_parked_invocations_with_the_command_that_answers_them(workers, user):
    invocation_id = park(workers.redis_url, user)["invocationId"]
    [item] = lines(run("inbox", "--user", user, "--json", redis_url=workers.redis_url))
    [call] = item.pop("pendingCalls")
    assert (call["name"], call["kind"], call["args"]) == ("ask_for_approval", "long_running", {"amount": 100})
    assert {k: v for k, v in item.items() if k not in ("sessionId", "parkedAt")} == {
        "invocationId": invocation_id, "appName": "approval", "userId": user, "message": "Please pay 100",
        "answerWith": f"agentq respond {invocation_id} {call['id']} '{{\"status\": \"approved\"}}'"}
    assert lines(run("inbox", "--user", user, "--app", "weather", "--json", redis_url=workers.redis_url)) == []


def test_inbox_follow_prints_each_invocation_that_parks_until_ctrl_c(workers, user):
    first = park(workers.redis_url, user)["invocationId"]
    follower = subprocess.Popen([sys.executable, "-m", "agentq.cli", "inbox", "--user", user, "--follow", "--json"],
                                cwd=ROOT,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(workers.redis_url))
    try:
        assert json.loads(follower.stdout.readline())["invocationId"] == first  # what waits already
        second = park(workers.redis_url, user)["invocationId"]
        assert json.loads(follower.stdout.readline())["invocationId"] == second  # then what parks
        follower.send_signal(signal.SIGINT)
        assert follower.wait(timeout=30) == 130
        assert (follower.stdout.read(), follower.stderr.read()) == ("", "")  # printed once each, no traceback
    finally:
        follower.kill()
        follower.wait()
        follower.stdout.close()
        follower.stderr.close()


# --- status -------------------------------------------------------------------------------------------------


def test_status_shows_workers_alive_queue_depth_and_counts_by_status(workers, user):
    park(workers.redis_url, user)
    figures = json.loads(run("status", "--json", redis_url=workers.redis_url).stdout)
    assert {"w1", "w2"} <= {worker["name"] for worker in figures["workers"]}
    assert figures["workersAlive"] == len(figures["workers"])
    assert list(figures["counts"]) == ["queued", "running", "parked", "completed", "failed", "cancelled"]
    assert figures["counts"]["parked"] >= 1 and figures["queueDepth"] >= 0
    text = run("status", redis_url=workers.redis_url).stdout.splitlines()
    assert [line.split()[0] for line in text] == ["redis", "workers", "queue", "invocations"]
    assert text[1].startswith(f"workers      {figures['workersAlive']} alive: ")


# --- errors: one line, exit 2 for usage, 1 for a refusal ----------------------------------------------------


@pytest.mark.parametrize(("args", "code", "line"), [
    (["respond", "e-nope", "c1", "not json"], 2,
     "agentq respond: argument response: 'not json' is not JSON (Expecting value: line 1 column 1 (char 0)); put "
     """it in single quotes, e.g. '{"status": "approved"}' (see `agentq respond --help`)"""),
    (["frobnicate"], 2, "agentq: argument COMMAND: invalid choice: 'frobnicate' (choose from 'worker', 'enqueue', "
     "'follow', 'respond', 'approve', 'reject', 'cancel', 'get', 'inbox', 'list', 'rewind', 'status', 'scheduler', 'schedules', 'stop', 'migrate', 'keys', 'api', 'demo') "
     "(see `agentq --help`)"),
    (["worker", "--app", "no_such_module:app"], 2,
     "agentq worker: cannot import module 'no_such_module' for app 'no_such_module:app': No module named "
     "'no_such_module' (run from the folder that holds the module, or add that folder to PYTHONPATH)"),
    (["inbox", "--limit", "0"], 2, "agentq inbox: --limit must be at least 1, not 0"),
])
def test_a_usage_error_is_one_line_with_exit_code_2(worker_redis, args, code, line):
    result = run(*args, redis_url=worker_redis.url)
    assert (result.returncode, result.stderr.splitlines(), result.stdout) == (code, [line], "")


def test_an_unknown_invocation_or_call_is_one_line_naming_the_fix_with_exit_code_1(workers, user):
    result = run("respond", "e-nope", "c1", '{"status": "approved"}', redis_url=workers.redis_url)
    assert (result.returncode, result.stderr.splitlines()) == (1, [
        f"agentq respond: invocation 'e-nope' does not exist, in the Redis at {workers.redis_url} (the one your "
        "workers use? `agentq inbox` lists the parked invocations there)"])
    invocation_id = park(workers.redis_url, user)["invocationId"]
    result = run("respond", invocation_id, "wrong-call", '{"status": "approved"}', redis_url=workers.redis_url)
    [record] = lines(run("get", invocation_id, "--json", redis_url=workers.redis_url))
    pending = [call["id"] for call in record["pendingCalls"]]
    assert (result.returncode, result.stderr.splitlines()) == (1, [
        f"agentq respond: function call 'wrong-call' is not pending on invocation {invocation_id!r} (never issued "
        f"as a long-running call, or already answered): it is parked, waiting for {pending!r}; its pending calls: "
        f"agentq get {invocation_id}"])


def test_redis_out_of_reach_is_one_line_and_debug_shows_the_traceback():
    url = f"redis://127.0.0.1:{free_port()}/0"
    result = run("get", "e-1", redis_url=url)
    [line] = result.stderr.splitlines()
    assert result.returncode == 1
    assert line.startswith(f"agentq get: cannot reach Redis at {url} (")
    assert line.endswith("); start it, or unset AGENTQ_REDIS_URL and --redis-url to use the embedded redis-server")
    debug = run("--debug", "get", "e-1", redis_url=url)
    assert debug.returncode == 1 and "Traceback (most recent call last)" in debug.stderr


# --- the embedded redis-server: found, shared, stopped -----------------------------------------------------


def test_a_client_with_no_url_and_no_embedded_redis_says_how_to_get_one(tmp_path, monkeypatch):
    from runtime.errors import UsageError
    from worker.client import SyncAgentqClient

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("AGENTQ_REDIS_URL", raising=False)
    monkeypatch.delenv("AGENTQ_DATA_DIR", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))  # the user's data directory, not this folder
    with pytest.raises(UsageError) as raised:
        SyncAgentqClient()
    assert str(raised.value) == (
        f"no Redis URL: AGENTQ_REDIS_URL is unset and no embedded redis-server runs under "
        f"{str(tmp_path / 'data' / 'agentq')!r}; start `agentq worker` or `agentq api` first (with the same "
        "AGENTQ_DATA_DIR), or pass a redis:// URL")


def test_the_api_stopped_with_sigterm_stops_the_embedded_redis_server_it_started(tmp_path):
    port = free_port()
    api = subprocess.Popen([sys.executable, "-m", "agentq.cli", "api", "--app", "reimbursement", "--port", str(port)],
                           cwd=tmp_path, env=_env(None, tmp_path), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_for(lambda: _healthy(port), api)
        url = (tmp_path / ".agentq" / "redis" / "url").read_text().strip()
        assert answers(url)
        api.send_signal(signal.SIGTERM)
        assert api.wait(timeout=30) == 0
        assert not answers(url)
    finally:
        api.kill()
        api.wait()
        _stop_embedded_redis(tmp_path)


def readme_block(marker: str) -> str:
    """The README's fenced code block whose first line starts with ``marker``."""
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```[a-z]*\n(.*?)```", text, flags=re.S)
    [block] = [b for b in blocks if b.startswith(marker)]
    return block


def test_the_readme_myapp_runs_offline_from_the_terminal_and_agentq_stop_ends_worker_and_redis(tmp_path, monkeypatch):
    (tmp_path / "myapp.py").write_text(readme_block("# myapp.py"))
    terminal = readme_block("agentq worker --app myapp:app &").splitlines()
    enqueue_line = next(line for line in terminal if line.startswith("agentq enqueue")).split("  #")[0]
    log = (tmp_path / "worker.log").open("wb")
    worker = subprocess.Popen([sys.executable, "-m", "agentq.cli", "worker", "--app", "myapp:app"], cwd=tmp_path,
                              env=_env(None, tmp_path), stdout=log, stderr=subprocess.STDOUT)
    try:
        url_file = tmp_path / ".agentq" / "redis" / "url"
        _wait_for(lambda: url_file.is_file() and json.loads(run("status", "--json", cwd=tmp_path).stdout or "{}")
                  .get("workersAlive") == 1, worker)
        # The README's line, through a shell: single quotes keep "$1200" whole.
        shell = subprocess.run(["bash", "-c", enqueue_line + " --json"], cwd=tmp_path, env=_env(None, tmp_path),
                               capture_output=True, text=True, timeout=60)
        [enqueued, *entries] = lines(shell)
        [call] = entries[-1]["data"]["detail"]["pendingCalls"]
        assert (call["name"], call["args"]) == ("ask_for_approval", {"purpose": "a claim", "amount": 1200.0})

        [item] = lines(run("inbox", "--json", cwd=tmp_path))
        answered = subprocess.run(["bash", "-c", item["answerWith"] + " --follow --json"], cwd=tmp_path,
                                  env=_env(None, tmp_path),
                                  capture_output=True, text=True, timeout=60)
        texts = [p["text"] for e in lines(answered) if e.get("kind") == "event" and e["data"].get("content")
                 for p in e["data"]["content"]["parts"] if p.get("text")]
        assert texts[-1] == "Paid $1200.00."

        from worker.client import SyncAgentqClient

        monkeypatch.chdir(tmp_path)  # a Python client finds the same redis-server by itself
        monkeypatch.delenv("AGENTQ_REDIS_URL", raising=False)
        monkeypatch.setenv("AGENTQ_DATA_DIR", str(tmp_path / ".agentq"))
        with SyncAgentqClient() as client:
            assert client.get(enqueued["invocationId"]).status == "completed"

        url = url_file.read_text().strip()
        stopped = run("stop", cwd=tmp_path)
        assert (stopped.returncode, stopped.stdout.splitlines()) == (0, [
            f"stopping agentq worker (pid {worker.pid})",
            f"the embedded redis-server stopped with them (data kept in {tmp_path / '.agentq' / 'redis'})"])
        assert worker.wait(timeout=30) == 0
        assert not answers(url)
        assert run("status", cwd=tmp_path).stdout.startswith("redis        not running")
    finally:
        worker.kill()
        worker.wait()
        log.close()
        _stop_embedded_redis(tmp_path)


def _stop_embedded_redis(folder: Path) -> None:
    """After a failed test: the embedded redis-server runs in its own session, so a killed parent leaves it."""
    from agentq.embedded import shutdown
    from worker.config.local_redis import running_url

    url = running_url(folder / ".agentq")
    if url is not None:
        shutdown(url)


def _healthy(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


def _wait_for(condition, process: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert process.poll() is None, f"exited with {process.returncode}"
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)
