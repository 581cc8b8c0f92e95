"""Retention benchmark: Redis keys and bytes per invocation before and after retention, after DELETE session,
and a soak whose memory must come back.

    .venv/bin/python -m bench.soak_bench            # footprint of 300 + 300 invocations, then a 20,000 soak
    .venv/bin/python -m bench.soak_bench --quick    # 100 + 100, then 2,000

One embedded redis-server (AOF on) and one ``agentq worker``, both sides with a retention of a few seconds
(``AGENTQ_RETENTION_SETTLED``, ``AGENTQ_RETENTION_SESSION_IDLE``, ``AGENTQ_RETENTION_STREAM_AGE``); each
invocation on a fresh session, as in bench/WORKLOAD.md.

- Footprint: completed invocations (the weather tool round trip), then parked ones (an approval), measured
  by scanning every key (``MEMORY USAGE``, grouped by kind) and by ``used_memory``: per invocation right after
  they settled, once retention has passed, after ``DELETE session`` of all of them (not one key of a deleted
  session may be left), and once retention has passed again (back to the baseline).
- Soak: N invocations, ``window`` in flight, sessions left to expire by the idle TTL; then ``used_memory``
  and the number of keys once retention has passed, against the baseline measured before the soak in the
  same run. Target (DESIGN 7): memory within 10% of the start, keys back to the baseline.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
import time
from collections import Counter

from bench.worker_bench import agentq_workers

RETENTION_S = 5.0
ENV = {"AGENTQ_RETENTION_SETTLED": f"{RETENTION_S:g}s", "AGENTQ_RETENTION_SESSION_IDLE": f"{RETENTION_S:g}s",
       "AGENTQ_RETENTION_STREAM_AGE": f"{RETENTION_S:g}s"}
_INVOCATION = re.compile(r"^agentq:\{[^}]*\}:i:[^:]+(:settled|:journal)?$")
_SESSION = re.compile(r"^agentq:\{[^}]*\}:s:[^:]+:(\w+)$")
_USER = re.compile(r"^agentq:\{[^}]*\}:(\w+)$")


def _kind(key: str) -> str:
    if match := _INVOCATION.match(key):
        return "invocation " + (match.group(1) or ":record")[1:]
    if match := _SESSION.match(key):
        return "session " + match.group(1)
    if match := _USER.match(key):
        return "user/app " + match.group(1)
    return key if key.startswith("agentq:") else "broker " + key


async def footprint(redis) -> dict:
    """Every key grouped by kind (count, MEMORY USAGE bytes), the number of keys and ``used_memory``."""
    counts: Counter = Counter()
    sizes: Counter = Counter()
    keys = [key async for key in redis.scan_iter(count=5000)]
    for start in range(0, len(keys), 1000):
        pipe = redis.pipeline(transaction=False)
        for key in keys[start : start + 1000]:
            pipe.memory_usage(key, samples=0)
        for key, size in zip(keys[start : start + 1000], await pipe.execute(), strict=True):
            counts[_kind(key)] += 1
            sizes[_kind(key)] += size or 0
    info = await redis.info("memory")
    clients = await redis.info("clients")
    return {"keys": len(keys), "used_memory": info["used_memory"], "counts": counts, "bytes": sizes,
            "dataset": info["used_memory_dataset"], "clients_memory": info["mem_clients_normal"],
            "clients": clients["connected_clients"],
            "session_keys": sum(n for kind, n in counts.items() if kind.startswith("session "))}


def per_invocation(now: dict, base: dict, n: int) -> dict:
    """Keys and bytes per invocation between two footprints, in total and by kind."""
    kinds = sorted(set(now["counts"]) | set(base["counts"]))
    by_kind = {kind: [round((now["counts"][kind] - base["counts"][kind]) / n, 2),
                      round((now["bytes"][kind] - base["bytes"][kind]) / n)] for kind in kinds
               if now["counts"][kind] != base["counts"][kind] or now["bytes"][kind] != base["bytes"][kind]}
    return {"keys": round((now["keys"] - base["keys"]) / n, 2),
            "bytes": round(sum(now["bytes"].values()) - sum(base["bytes"].values())) // n,
            "used_memory": round(_data_memory(now) - _data_memory(base)) // n, "by_kind": by_kind}


def _data_memory(figures: dict) -> int:
    """``used_memory`` less the connections' buffers (pools grow with concurrency, not with invocations)."""
    return figures["used_memory"] - figures["clients_memory"]


async def _until(check, timeout: float) -> float:
    """Poll ``check()`` until true; the seconds it took (raises after ``timeout``)."""
    start = time.monotonic()
    while not await check():
        if time.monotonic() - start > timeout:
            raise TimeoutError(f"not reached within {timeout:g}s")
        await asyncio.sleep(0.2)
    return time.monotonic() - start


