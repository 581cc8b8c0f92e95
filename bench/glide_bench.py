"""valkey-glide beside agentq's own pipelined client, on one Redis and on a 3-master Cluster, side by side.

    .venv/bin/python -m bench glide                         # prints a table, writes bench/results/glide.json
    .venv/bin/python -m bench.glide_bench --concurrency 1,64,512 --seconds 3 --repeats 3

Issue 26 asks, before runtime/redis_store/mux.py is extended to a Cluster, whether valkey-glide (async, Rust core,
one multiplexed connection per node, cluster-aware, scripts) should replace it: keep whichever is faster with less
code of our own. Each side (bench/glide_sides.py) runs the same round, EVALSHA of a small script + XADD + HGET
sent together and awaited together, from ``C`` coroutines in one process, each on keys of its own hash tag (so on
a Cluster they spread over the masters), for ``--seconds``; the sides take turns, ``--repeats`` times, and the
figures are the mean of the turns:

- rounds per second (each round is one round trip for its coroutine);
- the client process's CPU per round (``time.process_time``: every thread, glide's Rust ones included);
- the servers' CPU per round (INFO cpu summed over the masters), to see whether a client costs Redis more.

One Redis: mux, redis-py, glide, glide batch. Cluster: mux per node (a sketch of what issue 26 item 2 would build),
redis-py's RedisCluster (agentq's store on a Cluster today), glide, glide batch.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from pathlib import Path

import redis

from .glide_sides import GlideBatchSide, GlideSide, MuxPerNodeSide, MuxSide, RedisPySide

ROOT = Path(__file__).resolve().parents[1]


def servers_cpu_s(ports: list[int]) -> float:
    """User + system CPU seconds of the redis-servers on ``ports`` so far."""
    total = 0.0
    for port in ports:
        with redis.Redis(port=port) as client:
            cpu = client.info("cpu")
        total += float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"])
    return total


async def run_side(side, concurrency: int, seconds: float, ports: list[int]) -> dict:
    """``concurrency`` coroutines sending rounds for ``seconds``; the rate and the CPU per round."""
    await side.start()
    rounds = 0
    stop_at = 0.0

    async def loop(tag: str) -> None:
        nonlocal rounds
        while time.perf_counter() < stop_at:
            await side.round(tag)
            rounds += 1

    stop_at = time.perf_counter() + 0.3  # warm up: connections made, scripts cached
    await asyncio.gather(*(loop(f"c{index}") for index in range(concurrency)))
    rounds = 0
    server_before, client_before, started = servers_cpu_s(ports), time.process_time(), time.perf_counter()
    stop_at = started + seconds
    await asyncio.gather(*(loop(f"c{index}") for index in range(concurrency)))
    elapsed = time.perf_counter() - started
    client_cpu, server_cpu = time.process_time() - client_before, servers_cpu_s(ports) - server_before
    await side.close()
    return {"rounds_per_s": rounds / elapsed, "client_cpu_us_per_round": client_cpu * 1e6 / rounds,
            "server_cpu_us_per_round": server_cpu * 1e6 / rounds, "rounds": rounds}


def _mean(turns: list[dict]) -> dict:
    return {key: sum(turn[key] for turn in turns) / len(turns) for key in turns[0]}


def compare(make_sides, concurrencies: list[int], seconds: float, repeats: int, ports: list[int]) -> dict:
    """Every side at every concurrency, the sides taking turns; {concurrency: {side: figures}}."""
    results: dict = {}
    for concurrency in concurrencies:
        turns: dict[str, list[dict]] = {}
        for _ in range(repeats):
            for side in make_sides():
                turns.setdefault(side.name, []).append(asyncio.run(run_side(side, concurrency, seconds, ports)))
        results[str(concurrency)] = {name: _mean(figures) for name, figures in turns.items()}
        print(f"  C={concurrency}: " + ", ".join(f"{name} {figures['rounds_per_s']:,.0f}/s"
                                                  for name, figures in results[str(concurrency)].items()), flush=True)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--concurrency", default="1,16,128,512", help="coroutines, comma-separated")
    parser.add_argument("--seconds", type=float, default=2.0, help="per side and turn")
    parser.add_argument("--repeats", type=int, default=2, help="turns per side")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "glide.json"))
    args = parser.parse_args(argv)
    concurrencies = [int(part) for part in args.concurrency.split(",")]
    from runtime.redis_store.launcher import EmbeddedRedis
    from tests.redis_cluster import LocalRedisCluster  # the tests' harness, used as it is

    results: dict = {"machine_cpus": os.cpu_count(), "seconds": args.seconds, "repeats": args.repeats}
    with tempfile.TemporaryDirectory() as tmp:
        with EmbeddedRedis(Path(tmp) / "one", appendonly=False) as one:
            print("one Redis", flush=True)
            results["one_redis"] = compare(
                lambda: [MuxSide(one.url), RedisPySide(one.url), GlideSide([one.port], cluster=False),
                         GlideBatchSide([one.port], cluster=False)],
                concurrencies, args.seconds, args.repeats, [one.port])
        with LocalRedisCluster(Path(tmp) / "cluster") as cluster:
            ports = [node.port for node in cluster.nodes]
            print("3-master Cluster", flush=True)
            results["cluster"] = compare(
                lambda: [MuxPerNodeSide(ports), RedisPySide(cluster.url), GlideSide(ports, cluster=True),
                         GlideBatchSide(ports, cluster=True)],
                concurrencies, args.seconds, args.repeats, ports)
    print(json.dumps(results, indent=2))
    print(table(results))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    return 0


def table(results: dict) -> str:
    """One row per store, concurrency and side, with the rate as a ratio of the first side's (mux)."""
    lines = ["| store | C | client | rounds/s | vs mux | client CPU per round | Redis CPU per round |",
             "|---|---|---|---|---|---|---|"]
    for store, label in (("one_redis", "one Redis"), ("cluster", "3-master Cluster")):
        for concurrency, sides in results.get(store, {}).items():
            anchor = next(iter(sides.values()))["rounds_per_s"]
            for name, row in sides.items():
                lines.append(f"| {label} | {concurrency} | {name} | {row['rounds_per_s']:,.0f} "
                             f"| {row['rounds_per_s'] / anchor:.2f}x | {row['client_cpu_us_per_round']:.0f} us "
                             f"| {row['server_cpu_us_per_round']:.0f} us |")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
