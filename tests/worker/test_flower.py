"""Flower, started against the workers' broker, sees a worker and a finished run task through its HTTP API."""

from __future__ import annotations

import time

import httpx

from tests.worker.flower_process import flower_running


def _get_json(url: str, deadline: float, ready) -> object:
    while True:
        try:
            reply = httpx.get(url, timeout=5)
            if reply.status_code == 200 and ready(reply.json()):
                return reply.json()
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, f"Flower never answered {url} as expected"
        time.sleep(0.2)


async def test_flower_sees_the_worker_and_a_finished_run_task(workers, client, user, tmp_path):
    with flower_running(workers.redis_url, tmp_path / "flower.log") as base:
        deadline = time.monotonic() + 60
        names = _get_json(f"{base}/api/workers?refresh=1", deadline, lambda body: any(
            name.startswith(("w1@", "w2@")) for name in body))
        assert {name.split("@")[0] for name in names} >= {"w1", "w2"}
        session = await client.create_session("weather", user)
        invocation_id = await client.enqueue("weather", user, session.id, "Weather in Paris?")
        assert (await client.wait(invocation_id, timeout=30)).status == "completed"
        tasks = _get_json(f"{base}/api/tasks", deadline, lambda body: any(
            task.get("args") and invocation_id in task["args"] and task.get("state") == "SUCCESS"
            for task in body.values()))
        runs = [(t["name"], t["state"], t["result"]) for t in tasks.values() if invocation_id in (t.get("args") or "")]
        assert ("agentq.run", "SUCCESS", "'handed over'") in runs
