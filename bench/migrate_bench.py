"""`python -m bench migrate`: the layout migration (worker.records.migrate) over stores of 10,000 and 100,000 invocations.

Each store is written in the previous release's shape (records without counts or 'counted' marker, final ones
with a TTL, parked ones only in their user's index, no layout version): a fifth parked, a fifth queued, the rest
completed, over 100 users of 2 apps. Prints the migration's time (and per 100,000), the Redis commands it took
(INFO commandstats: the client's SCAN/EVALSHA/HSET and the commands its script ran inside each EVALSHA) and
the memory the store grew by (its new counts, parked index and retention entries).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time

SIZES = (10_000, 100_000)


def _fill(client, n: int) -> None:
    """``n`` records as the previous release left them."""
    from runtime.redis_store import keys

    now = time.time()
    pipe = client.pipeline(transaction=False)
    for i in range(n):
        app, user, invocation_id = f"app{i % 2}", f"user{i % 100}", f"e-bench-{i}"
        status = ("parked", "queued", "completed", "completed", "completed")[i % 5]
        record = keys.invocation(app, user, invocation_id)
        fields = {"id": invocation_id, "app_name": app, "user_id": user, "session_id": f"s{i}", "status": status,
                  "created_at": repr(now - 60), "updated_at": repr(now - 30), "retention_s": "604800.0",
                  "new_message": '{"parts":[{"text":"hi"}],"role":"user"}'}
        if status == "completed":
            fields["finished_at"] = repr(now - 30)
        pipe.hset(record, mapping=fields)
        pipe.zadd(keys.user_invocations(app, user), {invocation_id: now - 60})
        pipe.hset(keys.invocation_index(), invocation_id, json.dumps([app, user, f"s{i}"]))
        if status == "completed":
            pipe.pexpire(record, 604_800_000)
        if status == "parked":
            pipe.zadd(keys.user_parked(app, user), {invocation_id: now - 60})
        if i % 1000 == 999:
            pipe.execute()
    pipe.execute()


def _commands(client) -> dict[str, int]:
    stats = client.info("commandstats")
    return {name.removeprefix("cmdstat_"): value["calls"] for name, value in stats.items()}


def measure(n: int) -> dict:
    """Migrate a fresh store of ``n`` invocations; its figures."""
    from runtime.redis_store.launcher import EmbeddedRedis
    from runtime.redis_store.redis_url import redis_client_from_url
    from worker.records.migrate import migrate_store

    with tempfile.TemporaryDirectory() as data:
        server = EmbeddedRedis(data)
        server.start()
        try:
            client = redis_client_from_url(server.url, asyncio=False, decode_responses=True)
            _fill(client, n)
            memory_before = client.info("memory")["used_memory"]
            client.config_resetstat()
            started = time.perf_counter()
            report = migrate_store(client, retention_s=604_800, owner="bench")
            seconds = time.perf_counter() - started
            commands = _commands(client)
            commands.pop("info", None)
            memory_after = client.info("memory")["used_memory"]
            client.close()
        finally:
            server.stop()
    return {"invocations": n, "seconds": round(seconds, 2), "per_100k_s": round(seconds / n * 100_000, 1),
            "counted": report.counted, "indexed": report.indexed, "persisted": report.persisted,
            "commands": sum(commands.values()), "commands_per_invocation": round(sum(commands.values()) / n, 1),
            "by_command": dict(sorted(commands.items(), key=lambda item: -item[1])),
            "memory_grew_mb": round((memory_after - memory_before) / 2**20, 1)}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.migrate_bench")
    parser.add_argument("--sizes", type=int, nargs="*", default=list(SIZES))
    args = parser.parse_args(argv)
    for n in args.sizes:
        print(json.dumps(measure(n)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
