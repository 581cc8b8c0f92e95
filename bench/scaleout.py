"""Scale-out: N worker processes draining a queue filled beforehand, on one Redis and on a 3-master Cluster.

    .venv/bin/python -m bench scaleout                                 # N = 1, 2 on 2 cores (more on more cores)
    .venv/bin/python -m bench.scaleout --workers 1,2,4,8,14 --n-per-worker 4000   # a 16-core machine
    .venv/bin/python -m bench.scaleout --aof                           # appendonly yes, everysec (compose.yaml's)

For each store (one redis-server; a 3-master Cluster with the broker on a plain redis-server beside it) and each
N, fresh servers are started, ``N x --n-per-worker`` invocations of the `fast` one-tool agent are enqueued, then
N ``agentq worker`` processes drain them (bench/scaleout_drain.py). The anchor, a no-op Celery task, is drained the
same way on the same broker. Between 10% and 90% done it reads:

- invocations per second, and the efficiency against N x the one-worker rate (one Redis's for both stores; the
  anchor's own for the anchor);
- Redis CPU per 1,000 invocations (INFO used_cpu_sys + used_cpu_user, summed over the masters and the broker),
  the busiest server's share of one core, and commands per invocation (INFO commandstats: the commands inside
  scripts counted), with the most frequent ones;
- worker CPU per invocation (the worker processes, from /proc).

On a machine with few cores the servers, the workers and this process share them: there the figures say what an
invocation costs, and the rates only how it scales on those cores. Prints a table, writes
bench/results/scaleout.json.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

from .scaleout_drain import drain_agentq, drain_noop
from .scaleout_stores import STORES

ROOT = Path(__file__).resolve().parents[1]
LADDER = (1, 2, 4, 8, 14)


def default_workers() -> list[int]:
    """1 and 2 on a small machine; up to 14 on a 16-core one (two cores left for Redis and the client)."""
    cores = os.cpu_count() or 2
    return [n for n in LADDER if n <= max(2, cores - 2)]


def measure(store_name: str, counts: list[int], n_per_worker: int, aof: bool, work, **options) -> dict[str, dict]:
    """One drain per worker count on fresh servers of ``store_name``; results by N."""
    results = {}
    for workers in counts:
        with tempfile.TemporaryDirectory() as tmp, STORES[store_name](Path(tmp), aof=aof) as store:
            print(f"  {store.kind}, {workers} worker(s), {n_per_worker * workers} queued ...", flush=True)
            results[str(workers)] = work(store, workers, n_per_worker * workers, **options)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", default=",".join(map(str, default_workers())),
                        help="worker counts, comma-separated (default: %(default)s on this machine)")
    parser.add_argument("--n-per-worker", type=int, default=1500, help="invocations queued per worker")
    parser.add_argument("--stores", default="one,cluster", help="one, cluster, or both (comma-separated)")
    parser.add_argument("--no-anchor", action="store_true", help="skip the no-op Celery anchor")
    parser.add_argument("--aof", action="store_true", help="appendonly yes, appendfsync everysec on every server")
    parser.add_argument("--concurrency", type=int, default=None,
                        help="invocations in flight per agentq worker (default: agentq's own, 1000)")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "scaleout.json"))
    args = parser.parse_args(argv)
    counts = [int(part) for part in args.workers.split(",")]
    results: dict = {"machine_cpus": os.cpu_count(), "aof": args.aof, "n_per_worker": args.n_per_worker,
                     "workers": counts, "concurrency": args.concurrency, "stores": {}}
    for name in args.stores.split(","):
        results["stores"][name] = measure(name, counts, args.n_per_worker, args.aof, drain_agentq,
                                            concurrency=args.concurrency)
    if not args.no_anchor:
        results["anchor_noop_celery"] = measure("one", counts, args.n_per_worker, args.aof, drain_noop)
    print(json.dumps(results, indent=2))
    print(table(results))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    return 0


def table(results: dict) -> str:
    """The issue's table: one row per store and N, then the anchor's."""
    lines = ["| configuration | invocations/s | efficiency vs N x one worker | Redis CPU per 1,000 invocations "
             "| commands per invocation | worker CPU per invocation |", "|---|---|---|---|---|---|"]
    one = results["stores"].get("one", {})
    base = one.get("1", {}).get("rate")
    labels = {"one": "one Redis", "cluster": "3-master Cluster"}
    for name, by_n in results["stores"].items():
        for n, row in by_n.items():
            rate = f"{row['rate']:,.0f}"
            if name != "one" and n in one:
                rate += f" ({row['rate'] / one[n]['rate']:.2f}x one Redis)"
            lines.append(_row(f"{labels[name]}, {n}", rate, row, base and row["rate"] / (int(n) * base)))
    anchor = results.get("anchor_noop_celery", {})
    for n, row in anchor.items():
        lines.append(_row(f"anchor: no-op Celery task, {n}", f"{row['rate']:,.0f}", row,
                          row["rate"] / (int(n) * anchor["1"]["rate"]) if "1" in anchor else None))
    return "\n".join(lines)


def _row(label: str, rate: str, row: dict, efficiency: float | None) -> str:
    eff = "-" if efficiency is None else f"{efficiency:.2f}"
    if row["busiest_redis_cores"] >= 0.9:
        eff += f" (Redis at {row['busiest_redis_cores']:.2f} core)"
    if row.get("lease_expired"):  # an overloaded worker's runs sent again: work done twice is in the figures
        rate += f" ({row['lease_expired']} leases expired)"
    return (f"| {label} | {rate} | {eff} | {row['redis_cpu_ms_per_1000']:.0f} ms "
            f"| {row['commands_per_invocation']:.1f} | {row['worker_cpu_ms_per_invocation']:.2f} ms |")


if __name__ == "__main__":
    raise SystemExit(main())
