"""What the API process spends per request: ``python -m bench.profile_api [N] [CHECKOUT] [--all]``.

The API app (``api.app.create_app``, fast lane on) runs in this process on an embedded redis-server, driven through
httpx's ASGI transport (no sockets: what is counted is the app's own work); a WorkerHost on its own loop thread
runs what it enqueues (its run jobs are handed straight to that host instead of a broker). For each of N rounds
the profile takes, per request kind, from the request until its response is read to the end:
- ``enqueue``: ``POST .../invocations`` (202);
- ``run_sse``: ``POST /run_sse`` on a fresh session, its whole stream (enqueue, follow, frames, the end).
Per request: the API's Python calls (cProfile on the API's thread only; the worker's thread is not profiled),
pydantic validations, and what the API sent Redis (through bench/redis_counter.py's proxy: round trips and
commands by name; the worker and the bench's own reads go to Redis directly and are not counted).

Pass another checkout to profile its code with this script (with that checkout's own python:
``/other/.venv/bin/python bench/profile_api.py 200 /other``); ``--all`` also prints every function's calls per
request, to diff two checkouts. Counts, not times, are the evidence on a shared machine.
"""

from __future__ import annotations

import asyncio
import cProfile
import json
import pstats
import sys
import tempfile
from pathlib import Path

_COUNTED = {
    "python_calls": lambda name: not name.startswith("~") and not name.startswith("<"),  # builtins aside
    "pydantic_validations": lambda name: "SchemaValidator' objects>" in name and "validate_" in name,
    "json_dumps": lambda name: name.endswith("json/__init__.py:dumps"),
    "json_loads": lambda name: name.endswith("json/__init__.py:loads"),
}
MESSAGE = {"role": "user", "parts": [{"text": "Weather in Paris?"}]}


class _HandToWorker:
    """A Celery app whose ``send_task`` hands the run jobs to an in-process WorkerHost's loop."""

    def __init__(self, host) -> None:
        self._host = host

    def send_task(self, name: str, args: list, **kwargs) -> None:
        jobs = [args] if name == "agentq.run" else args[0]
        for job in jobs:
            self._host.loop.loop.call_soon_threadsafe(self._host._begin, job[0], job[1] if len(job) > 1 else None)


class _NoBroker:
    def send_task(self, *args, **kwargs) -> None:
        return None


def _import(*paths: str):
    """The first of ``paths`` (``module:name``) that imports: the two checkouts lay modules out differently."""
    import importlib

    for path in paths:
        module, _, name = path.partition(":")
        try:
            return getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):
            continue
    raise ImportError(f"none of {paths!r}")


def _name(key: tuple[str, int, str]) -> str:
    path, _line, function = key
    for root in sys.path:  # the same function in two checkouts gets the same name
        if root and path.startswith(root + "/"):
            path = path[len(root) + 1:]
            break
    return f"{path}:{function}"


async def _rounds(n: int, api_url: str, redis_url: str, host, proxy) -> dict:
    import httpx

    from api.app import create_app
    from api.deps import Services
    from api.settings import ApiSettings
    from worker.client import AgentqClient

    queue = AgentqClient(api_url, celery_app=_HandToWorker(host))
    direct = AgentqClient(redis_url, celery_app=_NoBroker())
    app = create_app(ApiSettings(app_names=["weather"]),
                     Services(session_service=queue.session_service, artifact_service=queue.artifact_service,
                              queue=queue))
    kinds = ("enqueue", "run_sse")
    profilers = {kind: cProfile.Profile() for kind in kinds}
    sent = {kind: None for kind in kinds}
    transport = httpx.ASGITransport(app=app)

    async def enqueue(http, session_id: str) -> str:
        response = await http.post(f"/apps/weather/users/bench/sessions/{session_id}/invocations",
                                   json={"newMessage": MESSAGE})
        assert response.status_code == 202, response.text
        return response.json()["invocationId"]

    async def run_sse(http, session_id: str) -> str:
        body = {"appName": "weather", "userId": "bench", "sessionId": session_id, "newMessage": MESSAGE}
        async with http.stream("POST", "/run_sse", json=body) as response:
            assert response.status_code == 200
            return "".join([chunk async for chunk in response.aiter_text()])

    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        for i in range(n + 10):
            measured = i >= 10  # the first rounds warm caches and connections up
            for kind in kinds:
                session = await direct.create_session("weather", "bench")
                counts = proxy.counts()
                if measured:
                    profilers[kind].enable()
                result = await (enqueue if kind == "enqueue" else run_sse)(http, session.id)
                if measured:
                    profilers[kind].disable()
                    used = proxy.counts() - counts
                    sent[kind] = used if sent[kind] is None else _add(sent[kind], used)
                if kind == "enqueue":
                    assert (await direct.wait(result, timeout=30)).status == "completed"
                else:
                    assert "It is sunny" in result, result[-500:]
    await queue.aclose()
    await direct.aclose()
    return {kind: (pstats.Stats(profilers[kind]), sent[kind]) for kind in kinds}


def _add(one, two):
    return type(one)(one.commands + two.commands, one.round_trips + two.round_trips)


def main(argv: list[str]) -> None:
    """Print the per-request counts as one JSON object per request kind."""
    n = int(argv[0]) if argv else 200
    from bench.redis_counter import CountingProxy
    from bench.worker_apps import weather
    from runtime.redis_store import scripts
    from runtime.redis_store.launcher import EmbeddedRedis

    host_class = _import("worker.running.host:WorkerHost", "worker.host:WorkerHost")
    config_class = _import("worker.running.executor:ExecutorConfig", "worker.executor:ExecutorConfig")
    with tempfile.TemporaryDirectory() as tmp, EmbeddedRedis(tmp) as server:
        proxy = CountingProxy("127.0.0.1", server.port, {s.sha: s.name for s in scripts.ALL.values()})
        api_url = proxy.start()
        host = host_class(server.url, {"weather": weather}, celery_app=_NoBroker(), heartbeat_s=3600, reap_s=3600,
                          config=config_class(worker_name="profile-api"))
        try:
            measured = asyncio.run(_rounds(n, api_url, server.url, host, proxy))
        finally:
            host.stop(grace=1.0)
            proxy.stop()
    for kind, (stats, sent) in measured.items():
        totals = dict.fromkeys(_COUNTED, 0)
        for key, row in stats.stats.items():  # type: ignore[attr-defined]
            for name, wanted in _COUNTED.items():
                if wanted(_name(key)):
                    totals[name] += row[1]
        per_request = {name: round(count / n, 2) for name, count in totals.items()}
        per_request["redis_round_trips"] = round(sent.round_trips / n, 2)
        per_request["redis_commands_sent"] = round(sum(sent.commands.values()) / n, 2)
        print(json.dumps({"request": kind, "requests": n, "per_request": per_request,
                          "commands_sent": {name: round(c / n, 2) for name, c in sorted(sent.commands.items())},
                          "profiled_seconds": round(stats.total_tt, 3)}))  # type: ignore[attr-defined]
        if "--all" in sys.argv:
            calls = {_name(key): round(row[1] / n, 2) for key, row in stats.stats.items()}  # type: ignore
            print(json.dumps({"all_calls_" + kind: calls}))


if __name__ == "__main__":
    args = [arg for arg in sys.argv[1:] if not arg.startswith("--")]
    if len(args) > 1:  # profile another checkout's code: its root goes first on the path
        sys.path.insert(0, str(Path(args[1]).resolve()))
    main(args[:1])