async def _run_many(client, app: str, n: int, window: int, message: str) -> list[tuple[str, str, str]]:
    """``n`` invocations of ``app``, each on a fresh session, ``window`` at a time, waited until settled."""
    user = f"{app}-{time.time_ns()}"
    gate = asyncio.Semaphore(window)

    async def one(index: int) -> tuple[str, str, str]:
        async with gate:
            session = await client.create_session(app, user)
            invocation_id = await client.enqueue(app, user, session.id, f"{message} #{index}")
            record = await client.wait(invocation_id, timeout=120)
            return session.id, invocation_id, record.status

    return [(user, *done) for done in await asyncio.gather(*(one(i) for i in range(n)))]


async def _settle_down(redis, baseline_keys: int, timeout: float) -> float:
    async def back() -> bool:
        return await redis.dbsize() <= baseline_keys
    return await _until(back, timeout)


async def run(url: str, n_footprint: int, n_soak: int, window: int) -> dict:
    import redis.asyncio as aioredis

    from runtime.redis_store import keys
    from worker.client import AgentqClient
    from worker.records.retention import RetentionPolicy

    redis = aioredis.Redis.from_url(url, decode_responses=True)
    client = AgentqClient(url, retention=RetentionPolicy.from_env(ENV))
    # The footprint's sessions are kept until deleted (no idle TTL), to tell the session's share apart.
    keeping = AgentqClient(url, retention=RetentionPolicy(settled_s=RETENTION_S))
    results: dict = {"retention_s": RETENTION_S}
    # Warm up (scripts loaded, broker keys made), then let retention take it all: the baseline.
    await _run_many(client, "weather", 50, 50, "Weather in Paris?")
    await _until(lambda: _no_invocations(redis, keys), 60)
    base = await footprint(redis)

    completed = await _run_many(keeping, "weather", n_footprint, 100, "Weather in Paris?")
    after_completed = await footprint(redis)
    took = await _until(lambda: _index_size(redis, keys, 0), 60)  # their own keys go; their sessions stay
    completed_later = await footprint(redis)
    parked = await _run_many(keeping, "approval", n_footprint, 100, "Approve 5")
    after_parked = await footprint(redis)
    await asyncio.sleep(RETENTION_S + 2)  # retention and a few sweeps pass: parked invocations stay
    parked_later = await footprint(redis)
    assert {status for *_, status in completed} == {"completed"}, Counter(s for *_, s in completed)
    assert {status for *_, status in parked} == {"parked"}, Counter(s for *_, s in parked)
    await asyncio.gather(*(keeping.delete_session(app, user, sid) for app, group in
                           (("weather", completed), ("approval", parked)) for user, sid, _, _ in group))
    after_delete = await footprint(redis)
    await _until(lambda: _no_invocations(redis, keys), 60)  # the cancelled records' retention
    after_all = await footprint(redis)
    results["footprint"] = {
        "n": n_footprint, "completed_retention_passed_after_s": round(took, 1),
        "completed_right_after": per_invocation(after_completed, base, n_footprint),
        "completed_after_retention_session_kept": per_invocation(completed_later, base, n_footprint),
        "parked_right_after": per_invocation(after_parked, completed_later, n_footprint),
        "parked_after_retention": per_invocation(parked_later, completed_later, n_footprint),
        "after_delete_session": per_invocation(after_delete, base, 2 * n_footprint),
        "keys_left_of_deleted_sessions": after_delete["session_keys"],
        "after_retention_again": {"keys": after_all["keys"] - base["keys"],
                                  "used_memory": _data_memory(after_all) - _data_memory(base)},
    }

    if n_soak:
        results["soak"] = await soak(url, redis, n_soak, window)
    await client.aclose()
    await keeping.aclose()
    await redis.aclose()
    return results


