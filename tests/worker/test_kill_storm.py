"""A kill storm: worker processes SIGKILLed at random while 200 invocations run. Their deaths are not the
invocations' fault: none fails, none is lost, and no tool side effect happens twice (worker.fleet.attempts)."""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter

import pytest

from runtime.redis_store.launcher import EmbeddedRedis
from tests.worker.chaos_apps import STEPS, TOOL_RUNS_ENV
from tests.worker.chaos_pool import ChaosPool, settle_all
from worker.client import AgentqClient

INVOCATIONS = 200
KILLS = 20
WORKERS = ("k1", "k2", "k3")


@pytest.fixture
def storm(tmp_path):
    """Worker processes of the chaos apps on a redis-server of their own (each test's kills touch no other)."""
    server = EmbeddedRedis(tmp_path / "redis").start()
    tool_runs = tmp_path / "tool-runs.txt"
    tool_runs.touch()
    (tmp_path / "logs").mkdir()
    pool = ChaosPool(server.url, tmp_path / "logs", **{TOOL_RUNS_ENV: str(tool_runs)})
    pool.tool_runs = tool_runs
    yield pool
    pool.stop_all()
    server.stop()


async def _kill_at_random(pool: ChaosPool, rng: random.Random) -> list[str]:
    """KILLS SIGKILLs, about one a second, each of a random running worker (serving, or still starting after an
    earlier kill), which is started again at once."""
    killed = []
    while len(killed) < KILLS:
        await asyncio.sleep(rng.uniform(0.6, 1.4))
        alive = pool.alive()
        if alive:
            name = rng.choice(alive)
            pool.kill(name)
            killed.append(name)
            pool.start(name)
    return killed


@pytest.mark.timeout(600)
async def test_two_hundred_invocations_through_twenty_worker_kills_all_complete_and_no_tool_runs_twice(storm):
    storm.ensure(*WORKERS)
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    started = time.monotonic()
    async with AgentqClient(storm.redis_url) as client:
        kills = asyncio.create_task(_kill_at_random(storm, rng))
        ids = []
        for n in range(INVOCATIONS):  # spread over the storm, so kills keep finding invocations in flight
            session = await client.create_session("storm", "u1")
            ids.append(await client.enqueue("storm", "u1", session.id, f"go {n}"))
            await asyncio.sleep(0.1)
        killed = await kills
        storm.ensure(*WORKERS)
        try:
            statuses = await settle_all(client, ids, timeout=400)
        except AssertionError as failure:  # name the stuck invocations' log lines too
            mentioned = [i for i in ids if i in str(failure)]
            lines = [line for line in storm.logs().splitlines() if any(i in line for i in mentioned)]
            raise AssertionError(f"{failure}\nseed {seed}; their log lines:\n" + "\n".join(lines)) from None
        records = [await client._store.fields(client._store.record_key(i, await client._store.locate(i)))
                   for i in ids]
    elapsed = time.monotonic() - started
    runs = Counter(storm.tool_runs.read_text().splitlines())
    logs = storm.logs()
    suspected = sum(int(fields.get("suspected", 0)) for fields in records)
    charged = sum(int(fields.get("crashes", 0)) for fields in records)
    print(f"seed {seed}; kills {Counter(killed)}; {sum(1 for f in records if 'suspected' in f)} invocations cut "
          f"off ({suspected} cut-offs), {logs.count('running alone in quarantine process')} runs in quarantine, "
          f"{charged} crashes charged, {sum(runs.values())} tool runs for {len(runs)} calls; {elapsed:.1f}s")

    assert (len(killed), Counter(statuses.values())) == (KILLS, Counter({"completed": INVOCATIONS}))
    assert [line for line, count in runs.items() if count > 1] == []  # nothing done twice
    assert {line.split()[0] for line in runs} <= set(ids) and len(runs) <= INVOCATIONS * STEPS
    assert suspected > 0  # the kills did cut invocations off
    assert charged == 0


async def _wait_for(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.1)


@pytest.mark.timeout(240)
async def test_a_graceful_shutdown_hands_back_shared_and_quarantined_runs_without_charging_them(storm):
    storm.ensure("g1")
    async with AgentqClient(storm.redis_url) as client:
        ids = []
        for n in range(10):
            session = await client.create_session("storm", "u2")
            ids.append(await client.enqueue("storm", "u2", session.id, f"go {n}"))
        running = [0]

        async def count_running() -> None:
            running[0] = sum([(await client.get(i)).status == "running" for i in ids])

        deadline = time.monotonic() + 60
        while running[0] < len(ids):
            assert time.monotonic() < deadline, "the invocations did not all start"
            await count_running()
        storm.kill("g1")  # every one of them is now suspected once, and runs alone from now on
        storm.ensure("g1")
        quarantined = storm.logs().count("running alone in quarantine process")
        await _wait_for(lambda: storm.logs().count("running alone in quarantine process") > quarantined, 60,
                        "a run in quarantine")
        storm.processes["g1"].terminate()  # SIGTERM: Celery's warm shutdown
        assert storm.processes["g1"].wait(timeout=60) == 0
        storm.ensure("g2")
        statuses = await settle_all(client, ids, timeout=120)
        records = [await client._store.fields(client._store.record_key(i, await client._store.locate(i)))
                   for i in ids]
    handed_back = storm.logs().count("handed back (worker shutting down)")
    print(f"{handed_back} runs handed back at the SIGTERM")

    assert statuses == dict.fromkeys(ids, "completed")
    assert handed_back > 0
    assert [(fields.get("suspected"), fields.get("crashes")) for fields in records] == [("1", None)] * len(ids)
