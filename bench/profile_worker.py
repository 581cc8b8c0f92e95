"""What one durable invocation costs a worker: ``python -m bench.profile_worker [N] [CHECKOUT] [--all]``.

A real WorkerHost (its event loop thread, executor, Redis session service) on an embedded redis-server runs N
invocations of the weather tool round trip (bench/worker_apps.py), one at a time, each enqueued beforehand by a
store of its own. Measured per invocation, from the claim until the run's task is done (settled):
- the worker's Python calls (cProfile on the loop thread), pydantic validations, JSON encodings and decodings;
- what the worker sends Redis (through bench/redis_counter.py's proxy): round trips and commands by name;
- the commands the server ran for it, the ones inside Lua scripts included (INFO commandstats).

Celery is left out (the bench claims each invocation itself), as are heartbeats and the reaper (their period is
set past the run). Pass another checkout to profile its code with this script (with that checkout's own python:
``/other/.venv/bin/python bench/profile_worker.py 300 /other``); ``--all`` prints every function's calls per
invocation instead, to diff two checkouts. Counts, not times, are the evidence on a shared machine.
"""

from __future__ import annotations

import cProfile
import json
import pstats
import sys
import tempfile
from collections import Counter
from pathlib import Path

_COUNTED = {
    "python_calls": lambda name: not name.startswith("~") and not name.startswith("<"),  # builtins aside
    "pydantic_validations": lambda name: "SchemaValidator' objects>" in name and "validate_" in name,
    "json_dumps": lambda name: name.endswith("json/__init__.py:dumps"),
    "json_loads": lambda name: name.endswith("json/__init__.py:loads"),
}


class _NoBroker:
    """Run jobs are not sent: the profile claims each invocation itself."""

    def send_task(self, *args, **kwargs) -> None:
        return None


def _import(*paths: str):
    """The first of ``paths`` (``module:name``) that imports: the two checkouts lay modules out differently."""
    import importlib

    for path in paths:
        module, _, name = path.partition(":")
        try:
            return getattr(importlib.import_module(module), name)
        except ImportError:
            continue
    raise ImportError(f"none of {paths!r}")


def _name(key: tuple[str, int, str]) -> str:
    path, _line, function = key
    for root in sys.path:  # the same function in two checkouts gets the same name
        if root and path.startswith(root + "/"):
            path = path[len(root) + 1:]
            break
    return f"{path}:{function}"


async def _server_commands(store) -> int:
    stats = await store.redis.info("commandstats")
    return sum(int(value["calls"]) for value in stats.values())


def main(argv: list[str]) -> None:
    """Print the per-invocation counts as one JSON object (``--all``: every function's calls too)."""
    n = int(argv[0]) if argv else 300
    from bench.redis_counter import CountingProxy
    from bench.worker_apps import weather
    from runtime.redis_store import scripts
    from runtime.redis_store.launcher import EmbeddedRedis

    store_class = _import("worker.records.store:InvocationStore", "worker.store:InvocationStore")
    host_class = _import("worker.running.host:WorkerHost", "worker.host:WorkerHost")
    config_class = _import("worker.running.executor:ExecutorConfig", "worker.executor:ExecutorConfig")
    profiler = cProfile.Profile()
    with tempfile.TemporaryDirectory() as tmp, EmbeddedRedis(tmp) as server:
        proxy = CountingProxy("127.0.0.1", server.port, {s.sha: s.name for s in scripts.ALL.values()})
        host = host_class(proxy.start(), {"weather": weather}, celery_app=_NoBroker(), wait_for_claim=True,
                          heartbeat_s=3600, reap_s=3600, config=config_class(worker_name="profile"))
        enqueuer = store_class(server.url, celery_app=_NoBroker())

        async def enqueue_all(count: int) -> list[str]:
            ids = []
            for i in range(count):
                session = await enqueuer.session_service.create_session(app_name="weather", user_id="p")
                ids.append(await enqueuer.enqueue("weather", "p", session.id, f"Weather in Paris? #{i}", None, None))
            return ids

        async def run_all(ids: list[str], profiled: bool) -> None:
            for invocation_id in ids:
                if profiled:
                    profiler.enable()
                assert await host.executor.start(invocation_id) == "started"
                await host.executor.active[invocation_id][1]
                if profiled:
                    profiler.disable()

        try:
            host.loop.run(run_all(host.loop.run(enqueue_all(50)), profiled=False))  # warm caches and connections
            ids = host.loop.run(enqueue_all(n))
            before = proxy.counts(), host.loop.run(_server_commands(enqueuer))
            host.loop.run(run_all(ids, profiled=True))
            after = proxy.counts(), host.loop.run(_server_commands(enqueuer))
            statuses = Counter(host.loop.run(enqueuer.get(i)).status for i in ids)
        finally:
            host.stop(grace=1.0)
            proxy.stop()
    sent = after[0] - before[0]
    stats = pstats.Stats(profiler)
    totals = dict.fromkeys(_COUNTED, 0)
    for key, row in stats.stats.items():  # type: ignore[attr-defined]
        for name, wanted in _COUNTED.items():
            if wanted(_name(key)):
                totals[name] += row[1]
    per_invocation = {name: round(count / n, 2) for name, count in totals.items()}
    per_invocation["redis_round_trips"] = round(sent.round_trips / n, 2)
    per_invocation["redis_commands_sent"] = round(sum(sent.commands.values()) / n, 2)
    per_invocation["redis_commands_run"] = round((after[1] - before[1]) / n, 2)  # scripts' commands included
    print(json.dumps({"invocations": n, "statuses": dict(statuses), "per_invocation": per_invocation,
                      "commands_sent": {name: round(c / n, 2) for name, c in sorted(sent.commands.items())},
                      "profiled_seconds": round(stats.total_tt, 3)}))  # type: ignore[attr-defined]
    if "--top" in sys.argv:  # where the time went, for reading (times move with the machine's load)
        stats.sort_stats("tottime").print_stats(40)
    if "--all" in sys.argv:
        calls = {_name(key): round(row[1] / n, 2) for key, row in stats.stats.items()}  # type: ignore[attr-defined]
        print(json.dumps({"all_calls": calls}))


if __name__ == "__main__":
    args = [arg for arg in sys.argv[1:] if not arg.startswith("--")]
    if len(args) > 1:  # profile another checkout's code: its root goes first on the path
        sys.path.insert(0, str(Path(args[1]).resolve()))
    main(args[:1])
