"""A three-master Redis Cluster beside one master, on this machine, in one run: throughput and where the keys go.

    .venv/bin/python -m bench.cluster_bench            # full run: prints a table, writes bench/results/cluster.json
    .venv/bin/python -m bench.cluster_bench --quick    # smaller counts

Both stores get the same work from the same client: the tool round trip of bench/WORKLOAD.md (fresh session per
invocation, invocations spread over many users), run by the same ``agentq worker`` processes with the Celery
broker on a plain redis-server of its own in both cases (a Cluster cannot be one), so only the store differs.
The single master is the anchor; the figures reported for the Cluster are ratios against it:

- invocations per second, enqueue -> completed observed, with ``--window`` in flight;
- per node: the keys it holds after the run and the commands it served during it (its share of the whole), which
  is where a hot spot would show: one node holding or serving much more than the others.

On a 2-core machine the three masters, the workers and the client share the same cores, so the Cluster's rate
says what the sharding costs (more round trips: a script per slot, cross-slot writes apart), not what three
machines would give.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APP = "weather"


@contextmanager
def workers(store_url: str, broker_url: str, names: list[str]):
    """``agentq worker`` processes on ``store_url`` (broker ``broker_url``), ready to consume."""
    from runtime.redis_store import keys
    from runtime.redis_store.redis_url import redis_client_from_url

    env = {**os.environ, "AGENTQ_REDIS_URL": store_url, "AGENTQ_BROKER_URL": broker_url, "PYTHONPATH": str(ROOT)}
    processes = [
        subprocess.Popen([sys.executable, "-m", "agentq.cli", "--log-level", "WARNING", "worker", "--name", name,
                          "--concurrency", "5000", "--app", "bench.worker_apps:weather"], cwd=ROOT, env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for name in names]
    admin = redis_client_from_url(store_url, asyncio=False, decode_responses=True)
    try:
        deadline = time.monotonic() + 90
        while not all(admin.hexists(keys.workers(), name) for name in names):
            assert time.monotonic() < deadline, "workers did not start"
            assert all(p.poll() is None for p in processes), "a worker exited while starting"
            time.sleep(0.1)
        yield processes
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        admin.close()


async def throughput(store_url: str, n: int, window: int, users: int) -> dict:
    """Invocations per second, enqueue -> completed observed, over ``users`` users (sessions made beforehand)."""
    from worker.client import AgentqClient

    async with AgentqClient(store_url) as client:
        run = time.time_ns()
        owners = [f"u{run}-{index % users}" for index in range(n + 50)]
        sessions = [(user, (await client.create_session(APP, user)).id) for user in owners]
        gate = asyncio.Semaphore(window)
        statuses: list[str] = []

        async def one(index: int, user: str, session_id: str) -> None:
            async with gate:
                invocation_id = await client.enqueue(APP, user, session_id, f"Weather in Paris? #{index}")
                statuses.append((await client.wait(invocation_id, timeout=180)).status)

        await asyncio.gather(*(one(i, u, s) for i, (u, s) in enumerate(sessions[:50])))  # warm up
        statuses.clear()
        start = time.perf_counter()
        await asyncio.gather(*(one(i, u, s) for i, (u, s) in enumerate(sessions[50:])))
        elapsed = time.perf_counter() - start
    return {"rate": n / elapsed, "n": n, "not_completed": sum(status != "completed" for status in statuses)}


def node_figures(ports: list[int]) -> dict[str, dict]:
    """Keys held and commands served so far by each node, by port."""
    import redis

    figures = {}
    for port in ports:
        with redis.Redis(port=port, decode_responses=True) as node:
            figures[str(port)] = {"keys": node.dbsize(), "commands": node.info("stats")["total_commands_processed"]}
    return figures


def measure(store_url: str, ports: list[int], broker_url: str, *, n: int, window: int, users: int,
            worker_count: int) -> dict:
    """Throughput and per-node spread of one store."""
    with workers(store_url, broker_url, [f"cb-{time.time_ns()}-{i}" for i in range(worker_count)]):
        before = node_figures(ports)
        result = asyncio.run(throughput(store_url, n, window, users))
        after = node_figures(ports)
    total = sum(after[p]["commands"] - before[p]["commands"] for p in after) or 1
    result["nodes"] = {port: {"keys": after[port]["keys"],
                              "command_share": (after[port]["commands"] - before[port]["commands"]) / total}
                       for port in after}
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--n", type=int, default=None, help="invocations per store")
    parser.add_argument("--window", type=int, default=128)
    parser.add_argument("--users", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "cluster.json"))
    args = parser.parse_args(argv)
    n = args.n or (300 if args.quick else 1500)
    from runtime.redis_store.launcher import EmbeddedRedis
    from tests.redis_cluster import LocalRedisCluster

    common = {"n": n, "window": args.window, "users": args.users, "worker_count": args.workers}
    results: dict = {"machine_cpus": os.cpu_count(), **{k: v for k, v in common.items() if k != "worker_count"},
                     "workers": args.workers}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        with EmbeddedRedis(tmp / "broker", appendonly=False) as broker:
            os.environ["AGENTQ_BROKER_URL"] = broker.url  # this process's client sends run jobs there too
            with EmbeddedRedis(tmp / "single", appendonly=False) as single:
                results["one_master"] = measure(single.url, [single.port], broker.url, **common)
            with LocalRedisCluster(tmp / "cluster") as cluster:
                results["cluster_3_masters"] = measure(cluster.url, [node.port for node in cluster.nodes],
                                                       broker.url, **common)
    report(results)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    return 0


def report(results: dict) -> None:
    """The table: each store's rate and per-node spread, the Cluster's against the single master."""
    one, three = results["one_master"], results["cluster_3_masters"]
    print(json.dumps(results, indent=2))
    print(f"\none master:        {one['rate']:8.1f} invocations/s  ({one['not_completed']} not completed)")
    print(f"3-master Cluster:  {three['rate']:8.1f} invocations/s  ({three['not_completed']} not completed)  "
          f"= {three['rate'] / one['rate']:.2f}x the single master")
    nodes = three["nodes"].values()
    keys = [node["keys"] for node in nodes]
    shares = [node["command_share"] for node in nodes]
    print(f"Cluster keys per node: {keys} (largest / mean {max(keys) / (sum(keys) / len(keys)):.2f}; "
          f"single master: {sum(node['keys'] for node in one['nodes'].values())})")
    print(f"Cluster command share per node: {[f'{share:.0%}' for share in shares]} "
          f"(largest / mean {max(shares) * len(shares):.2f})")


if __name__ == "__main__":
    raise SystemExit(main())
