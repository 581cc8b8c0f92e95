"""Worker memory over bursts: RSS back near its warm baseline after each burst, and no creep from one to the next.

    .venv/bin/python -m bench.rss_bench                     # 2 warm-up bursts, then 5 measured, of 2,000 each
    .venv/bin/python -m bench.rss_bench --burst 500 --cycles 3

One worker process; each burst enqueues ``burst`` invocations at once, each on a fresh session, of the tool
round trip with a model that thinks ``BENCH_BURST_LATENCY`` seconds per call (bench/worker_apps.py: burst), so
that they are all in flight together; the burst is over when every one has completed and the worker holds no
lease. Targets: after every measured burst, RSS within 10% of the warm baseline; no creep: the last burst ends
no higher than the first (within 10% too); the growth per burst is printed.

The warm baseline is the RSS after a first burst of the same size. CPython's small-object allocator keeps a
1 MiB arena as long as one object lives in it, and the long-lived objects made during a burst (entries of
bounded caches: key names, pydantic's JSON string cache, ...) end up in nearly every arena the burst used: the
first burst's high-water mark stays (measured: about 5 of 70 arenas come back; malloc_trim returns under 1 MiB,
those arenas are not glibc's). What a worker must do is reuse that memory for later bursts instead of adding to
it: nothing it keeps per invocation may outlive the invocation unbounded.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

from .worker_bench import agentq_workers, print_checks

SETTLED = {"completed", "failed", "cancelled", "parked"}


def rss_mb(pid: int) -> float:
    """Resident set size of a process (Linux /proc), in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


async def _gather_limited(coroutines, limit: int) -> list:
    gate = asyncio.Semaphore(limit)

    async def one(coroutine):
        async with gate:
            return await coroutine

    return await asyncio.gather(*(one(c) for c in coroutines))


async def burst(client, pid: int, n: int) -> dict:
    """Enqueue ``n`` invocations at once; wait for all of them and for the worker to hold no lease."""
    from runtime.redis_store import keys

    store = client._store
    user = f"burst-{time.time_ns()}"
    sessions = await _gather_limited([client.create_session("burst", user) for _ in range(n)], 200)
    peak_rss, peak_running, done = rss_mb(pid), 0, False

    async def sample() -> None:
        nonlocal peak_rss, peak_running
        while not done:
            peak_rss = max(peak_rss, rss_mb(pid))
            peak_running = max(peak_running, await store.redis.zcard(keys.lease_expiries()))
            await asyncio.sleep(0.2)

    sampler = asyncio.create_task(sample())
    ids = await _gather_limited([client.enqueue("burst", user, s.id, f"Weather in Paris? #{i}")
                                 for i, s in enumerate(sessions)], 200)
    statuses: dict[str, str] = {}
    while len(statuses) < n:  # poll the statuses (2,000 blocking waiters would be a load of their own)
        waiting = [i for i in ids if i not in statuses]
        replies = await store.batch(*[("HGET", store.record_key(i, await store.locate(i)), "status") for i in waiting])
        statuses.update({i: s for i, s in zip(waiting, replies, strict=True) if s in SETTLED})
        await asyncio.sleep(0.2)
    while await store.redis.zcard(keys.lease_expiries()):  # settled records; the worker's tasks wind down
        await asyncio.sleep(0.1)
    done = True
    await sampler
    return {"peak_rss_mb": peak_rss, "peak_running": peak_running,
            "not_completed": sum(s != "completed" for s in statuses.values())}


async def measure(url: str, pid: int, n: int, warmups: int, cycles: int, settle_s: float) -> dict:
    """Warm-up bursts, the baseline, then the measured bursts with the RSS after each."""
    from worker.client import AgentqClient

    client = AgentqClient(url)
    results: dict = {"burst": n, "started_rss_mb": rss_mb(pid), "warmups": [], "cycles": []}
    for _ in range(warmups):
        figures = await burst(client, pid, n)
        await asyncio.sleep(settle_s)
        results["warmups"].append({**figures, "after_rss_mb": rss_mb(pid)})
    results["baseline_rss_mb"] = rss_mb(pid)
    for _ in range(cycles):
        figures = await burst(client, pid, n)
        await asyncio.sleep(settle_s)
        results["cycles"].append({**figures, "after_rss_mb": rss_mb(pid)})
    await client.aclose()
    return results


def report(results: dict) -> list[tuple[str, bool]]:
    """The lines `make bench` prints, each with whether its target is met."""
    base = results["baseline_rss_mb"]
    after = [cycle["after_rss_mb"] for cycle in results["cycles"]]
    peaks = [cycle["peak_rss_mb"] for cycle in results["cycles"]]
    running = min(cycle["peak_running"] for cycle in results["cycles"])
    worst = max(after) / base
    creep = after[-1] / after[0]
    per_burst = (after[-1] - after[0]) / max(1, len(after) - 1)
    lost = sum(cycle["not_completed"] for cycle in results["cycles"] + results["warmups"])
    return [
        (f"worker RSS after each burst of {results['burst']} in flight (at least {running} at once): "
         f"{', '.join(f'{a:.0f}' for a in after)} MiB vs warm baseline {base:.0f} MiB: worst {worst:.2f}x <= 1.10x "
         f"(peaks {min(peaks):.0f}-{max(peaks):.0f} MiB; {results['started_rss_mb']:.0f} MiB at start)",
         worst <= 1.10),
        (f"no creep over {len(after)} bursts: last {after[-1]:.0f} MiB vs first {after[0]:.0f} MiB: {creep:.2f}x "
         f"<= 1.10x ({per_burst:+.1f} MiB per burst)", creep <= 1.10),
        (f"invocations not completed: {lost}", lost == 0),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--burst", type=int, default=2000, help="invocations in flight per burst")
    parser.add_argument("--warmups", type=int, default=1)
    parser.add_argument("--cycles", type=int, default=5)
    parser.add_argument("--settle", type=float, default=1.0, help="seconds between a burst's end and the reading")
    parser.add_argument("--history-cache-mb", default=None, help="the worker's history cache budget (default: its own)")
    args = parser.parse_args(argv)
    from runtime.redis_store.launcher import EmbeddedRedis

    with tempfile.TemporaryDirectory() as tmp, EmbeddedRedis(tmp) as server:
        env = {} if args.history_cache_mb is None else {"AGENTQ_HISTORY_CACHE_MB": args.history_cache_mb}
        with agentq_workers(server.url, ["bench-rss"], **env) as workers:
            results = asyncio.run(measure(server.url, workers["bench-rss"].pid, args.burst, args.warmups,
                                          args.cycles, args.settle))
    print(json.dumps(results, indent=2))
    return 0 if print_checks(report(results)) else 1


if __name__ == "__main__":
    sys.exit(main())