async def soak(url: str, redis, n: int, window: int) -> dict:
    """``n`` invocations ``window`` at a time; memory and keys at the start, at the end, once retention passed.

    The start is measured after a warm-up at the same concurrency has come and gone, and each run's client is
    closed before measuring: Redis keeps a buffer per open connection, and connection pools (the client's
    and the worker's) grow with how many invocations are in flight, not with how many ran."""
    from runtime.redis_store import keys
    from worker.client import AgentqClient
    from worker.records.retention import RetentionPolicy

    policy = RetentionPolicy.from_env(ENV)
    warm = AgentqClient(url, retention=policy)
    await _run_many(warm, "weather", 4 * window, window, "Weather in Paris?")
    await warm.aclose()
    await _until(lambda: _no_invocations(redis, keys), 60)
    await asyncio.sleep(2)
    base = await footprint(redis)
    client = AgentqClient(url, retention=policy)
    start = time.perf_counter()
    done = await _run_many(client, "weather", n, window, "Weather in Paris?")
    elapsed = time.perf_counter() - start
    await client.aclose()
    peak = await footprint(redis)
    back_after = await _settle_down(redis, base["keys"], 120)
    await _until(lambda: _no_invocations(redis, keys), 60)
    await asyncio.sleep(2)  # as before the start: the server's cron shrinks emptied tables, idle buffers
    end = await footprint(redis)
    return {
        "n": n, "window": window, "rate": round(n / elapsed), "not_completed": sum(s != "completed" for *_, s in done),
        "keys": {"start": base["keys"], "end_of_run": peak["keys"], "after_retention": end["keys"]},
        "used_memory": {"start": base["used_memory"], "end_of_run": peak["used_memory"],
                        "after_retention": end["used_memory"]},
        "dataset": [base["dataset"], peak["dataset"], end["dataset"]],
        "connections": [[base["clients"], base["clients_memory"]], [peak["clients"], peak["clients_memory"]],
                        [end["clients"], end["clients_memory"]]],
        "back_after_s": round(back_after, 1),
        "left_after_retention": {kind: n for kind, n in (end["counts"] - base["counts"]).items()},
    }


async def _no_invocations(redis, keys) -> bool:
    return not await redis.exists(keys.invocation_index()) and not await redis.zcard(keys.session_expiries())


async def _index_size(redis, keys, n: int) -> bool:
    return await redis.hlen(keys.invocation_index()) == n


def report(results: dict) -> None:
    print(json.dumps(results, indent=2, default=dict))
    fp = results["footprint"]
    print(f"\nper invocation (retention {results['retention_s']:g}s; each on a fresh session): keys, their "
          "MEMORY USAGE bytes, used_memory delta less connection buffers")
    for label, row in (("completed, right after", fp["completed_right_after"]),
                       ("completed, once retention passed (its session kept)",
                        fp["completed_after_retention_session_kept"]),
                       ("parked, right after", fp["parked_right_after"]),
                       ("parked, once retention passed (kept: it may resume)", fp["parked_after_retention"]),
                       ("after DELETE session (of each: the cancelled record)", fp["after_delete_session"])):
        print(f"  {label:56} {row['keys']:6.2f} keys {row['bytes']:7,d} B {row['used_memory']:7,d} B")
    left = fp["keys_left_of_deleted_sessions"]
    again = fp["after_retention_again"]
    print(f"{'PASS' if left == 0 else 'MISS'} keys left of deleted sessions: {left}")
    print(f"{'PASS' if again['keys'] == 0 else 'MISS'} once retention passed again: {again['keys']:+d} keys, "
          f"{again['used_memory']:+,d} B used_memory (less connection buffers) vs the baseline")
    if "soak" in results:
        figures = results["soak"]
        memory, count = figures["used_memory"], figures["keys"]
        ratio = memory["after_retention"] / memory["start"]
        connections = figures["connections"]
        print(f"soak: {figures['n']:,} invocations, {figures['window']} in flight, at {figures['rate']}/s "
              f"({figures['not_completed']} not completed); keys {count['start']} -> {count['end_of_run']:,} -> "
              f"{count['after_retention']}; used_memory {memory['start']:,} -> {memory['end_of_run']:,} -> "
              f"{memory['after_retention']:,} B, of which connection buffers {connections[0][1]:,} -> "
              f"{connections[2][1]:,} B ({connections[0][0]} -> {connections[2][0]} connections); back "
              f"{figures['back_after_s']}s after the run")
        print(f"{'PASS' if abs(ratio - 1) <= 0.10 else 'MISS'} soak used_memory once retention passed within 10% "
              f"of the start: {ratio:.3f}x")
        print(f"{'PASS' if count['after_retention'] <= count['start'] else 'MISS'} soak keys back to the baseline: "
              f"{count['after_retention']} vs {count['start']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--n", type=int, default=None, help="soak invocations (default 20,000; --quick 2,000)")
    parser.add_argument("--window", type=int, default=256)
    args = parser.parse_args(argv)
    n_soak = args.n if args.n is not None else (2_000 if args.quick else 20_000)
    from runtime.redis_store.launcher import EmbeddedRedis

    with tempfile.TemporaryDirectory() as tmp, EmbeddedRedis(tmp) as server:
        with agentq_workers(server.url, ["soak-w1"], **ENV):
            results = asyncio.run(run(server.url, 100 if args.quick else 300, n_soak, args.window))
    report(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
