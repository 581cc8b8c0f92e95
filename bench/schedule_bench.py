"""Schedules benchmark: how fast schedulers fire due ticks (each tick's invocation enqueued in the one fire
script, a new session per run) beside its anchor, plain enqueues of new invocations into new sessions through
the same store, measured in the same run on one redis-server; and what an idle scheduler costs Redis.

Run: ``python -m bench.schedule_bench [--ticks N]`` (or ``python -m bench schedules``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time

from runtime.redis_store import keys
from runtime.redis_store.launcher import EmbeddedRedis
from worker.records.store import InvocationStore
from worker.schedules import Scheduler
from worker.schedules.firing import due_member

APP = "bench"


async def enqueue_rate(store: InvocationStore, n: int, user: str) -> float:
    """The anchor: a new session and an invocation in it, n times, one after the other (per second)."""
    began = time.perf_counter()
    for _ in range(n):
        session = await store.create_session(APP, user)
        await store.enqueue(APP, user, session.id, "hi", None, None)
    return n / (time.perf_counter() - began)


async def fire_rate(store: InvocationStore, n: int, schedulers: int, user: str) -> tuple[float, int]:
    """n schedules all due at once, fired by ``schedulers`` racing schedulers (per second; runs enqueued)."""
    made = [await Scheduler(store).schedules.create(APP, user, {"intervalS": 3600, "newMessage": "hi"})
            for _ in range(n)]
    now_ms = round(time.time() * 1000)
    for schedule in made:  # every schedule due now, as if its hour had passed
        await store.redis.hset(keys.schedule(APP, user, schedule.id), "next_tick", now_ms)
        await store.redis.zadd(keys.schedules_due(), {due_member(APP, user, schedule.id): now_ms})
    racing = [Scheduler(store, name=f"s{i}") for i in range(schedulers)]
    began = time.perf_counter()
    while await store.redis.zcount(keys.schedules_due(), "-inf", now_ms):
        await asyncio.gather(*(scheduler.fire_due() for scheduler in racing))
    elapsed = time.perf_counter() - began
    runs = sum(scheduler.fired for scheduler in racing)
    for schedule in made:
        await store.redis.zrem(keys.schedules_due(), due_member(APP, user, schedule.id))
    return n / elapsed, runs


async def idle_commands_per_s(store: InvocationStore, seconds: float = 3.0) -> float:
    """Commands per second an idle scheduler sends (one schedule, due in an hour)."""
    await Scheduler(store).schedules.create(APP, "idle", {"intervalS": 3600, "newMessage": "hi"})
    stop = asyncio.Event()
    task = asyncio.create_task(Scheduler(store).run(stop))
    await asyncio.sleep(0.5)
    before = int((await store.redis.info("stats"))["total_commands_processed"])
    await asyncio.sleep(seconds)
    after = int((await store.redis.info("stats"))["total_commands_processed"])
    stop.set()
    await task
    return (after - before - 1) / seconds  # less the first INFO itself


async def run(ticks: int) -> dict:
    with tempfile.TemporaryDirectory() as data:
        server = EmbeddedRedis(data)
        server.start()
        store = InvocationStore(server.url)
        try:
            await enqueue_rate(store, 20, "warm")  # warm: scripts loaded, connections open, the broker connected
            anchor = await enqueue_rate(store, ticks, "anchor")
            one, one_runs = await fire_rate(store, ticks, 1, "one")
            two, two_runs = await fire_rate(store, ticks, 2, "two")
            idle = await idle_commands_per_s(store)
        finally:
            await store.aclose()
            server.stop()
    return {"ticks": ticks, "enqueue_per_s": round(anchor), "fire_per_s_1_scheduler": round(one),
            "fire_per_s_2_schedulers": round(two), "runs_1": one_runs, "runs_2": two_runs,
            "ratio_1_scheduler_vs_enqueue": round(one / anchor, 2), "ratio_2_schedulers_vs_enqueue": round(two / anchor, 2),
            "idle_scheduler_commands_per_s": round(idle, 1)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ticks", type=int, default=500)
    figures = asyncio.run(run(parser.parse_args().ticks))
    print(f"{'plain enqueue, new session each (anchor)':44} {figures['enqueue_per_s']:>7}/s")
    print(f"{'ticks fired, 1 scheduler':44} {figures['fire_per_s_1_scheduler']:>7}/s  "
          f"x{figures['ratio_1_scheduler_vs_enqueue']} of the anchor ({figures['runs_1']} runs)")
    print(f"{'ticks fired, 2 racing schedulers':44} {figures['fire_per_s_2_schedulers']:>7}/s  "
          f"x{figures['ratio_2_schedulers_vs_enqueue']} of the anchor ({figures['runs_2']} runs)")
    print(f"{'idle scheduler, Redis commands':44} {figures['idle_scheduler_commands_per_s']:>7}/s")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
