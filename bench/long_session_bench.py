"""Worker cost per invocation as one session's history grows (DESIGN.md section 7, "cost that stays flat").

    .venv/bin/python -m bench.long_session_bench            # 2,000 invocations on one session
    .venv/bin/python -m bench.long_session_bench --n 600    # shorter

One worker process, the tool round trip of bench/WORKLOAD.md (4 committed events per invocation). One session
takes ``n`` invocations, one after the other (enqueue, wait for completion, next); the worker's and Redis's CPU
per invocation over the first and the last ``window`` of them are compared. Within those windows each
invocation of the long session is followed by one on a fresh session, measured apart: the control says what
an invocation with no history costs at that moment, so a drift of the shared machine's load shows as such.
Target: worker CPU per invocation over the last window within 1.3x of the first.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time

from .worker_bench import agentq_workers, cpu_seconds, print_checks


async def _one(client, session_id: str, user: str, index: int) -> str:
    invocation_id = await client.enqueue("weather", user, session_id, f"Weather in Paris? #{index}")
    record = await client.wait(invocation_id, timeout=120)
    return record.status


class _Meter:
    """The CPU seconds the worker and redis-server have used so far."""

    def __init__(self, worker_pid: int, redis_pid: int):
        self.pids = (worker_pid, redis_pid)

    def __call__(self) -> tuple[float, float]:
        worker, redis = (cpu_seconds(pid) for pid in self.pids)
        return worker, redis


def _per_invocation(used: list[float], n: int) -> dict:
    return {"worker_cpu_ms": used[0] * 1000 / n, "redis_cpu_ms": used[1] * 1000 / n}


async def _window(client, meter: _Meter, user: str, session_id: str, first: int, n: int) -> dict:
    """``n`` invocations of the long session, each followed by one on a fresh session (the control), so the
    two are measured under the same conditions (the machine is shared; its load drifts over a run)."""
    fresh = [(await client.create_session("weather", user)).id for _ in range(n)]
    long_used, control_used = [0.0, 0.0], [0.0, 0.0]
    statuses = []
    for i in range(n):
        before = meter()
        statuses.append(await _one(client, session_id, user, first + i))
        between = meter()
        statuses.append(await _one(client, fresh[i], user, i))
        after = meter()
        for k in range(2):
            long_used[k] += between[k] - before[k]
            control_used[k] += after[k] - between[k]
    return {"long": _per_invocation(long_used, n), "control": _per_invocation(control_used, n),
            "not_completed": sum(s != "completed" for s in statuses)}


async def measure(url: str, n: int, window: int, worker_pid: int, redis_pid: int) -> dict:
    """The first and the last ``window`` invocations of an ``n``-invocation session, each beside its control."""
    from worker.client import AgentqClient

    client = AgentqClient(url)
    meter = _Meter(worker_pid, redis_pid)
    user = f"long-{time.time_ns()}"
    for i in range(50):  # warm up
        await _one(client, (await client.create_session("weather", user)).id, user, i)
    session_id = (await client.create_session("weather", user)).id
    started = time.perf_counter()
    results: dict = {"n": n, "window": window, "first": await _window(client, meter, user, session_id, 0, window)}
    statuses = [await _one(client, session_id, user, i) for i in range(window, n - window)]
    results["last"] = await _window(client, meter, user, session_id, n - window, window)
    results["seconds"] = time.perf_counter() - started
    session = await client.session_service.get_session(app_name="weather", user_id=user, session_id=session_id)
    results["long_events"] = len(session.events)
    results["not_completed"] = (sum(s != "completed" for s in statuses) + results["first"]["not_completed"]
                                + results["last"]["not_completed"])
    await client.aclose()
    return results


def report(results: dict) -> list[tuple[str, bool]]:
    """The lines `make bench` prints, each with whether its target is met."""
    first, last = results["first"], results["last"]
    n, w = results["n"], results["window"]
    lines = []
    for key, label in (("worker_cpu_ms", "worker"), ("redis_cpu_ms", "redis")):
        ratio = last["long"][key] / first["long"][key]
        drift = last["control"][key] / first["control"][key]
        target = " <= 1.3x" if label == "worker" else ""
        lines.append((
            f"one session, {n} invocations: {label} CPU/invocation, last {w} {last['long'][key]:.2f} ms vs first {w} "
            f"{first['long'][key]:.2f} ms: {ratio:.2f}x{target} (fresh-session control beside them: "
            f"{first['control'][key]:.2f} ms then {last['control'][key]:.2f} ms, {drift:.2f}x)",
            ratio <= 1.3 or label != "worker"))
    lines.append((f"long session holds {results['long_events']} events (expected {4 * n}); invocations not "
                  f"completed: {results['not_completed']}",
                  results["long_events"] == 4 * n and results["not_completed"] == 0))
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=2000, help="invocations on the long session")
    parser.add_argument("--window", type=int, default=200, help="invocations in each compared stretch")
    args = parser.parse_args(argv)
    from runtime.redis_store.launcher import EmbeddedRedis

    with tempfile.TemporaryDirectory() as tmp, EmbeddedRedis(tmp) as server:
        with agentq_workers(server.url, ["bench-long"]) as workers:
            results = asyncio.run(measure(server.url, args.n, args.window, workers["bench-long"].pid,
                                          server._process.pid))
    print(json.dumps(results, indent=2))
    return 0 if print_checks(report(results)) else 1


if __name__ == "__main__":
    sys.exit(main())
