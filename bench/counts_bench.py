"""Counts benchmark: invocations by status read from the counters the status scripts keep, at 100,000
invocations vs at 20, beside the read it replaced (a scan of the invocation index and every record's status,
capped at 5,000 records).

    .venv/bin/python -m bench.counts_bench            # 100,000 invocations
    .venv/bin/python -m bench.counts_bench --quick    # a tenth of them

Two embedded redis-servers (AOF on): one with 20 invocations (the anchor), one with 100,000. In each, one
completed and one parked invocation are made by the real scripts (enqueue, claim, settle); the rest are clones
of those records under new ids, written with the index entries and count flows the scripts write, so the
stores hold what a deployment would hold without running 100,000 agents. Timed one call after another, the
stores interleaved, median of many calls. Target (DESIGN 7, issue 19): exact at any size, and a read within 1.5x
of the anchor's (O(1) in the number of invocations).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections import Counter

APP = "approval"
USERS = 50
LEGACY_LIMIT = 5_000
"""Records the scan read before it gave up and said 'sampled' (worker.records.status_counts before issue 19)."""


class _NoBroker:
    """Run jobs go nowhere: no worker runs these invocations."""

    def send_task(self, *args, **kwargs) -> None:
        pass


async def _template(store, status: str) -> dict[str, str]:
    from worker.fleet import lease
    from worker.records.record import PendingCall

    session = await store.create_session(APP, "template")
    invocation_id = await store.enqueue(APP, "template", session.id, "Please approve", None, None)
    claim = await lease.acquire(store, invocation_id, "bench")
    if status == "parked":
        await lease.add_pending(store, claim, [PendingCall(id="call-1", name="ask_for_approval")])
    await lease.settle(store, claim, status)
    return await store.fields(store.record_key(invocation_id, claim.where))


async def _fill(store, n: int) -> None:
    """``n`` invocations of ``USERS`` users, one in ten parked, the rest completed (two made by the scripts)."""
    from runtime.redis_store import keys
    from worker.records.status_counts import APPS, app_scope, user_scope

    templates = {status: await _template(store, status) for status in ("completed", "parked")}
    redis = store.redis
    for first in range(0, n - 2, 2000):
        pipe = redis.pipeline(transaction=False)
        for i in range(first, min(n - 2, first + 2000)):
            status = "parked" if i % 10 == 0 else "completed"
            user = f"user-{i % USERS}"
            invocation_id = f"e-bench-{i:07d}"
            pipe.hset(keys.invocation(APP, user, invocation_id), mapping={
                **templates[status], "id": invocation_id, "user_id": user})
            pipe.hset(keys.invocation_index(), invocation_id, json.dumps([APP, user, "s"]))
            for scope in (app_scope(APP), user_scope(APP, user)):  # the creation flows (lua/lib/status_counts.lua)
                pipe.hincrby(keys.status_counts(), f"{scope}>{status}", 1)
        await pipe.execute()
    await redis.hset(keys.status_counts(), APPS, f" {app_scope(APP)[2:-1]} ")


async def _legacy_counts(redis, limit: int | None) -> dict[str, int]:
    """The read before issue 19: walk the invocation index and read each record's status (up to ``limit``)."""
    from runtime.redis_store import keys

    found = []
    async for _invocation_id, raw in redis.hscan_iter(keys.invocation_index(), count=500):
        if limit is not None and len(found) >= limit:
            break
        app, user, _ = json.loads(raw)
        found.append(keys.invocation(app, user, _invocation_id))
    counts: Counter = Counter()
    for start in range(0, len(found), 2000):
        pipe = redis.pipeline(transaction=False)
        for key in found[start : start + 2000]:
            pipe.hget(key, "status")
        counts.update(await pipe.execute())
    return dict(counts)


async def _median_ms(calls: dict, rounds: int) -> dict[str, float]:
    samples: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(rounds):
        for name, call in calls.items():
            t0 = time.perf_counter()
            await call()
            samples[name].append(time.perf_counter() - t0)
    return {name: statistics.median(values) * 1000 for name, values in samples.items()}


async def run(big: int, rounds: int) -> dict:
    from runtime.redis_store.launcher import EmbeddedRedis
    from worker.records.status_counts import count_by_status
    from worker.records.store import InvocationStore

    with tempfile.TemporaryDirectory() as tmp_small, tempfile.TemporaryDirectory() as tmp_big, \
            EmbeddedRedis(tmp_small) as small_server, EmbeddedRedis(tmp_big) as big_server:
        small = InvocationStore(small_server.url, celery_app=_NoBroker())
        large = InvocationStore(big_server.url, celery_app=_NoBroker())
        await _fill(small, 20)
        await _fill(large, big)

        def exact(store, **scope):
            return lambda: count_by_status(store.redis, cluster=False, **scope)

        def legacy(store):
            return lambda: _legacy_counts(store.redis, LEGACY_LIMIT)

        for call in (exact(small), exact(large), legacy(small)):  # warm up: connections open
            await call()
        timed = await _median_ms({
            "exact_20": exact(small), "exact_big": exact(large),
            "exact_user_20": exact(small, apps=[APP], users=["user-1"]),
            "exact_user_big": exact(large, apps=[APP], users=["user-1"]),
        }, rounds)
        timed |= await _median_ms({"legacy_20": legacy(small), "legacy_big": legacy(large)}, max(3, rounds // 50))
        figures = {"exact": await exact(large)(), "legacy_capped": await _legacy_counts(large.redis, LEGACY_LIMIT),
                   "records": await _legacy_counts(large.redis, None)}
        await small.aclose()
        await large.aclose()
    return {"invocations": big, "ms": timed, "counts_at_big": figures}


def report(results: dict) -> bool:
    """Print the table and the checks; True when every target is met."""
    ms, n = results["ms"], results["invocations"]
    print(json.dumps(results, indent=2))
    ok = True
    for label, measured, anchor in ((f"all statuses, {n:,} invocations vs 20", "exact_big", "exact_20"),
                                    (f"one user's statuses, {n:,} invocations vs 20", "exact_user_big",
                                     "exact_user_20")):
        ratio = ms[measured] / ms[anchor]
        ok &= ratio <= 1.5
        print(f"{'PASS' if ratio <= 1.5 else 'MISS'} counts read, {label}: {ms[measured]:.3f} ms vs "
              f"{ms[anchor]:.3f} ms = {ratio:.2f}x (target <= 1.5x)")
    figures = results["counts_at_big"]
    records = {status: n for status, n in figures["records"].items() if n}
    exact = {status: n for status, n in figures["exact"].items() if n}
    ok &= exact == records
    print(f"{'PASS' if exact == records else 'MISS'} exact at {n:,}: counters {exact} vs every record {records}")
    print(f"INFO before (index scan capped at {LEGACY_LIMIT:,}): {ms['legacy_big']:.3f} ms vs the counters' "
          f"{ms['exact_big']:.3f} ms = {ms['legacy_big'] / ms['exact_big']:.0f}x, and it saw "
          f"{sum(figures['legacy_capped'].values()):,} of {sum(records.values()):,} invocations")
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a tenth of the invocations, fewer rounds")
    args = parser.parse_args(argv)
    results = asyncio.run(run(10_000 if args.quick else 100_000, 100 if args.quick else 400))
    return 0 if report(results) else 1


if __name__ == "__main__":
    sys.exit(main())
