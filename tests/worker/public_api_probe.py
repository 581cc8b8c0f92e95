"""Run an agentq worker and the API in one process, pass an invocation through both, and write which attributes
of celery/kombu/redis-py modules and classes changed meanwhile (a JSON report for test_celery_public_api).

    python -m tests.worker.public_api_probe REDIS_URL REPORT_JSON

Every submodule of the three packages is imported before the first snapshot, so nothing can be patched in a
module the snapshot has not seen; the worker (Celery's solo pool, in the main thread as ``agentq worker`` runs
it) and the API (uvicorn in a thread) then serve one HTTP-enqueued invocation, and the snapshot is taken again.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import pkgutil
import signal
import sys
import threading
import time

PACKAGES = ("celery", "kombu", "redis")
SKIPPED = ("eventlet", "gevent", "__main__")  # importing these pools would monkey-patch the standard library


def import_everything() -> None:
    """Import each submodule of PACKAGES that imports (optional transports without their library do not)."""
    for package in PACKAGES:
        root = importlib.import_module(package)
        for info in pkgutil.walk_packages(root.__path__, f"{package}."):
            if any(part in info.name for part in SKIPPED):
                continue
            try:
                importlib.import_module(info.name)
            except Exception:  # noqa: S112 - a transport or pool whose optional dependency is not installed
                continue


def snapshot() -> dict[str, dict[str, object]]:
    """For each module of PACKAGES, its classes and functions; for each class defined there, its whole dict."""
    taken: dict[str, dict[str, object]] = {}
    for name, module in list(sys.modules.items()):
        if module is None or name.split(".")[0] not in PACKAGES:
            continue
        members = dict(vars(module))
        taken[name] = {k: v for k, v in members.items() if inspect.isclass(v) or inspect.isroutine(v)}
        for attr, value in members.items():
            if inspect.isclass(value) and value.__module__ == name:
                taken[f"{name}.{attr}"] = dict(vars(value))
    return taken


def changes(before: dict, after: dict) -> list[str]:
    """Every attribute added, removed or replaced between two snapshots, and every module new since the first."""
    found = [f"new module or class {name}" for name in sorted(set(after) - set(before))]
    for name, old in before.items():
        new = after.get(name, {})
        found += [f"{name}.{attr} added" for attr in sorted(set(new) - set(old))]
        found += [f"{name}.{attr} removed" for attr in sorted(set(old) - set(new))]
        found += [f"{name}.{attr} replaced" for attr in sorted(set(old) & set(new)) if old[attr] is not new[attr]]
    return found


def drive(redis_url: str, port: int, report_path: str, before: dict) -> None:
    """In a thread: wait for the worker, run one invocation through the API, write the report, stop the worker."""
    import httpx
    import redis

    from runtime.redis_store import keys

    report: dict = {}
    try:
        with redis.Redis.from_url(redis_url) as client:
            deadline = time.monotonic() + 60
            while not client.hexists(keys.workers(), "probe"):
                assert time.monotonic() < deadline, "the worker did not get ready"
                time.sleep(0.05)
        base = f"http://127.0.0.1:{port}"
        with httpx.Client(base_url=base, timeout=10) as http:
            session = http.post("/apps/weather/users/probe/sessions", json={}).json()["id"]
            enqueued = http.post(f"/apps/weather/users/probe/sessions/{session}/invocations",
                                 json={"newMessage": {"role": "user", "parts": [{"text": "Weather in Paris?"}]}})
            invocation = enqueued.json()["invocationId"]
            deadline = time.monotonic() + 60
            while (status := http.get(f"/invocations/{invocation}").json()["status"]) not in ("completed", "failed"):
                assert time.monotonic() < deadline, f"invocation stuck in {status}"
                time.sleep(0.05)
        report = {"status": status, "changes": changes(before, snapshot())}
    except BaseException as exc:
        report = {"error": repr(exc)}
    finally:
        with open(report_path, "w") as out:
            json.dump(report, out)
        os.kill(os.getpid(), signal.SIGTERM)  # Celery's warm shutdown: the worker drains and returns


def main(redis_url: str, report_path: str) -> int:
    import_everything()
    before = snapshot()

    import argparse

    import uvicorn

    from agentq import serve_api
    from agentq.cli import main as agentq_main
    from runtime.redis_store.launcher import free_port

    parser = argparse.ArgumentParser()
    serve_api.add_arguments(parser)
    api = serve_api.build(parser.parse_args(["--app", "tests.worker.apps:weather_app"]), redis_url)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(api, host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    threading.Thread(target=drive, args=(redis_url, port, report_path, before), daemon=True).start()
    agentq_main(["--redis-url", redis_url, "--log-level", "WARNING", "worker", "--name", "probe",
                 "--app", "tests.worker.apps:weather_app"])
    server.should_exit = True
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
