"""What running alone costs: one invocation (the weather tool round trip) run in the worker's process vs in a
quarantine process the worker forks for it (worker.running.quarantine), side by side in one run.

    .venv/bin/python -m bench.quarantine_bench           # prints a table, writes bench/results/quarantine.json

A suspected invocation (one that was on a worker that died) pays this on each of its runs; an invocation that
never was on a dead worker pays nothing. Both sides: a real WorkerHost (its loop, heartbeats and reaper) on an
embedded redis-server, claimed one at a time, timed from the claim until the run's task is done (settled).
Rounds alternate so that load from elsewhere on the machine falls on both alike.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


class _NoBroker:
    """Run jobs are not sent: the bench claims each invocation itself."""

    def send_task(self, *args, **kwargs) -> None:
        return None


async def _one(host, *, alone: bool, n: int) -> float:
    store = host.store
    session = await store.session_service.create_session(app_name="weather", user_id="bench")
    invocation_id = await store.enqueue("weather", "bench", session.id, f"weather in Paris? ({n})", None, None)
    if alone:  # as the claim script leaves a record that was on a dead worker
        where = await store.locate(invocation_id)
        await store.redis.hset(store.record_key(invocation_id, where), mapping={
            "suspected": 1, "crash_log": json.dumps([{"worker": "gone", "isolated": False}])})
    started = time.perf_counter()
    assert await host.executor.start(invocation_id) == "started"
    await host.executor.active[invocation_id][1]
    elapsed = time.perf_counter() - started
    assert (await store.get(invocation_id)).status == "completed"
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "quarantine.json"))
    args = parser.parse_args(argv)
    from bench.worker_apps import weather
    from runtime.redis_store.launcher import EmbeddedRedis
    from worker.running.executor import ExecutorConfig
    from worker.running.host import WorkerHost

    times: dict[str, list[float]] = {"in_process": [], "alone": []}
    with tempfile.TemporaryDirectory() as tmp, EmbeddedRedis(tmp) as server:
        host = WorkerHost(server.url, {"weather": weather}, celery_app=_NoBroker(), wait_for_claim=True,
                          config=ExecutorConfig(worker_name="bench-q", quarantine_after=1))
        try:
            for n in range(args.rounds + 2):
                for alone in (False, True):
                    elapsed = host.loop.run(_one(host, alone=alone, n=n))
                    if n >= 2:  # the first rounds warm caches and connections up
                        times["alone" if alone else "in_process"].append(elapsed)
        finally:
            host.stop(grace=1.0)
    results = {side: {"p50_ms": statistics.median(ts) * 1000, "mean_ms": statistics.fmean(ts) * 1000,
                      "runs": len(ts)} for side, ts in times.items()}
    results["alone_over_in_process_p50"] = results["alone"]["p50_ms"] / results["in_process"]["p50_ms"]
    print(json.dumps(results, indent=2))
    print(f"a run alone in a quarantine process: p50 {results['alone']['p50_ms']:.1f} ms vs "
          f"{results['in_process']['p50_ms']:.1f} ms in the worker's process "
          f"({results['alone_over_in_process_p50']:.1f}x), paid only by invocations that were on a dead worker")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
