"""A schedule ticking every second for a minute on two real workers and two real `agentq scheduler` processes,
with schedulers and workers killed and restarted in between: every tick is enqueued exactly once."""

from __future__ import annotations

import asyncio
import signal
import statistics
import subprocess
import sys
import time

import pytest

from runtime.redis_store import keys

from .conftest import ROOT

APP = "weather"
RUN_FOR_S = 60.0


class Schedulers:
    """Named ``agentq scheduler`` processes on the worker pool's redis-server."""

    def __init__(self, pool):
        self.pool = pool
        self.processes: dict[str, subprocess.Popen] = {}

    def start(self, name: str) -> None:
        """Start it and return once it runs its loop (its start line is logged)."""
        path = self.pool.log_dir / f"{name}.log"
        started = path.read_text().count(" started") if path.exists() else 0
        log = open(path, "ab")  # noqa: SIM115 (closed with the process)
        self.processes[name] = process = subprocess.Popen(
            [sys.executable, "-m", "agentq.cli", "--log-level", "INFO", "scheduler", "--name", name],
            cwd=ROOT, env=self.pool.env(), stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        while path.read_text().count(" started") == started:
            assert process.poll() is None, f"scheduler {name!r} exited: {path.read_text()}"
            assert time.monotonic() < deadline, f"scheduler {name!r} did not start"
            time.sleep(0.1)

    def stop(self, name: str, sig: int = signal.SIGKILL) -> None:
        process = self.processes[name]
        process.send_signal(sig)
        process.wait(timeout=30)

    def stop_all(self) -> None:
        for name, process in self.processes.items():
            if process.poll() is None:
                self.stop(name, signal.SIGTERM)

    def fired(self, name: str) -> int:
        return (self.pool.log_dir / f"{name}.log").read_text().count(" enqueued e-")


@pytest.fixture
def schedulers(worker_pool):
    procs = Schedulers(worker_pool)
    yield procs
    procs.stop_all()


@pytest.mark.timeout(420)
async def test_a_one_second_schedule_enqueues_every_tick_once_through_scheduler_and_worker_restarts(
        client, workers, schedulers, user):
    await asyncio.gather(*(asyncio.to_thread(schedulers.start, name) for name in ("sched-a", "sched-b")))
    made = await client.schedules.create(APP, user, {"intervalS": 1, "missed": "all",
                                                     "newMessage": "What is the weather in Paris?"})
    began = time.time()
    # Each restart waits for the new process to run its loop, so one scheduler is always up except in step 4.
    schedulers.stop("sched-a")  # 1. SIGKILL: whatever it was doing is cut off; sched-b carries on
    await asyncio.sleep(3)
    await asyncio.to_thread(schedulers.start, "sched-a")
    workers.kill("w1")  # 2. a worker dies (its runs are taken over) and comes back
    workers.start("w1")
    await asyncio.sleep(3)
    schedulers.stop("sched-b", signal.SIGTERM)  # 3. a clean stop; sched-a carries on
    await asyncio.to_thread(schedulers.start, "sched-b")
    schedulers.stop("sched-a")  # 4. both down: ticks fall with no scheduler, caught up under missed="all"
    schedulers.stop("sched-b")
    both_down = time.time()
    await asyncio.sleep(3)
    await asyncio.gather(*(asyncio.to_thread(schedulers.start, name) for name in ("sched-a", "sched-b")))
    both_up = time.time()
    workers.kill("w2")  # 5. the other worker dies and comes back
    workers.start("w2")
    await asyncio.sleep(max(3.0, began + RUN_FOR_S - time.time()))
    # A loaded machine may leave the restarted schedulers catching up: pause once they are back on the clock.
    deadline = time.time() + 120
    while True:
        current = await client.schedules.get(APP, user, made.id)
        if current.runs >= RUN_FOR_S and current.next_run_at > time.time() - 1.5 or time.time() > deadline:
            break
        await asyncio.sleep(0.2)
    paused = await client.schedules.pause(APP, user, made.id)
    stopped_at = time.time()

    ticks = await client._store.redis.zrange(keys.schedule_runs(APP, user, made.id), 0, -1, withscores=True)
    tick_ms = [int(score) for _, score in ticks]
    first = round(made.next_run_at * 1000)
    # Every tick from the first to the last, each once, and none of the last seconds left out.
    assert tick_ms == list(range(first, tick_ms[-1] + 1, 1000))
    # The schedule stands at the tick after the last one run: no tick was consumed without its run.
    paused_state = await client._store.redis.hget(keys.schedule(APP, user, made.id), "next_tick")
    assert (int(paused_state), paused.runs, paused.missed) == (tick_ms[-1] + 1000, len(tick_ms), 0)
    assert len(tick_ms) >= RUN_FOR_S

    # Nothing else was enqueued for the schedule: one invocation per tick in the user's whole index.
    deadline = time.time() + 180
    while True:
        records = [r for r in await client.list_invocations(APP, user, limit=1000) if r.schedule_id == made.id]
        if all(r.status == "completed" for r in records) or time.time() > deadline:
            break
        await asyncio.sleep(0.5)
    assert sorted(r.id for r in records) == sorted(member for member, _ in ticks)
    assert {r.status for r in records} == {"completed"}
    assert sorted(r.session_id for r in records) == sorted(f"{made.id}-{tick}" for tick in tick_ms)

    lateness = {int(r.session_id.rsplit("-", 1)[1]) / 1000: r.created_at for r in records}
    late = sorted(enqueued - tick for tick, enqueued in lateness.items() if not both_down - 1 <= tick <= both_up)
    print(f"\n{len(tick_ms)} ticks in {stopped_at - began:.1f} s; enqueued by sched-a/sched-b (their logs, across "
          f"restarts): {schedulers.fired('sched-a')}/{schedulers.fired('sched-b')}; {both_up - both_down:.1f} s "
          f"with no scheduler; enqueue lateness outside it: median {statistics.median(late) * 1000:.0f} ms, "
          f"p90 {late[int(len(late) * 0.9)] * 1000:.0f} ms, max {late[-1] * 1000:.0f} ms")
