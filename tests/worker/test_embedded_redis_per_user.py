"""One embedded redis-server per user (issue 27 item 6): it lives in the user's data directory
(``$XDG_DATA_HOME/agentq`` here; ``AGENTQ_DATA_DIR`` overrides it), so a command run from another folder finds
the worker's Redis instead of starting a second one that no worker reads; and a command that talks to a Redis
no worker serves says which Redis. Real ``agentq`` processes and real redis-servers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tests.worker.conftest import ROOT


def _env(data_home: Path) -> dict[str, str]:
    """No AGENTQ_REDIS_URL, no AGENTQ_DATA_DIR: the default, the user's data directory under ``data_home``."""
    env = {k: v for k, v in os.environ.items() if k not in ("AGENTQ_REDIS_URL", "AGENTQ_DATA_DIR")}
    return {**env, "XDG_DATA_HOME": str(data_home), "PYTHONPATH": str(ROOT)}


def agentq(folder: Path, data_home: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agentq.cli", *args], cwd=folder, capture_output=True, text=True,
                          timeout=60, env=_env(data_home))


def test_enqueue_from_another_folder_reaches_the_worker_through_the_users_one_embedded_redis(tmp_path):
    data_home, here, elsewhere = tmp_path / "data", tmp_path / "project", tmp_path / "elsewhere"
    here.mkdir()
    elsewhere.mkdir()
    log = (tmp_path / "worker.log").open("wb")
    worker = subprocess.Popen([sys.executable, "-m", "agentq.cli", "worker", "--app", "tests.worker.apps:weather_app"],
                              cwd=here, env=_env(data_home), stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while json.loads(agentq(here, data_home, "status", "--json").stdout or "{}").get("workersAlive") != 1:
            assert worker.poll() is None and time.monotonic() < deadline, "the worker did not start"
            time.sleep(0.2)
        result = agentq(elsewhere, data_home, "enqueue", "weather", "ann", "weather in Paris?", "--follow", "--json")
        assert (result.returncode, result.stderr) == (0, "")  # no "no worker alive" warning: the same Redis
        assert json.loads(result.stdout.splitlines()[-1])["data"]["status"] == "completed"
        assert (data_home / "agentq" / "redis" / "url").is_file()
        assert not (here / ".agentq").exists() and not (elsewhere / ".agentq").exists()
    finally:
        agentq(here, data_home, "stop")
        worker.kill()
        worker.wait()
        log.close()


def test_enqueue_to_a_redis_no_worker_serves_names_that_redis(tmp_path):
    data_home = tmp_path / "data"
    try:
        result = agentq(tmp_path, data_home, "enqueue", "weather", "ann", "weather in Paris?")
        url = (data_home / "agentq" / "redis" / "url").read_text().strip()
        assert (result.returncode, result.stderr.splitlines()) == (0, [
            f"agentq enqueue: no worker alive serves app 'weather' on the Redis at {url} (the embedded redis-server "
            f"in {data_home / 'agentq' / 'redis'}) (served there: none); the invocation waits, queued, until one "
            "does: agentq worker --app module:attr (with the same AGENTQ_REDIS_URL or AGENTQ_DATA_DIR)"])
    finally:
        agentq(tmp_path, data_home, "stop")
