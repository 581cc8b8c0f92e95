"""``agentq schedules ...`` against real workers: make, list, trigger (the run completes), pause, runs, delete;
a bad cron is one line on stderr and stores nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.worker.conftest import ROOT


def agentq(redis_url: str, *args: str, code: int = 0) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [sys.executable, "-m", "agentq.cli", *args, "--json"], cwd=ROOT, capture_output=True, text=True, timeout=120,
        env={**os.environ, "AGENTQ_REDIS_URL": redis_url, "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode == code, result.stderr
    return result


def lines(result: subprocess.CompletedProcess) -> list[dict]:
    return [json.loads(line) for line in result.stdout.splitlines()]


@pytest.mark.timeout(300)
async def test_schedules_are_managed_from_the_terminal(workers, client, user):
    refused = agentq(workers.redis_url, "schedules", "create", "weather", user, "--cron", "61 * * * *",
                     "--message", "hi", code=2)
    assert refused.stderr == ("agentq schedules: bad schedule: bad cron expression '61 * * * *' (five fields, or six "
                              "with seconds first)\n")
    [made] = lines(agentq(workers.redis_url, "schedules", "create", "weather", user, "--every", "3600",
                          "--message", "What is the weather in Paris?", "--id", "hourly"))
    assert (made["id"], made["spec"]["intervalS"], made["paused"]) == ("hourly", 3600.0, False)
    [triggered] = lines(agentq(workers.redis_url, "schedules", "trigger", "weather", user, "hourly"))
    record = await client.wait(triggered["invocationId"], timeout=60)
    assert (record.status, record.schedule_id) == ("completed", "hourly")
    [paused] = lines(agentq(workers.redis_url, "schedules", "pause", "weather", user, "hourly"))
    [listed] = lines(agentq(workers.redis_url, "schedules", "list", "weather", user))
    assert (paused["paused"], listed) == (True, paused)
    [run] = lines(agentq(workers.redis_url, "schedules", "runs", "weather", user, "hourly"))
    assert (run["invocationId"], run["status"]) == (record.id, "completed")
    assert lines(agentq(workers.redis_url, "schedules", "delete", "weather", user, "hourly")) == [{"deleted": "hourly"}]
    assert lines(agentq(workers.redis_url, "schedules", "list", "weather", user)) == []
