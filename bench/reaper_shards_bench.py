"""A reaper pass on a three-master Redis Cluster with many shards in use and one due: what it costs with the
due-shards index (``worker.config.due_shards``) beside a walk over every shard in use, measured in the same run.

    .venv/bin/python -m bench.reaper_shards_bench            # writes bench/results/reaper_shards.json
    .venv/bin/python -m bench.reaper_shards_bench --quick    # fewer passes

For 10, 100 and 1,000 shards in use (each with a retention entry an hour away, so none is empty), one
dispatch-watchdog entry overdue in one of them, and both ways of finding it:

- the anchor, a walk: every shard's reaper and retention sets read each pass (what each pass did before);
- the due-shards index: claim the due shards from the 16 copies, reap them, settle their score.

Reported per shard count: Redis commands per pass (every master's INFO commandstats, Lua scripts' inner calls
included) and the median wall time of a pass, each as the walk's figure over the index's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import redis

ROOT = Path(__file__).resolve().parents[1]
_HOUSEKEEPING = {"info", "cluster", "command", "script", "ping", "readonly", "config", "client", "hello"}


def _commands(ports: list[int]) -> int:
    total = 0
    for port in ports:
        with redis.Redis(port=port, decode_responses=True) as client:
            total += sum(stats["calls"] for name, stats in client.info("commandstats").items()
                         if name.removeprefix("cmdstat_").split("|")[0] not in _HOUSEKEEPING)
    return total


async def _seed(store, count: int) -> list[str]:
    from runtime.redis_store import keys
    from worker.config import due_shards
    from worker.config.shards import slot_tag

    shards = [slot_tag(slot) for slot in range(0, 16384, 16384 // count)][:count]
    later_ms = int((time.time() + 3600) * 1000)
    for start in range(0, count, 250):
        chunk = shards[start : start + 250]
        await store.batch(("SADD", keys.shards(), *chunk),
                          *[("ZADD", keys.retention_due(shard), later_ms, f"e-later-{shard}") for shard in chunk])
    await due_shards.reseed(store)
    return shards


async def _overdue(store, shard: str) -> None:
    from runtime.redis_store import keys
    from worker.config import due_shards

    due_ms = int(time.time() * 1000) - 1000
    await store.batch(("ZADD", keys.dispatch_due(shard), due_ms, "e-lost"), due_shards.mark(shard, due_ms))


async def _walk(store) -> int:
    """The anchor: every shard in use read each pass (the reaper's three sets and the retention set)."""
    import worker.fleet.reaper as reaper
    import worker.fleet.sweeper as sweeper
    from worker.config.shards import in_use

    now_ms = int(time.time() * 1000)
    acted = 0
    for shard in await in_use(store.redis, cluster=True):
        acted += await reaper._reap_shard(store, shard) + await sweeper._sweep_invocations(store, shard, now_ms)
    return acted


async def _measure(store, ports: list[int], count: int, passes: int) -> dict:
    from worker.fleet.reaper import reap_once

    shards = await _seed(store, count)
    due = shards[count // 2]
    figures = {}
    for name, one_pass in (("walk", _walk), ("index", reap_once)):
        await one_pass(store)  # warm: scripts loaded, slots known
        times, commands = [], []
        for _ in range(passes):
            await _overdue(store, due)
            before = _commands(ports)
            started = time.perf_counter()
            acted = await one_pass(store)
            times.append(time.perf_counter() - started)
            commands.append(_commands(ports) - before)
            assert acted == 1, f"{name}: the overdue entry was not reaped ({acted})"
        figures[name] = {"commands": statistics.median(commands), "median_ms": statistics.median(times) * 1000}
    figures["walk_over_index_commands"] = figures["walk"]["commands"] / figures["index"]["commands"]
    figures["walk_over_index_time"] = figures["walk"]["median_ms"] / figures["index"]["median_ms"]
    return figures


async def _run(url: str, ports: list[int], flush, counts: list[int], passes: int) -> dict:
    from worker.records.store import InvocationStore

    results = {}
    for count in counts:
        flush()
        store = InvocationStore(url, reads_only=True)
        try:
            results[str(count)] = await _measure(store, ports, count, passes)
        finally:
            await store.aclose()
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer passes")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "reaper_shards.json"))
    args = parser.parse_args(argv)
    from tests.redis_cluster import LocalRedisCluster

    passes = 5 if args.quick else 20
    with tempfile.TemporaryDirectory() as tmp, LocalRedisCluster(Path(tmp) / "cluster") as cluster:
        results = asyncio.run(_run(cluster.url, [node.port for node in cluster.nodes], cluster.flush,
                                   [10, 100, 1000], passes))
    print(f"{'shards in use':>14} {'walk cmds':>10} {'index cmds':>11} {'ratio':>7} {'walk ms':>9} "
          f"{'index ms':>9} {'ratio':>7}")
    for count, row in results.items():
        print(f"{count:>14} {row['walk']['commands']:>10.0f} {row['index']['commands']:>11.0f} "
              f"{row['walk_over_index_commands']:>6.1f}x {row['walk']['median_ms']:>9.2f} "
              f"{row['index']['median_ms']:>9.2f} {row['walk_over_index_time']:>6.1f}x")
    Path(args.out).write_text(json.dumps({"machine_cpus": os.cpu_count(), "passes": passes, **results},
                                         indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
