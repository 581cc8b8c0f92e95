"""A schedule's runs go through the enqueue rate limits and in-flight quotas of their app's user
(``worker.queues.rate_limits``, ``AGENTQ_RATE_*``), as an enqueue over HTTP does: a tick they refuse is skipped and the
schedule says why; a trigger they refuse is a 429. And a run names its schedule wherever its invocation is read.

Real ``agentq worker`` processes (conftest) and a real ``agentq scheduler``; the ``flood`` app's model holds each
run until its gate opens (never here), so a run stays in flight until the test cancels it.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from api import ApiSettings, create_app
from api.access.auth import parse_keys
from api.access.rate_limits import RateLimits
from api.services import redis_services
from tests.api.conftest import make_client
from tests.worker.fair_apps import GATE_KEY

from .test_schedules_e2e import Schedulers

KEY = "schedule-admission-key-01"


async def _schedule_once_skipped(client, user: str, schedule_id: str, skipped: int):
    """The schedule once ``skipped`` of its ticks were skipped, or as it is after 60 s."""
    deadline = time.monotonic() + 60
    while True:
        schedule = await client.schedules.get("flood", user, schedule_id)
        if getattr(schedule, "skipped", 0) >= skipped or time.monotonic() > deadline:
            return schedule
        await asyncio.sleep(0.1)


@pytest.mark.timeout(180)
async def test_ticks_refused_by_the_users_in_flight_quota_are_skipped_and_the_schedule_says_why(
        workers, client, user, monkeypatch):
    monkeypatch.setenv("AGENTQ_RATE_USER_INFLIGHT", "1")  # read by the scheduler process started below
    await client._store.redis.delete(GATE_KEY)  # every run stays in flight
    schedulers = Schedulers(workers)
    schedule = await client.schedules.create("flood", user, {"intervalS": 1, "newMessage": "hold on"})
    try:
        schedulers.start(f"admission-{user}")
        seen = await _schedule_once_skipped(client, user, schedule.id, skipped=2)
        await client.schedules.pause("flood", user, schedule.id)
        runs = await client.schedules.runs("flood", user, schedule.id)
        # the first tick's run is in flight and holds the user's one place; the ticks after it were skipped
        assert (seen.runs, len(runs), seen.skipped >= 2) == (1, 1, True)
        assert "AGENTQ_RATE_USER_INFLIGHT" in seen.last_skip_reason
        assert seen.to_json_dict()["lastSkipReason"] == seen.last_skip_reason
    finally:
        schedulers.stop_all()
        for run in await client.schedules.runs("flood", user, schedule.id):
            if run.status not in ("completed", "failed", "cancelled"):
                await client.cancel(run.id, "test over")


@pytest.mark.timeout(120)
async def test_a_trigger_past_the_in_flight_quota_is_a_429_and_a_run_names_its_schedule_wherever_it_is_read(
        workers, client, user, worker_redis, monkeypatch):
    monkeypatch.setenv("AGENTQ_RATE_USER_INFLIGHT", "1")  # read by the API's client when it is made
    await client._store.redis.delete(GATE_KEY)
    backed = redis_services(worker_redis.url)
    limits = RateLimits.from_env()
    app = create_app(ApiSettings(app_names=["flood"], keys=parse_keys({KEY: {"users": ["*"], "apps": ["*"]}}),
                                 rate_limits=limits), backed.services)
    base = f"/apps/flood/users/{user}"
    run_id = None
    try:
        async with make_client(app, key=KEY) as http:
            created = await http.post(f"{base}/schedules", json={"intervalS": 3600, "newMessage": "hold on"})
            assert created.status_code == 201, created.text
            schedule_id = created.json()["id"]
            first = await http.post(f"{base}/schedules/{schedule_id}/trigger")
            assert first.status_code == 202, first.text
            run_id = first.json()["invocationId"]
            second = await http.post(f"{base}/schedules/{schedule_id}/trigger")
            assert (second.status_code, second.headers.get("retry-after")) == (429, "1"), second.text
            assert "AGENTQ_RATE_USER_INFLIGHT" in second.json()["detail"]
            one = (await http.get(f"/invocations/{run_id}")).json()
            listed = (await http.get(f"{base}/invocations")).json()["invocations"]
            assert (one["scheduleId"], [item.get("scheduleId") for item in listed]) == (schedule_id, [schedule_id])
    finally:
        if run_id is not None:
            await client.cancel(run_id, "test over")
        await limits.aclose()
        await backed.aclose()
