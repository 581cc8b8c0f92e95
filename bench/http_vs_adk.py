"""agentq over HTTP against google-adk's InMemoryRunner in-process, side by side: ``python -m bench http``.

The agentq side is a real stack (embedded redis-server with AOF, one ``agentq worker``, one ``agentq api``, the
offline weather app). ``--concurrency`` K clients, each an httpx keep-alive connection, run invocations back
to back: create a session (``POST /apps/weather/users/bench/sessions``), then ``POST /run_sse`` and read the
stream to its end (function call, function response, final answer). The google-adk side
(bench/adk_side/inmemory_concurrent.py, in bench/.adk-venv) runs the same agent the same way in-process: K
asyncio tasks, each creating a session and running one invocation at a time. ``--precreate`` creates the
sessions before the timed window on the HTTP side (what ``bench api`` does) instead.

Both sides run in one run, one after the other (adk, http, adk: the anchor is the mean of its two runs, so
load drifting over the run weighs on both). Printed: both rates, the ratio (agentq / google-adk), and the CPU
each process spent per invocation (API, worker, redis-server, the client), so the time can be placed.
Writes bench/results/http_vs_adk.json.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import tempfile
import time
from pathlib import Path

import httpx
import psutil

from agentq.local_stack import LocalStack

ROOT = Path(__file__).resolve().parent.parent
APPS = ["examples.weather:app"]
MESSAGE = {"role": "user", "parts": [{"text": "What is the weather in Paris?"}]}
FRAMES_PER_INVOCATION = 3  # function call, function response, final answer


def process_cpu(pid: int) -> float:
    """User + system CPU seconds of a process and its children so far."""
    process = psutil.Process(pid)
    total = 0.0
    for each in [process, *process.children(recursive=True)]:
        try:
            times = each.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system
    return total


async def _run_one(http: httpx.AsyncClient, session_id: str | None) -> None:
    """One invocation over HTTP: a session (unless given), POST /run_sse, the stream read to its end."""
    if session_id is None:
        session_id = (await http.post("/apps/weather/users/bench/sessions")).raise_for_status().json()["id"]
    body = {"appName": "weather", "userId": "bench", "sessionId": session_id, "newMessage": MESSAGE}
    frames = 0
    async with http.stream("POST", "/run_sse", json=body) as response:
        response.raise_for_status()
        async for line in response.aiter_lines():
            if line.startswith("data:"):
                if line.startswith('data: {"error"'):
                    raise RuntimeError(f"invocation failed over HTTP: {line}")
                frames += 1
    if frames != FRAMES_PER_INVOCATION:
        raise RuntimeError(f"expected {FRAMES_PER_INVOCATION} frames, got {frames}")


async def _drive(clients: list[httpx.AsyncClient], n: int, sessions: list[str] | None) -> None:
    counter = itertools.count()

    async def client(http: httpx.AsyncClient) -> None:
        while (i := next(counter)) < n:
            await _run_one(http, sessions[i] if sessions else None)

    await asyncio.gather(*(client(http) for http in clients))


async def _measure_http(stack: LocalStack, n: int, warmup: int, concurrency: int, precreate: bool) -> dict:
    pids = {"api": stack.api.pid, "worker": stack.workers[0].pid, "redis": stack.redis._process.pid}
    clients = [httpx.AsyncClient(base_url=stack.base_url, timeout=60) for _ in range(concurrency)]
    try:
        await _drive(clients, warmup, None)
        sessions = None
        if precreate:
            http = clients[0]
            sessions = [(await http.post("/apps/weather/users/bench/sessions")).json()["id"] for _ in range(n)]
        before = {name: process_cpu(pid) for name, pid in pids.items()} | {"client": time.process_time()}
        start = time.perf_counter()
        await _drive(clients, n, sessions)
        seconds = time.perf_counter() - start
        after = {name: process_cpu(pid) for name, pid in pids.items()} | {"client": time.process_time()}
    finally:
        for http in clients:
            await http.aclose()
    cpu = {name: round((after[name] - before[name]) * 1000 / n, 3) for name in before}
    return {"invocations": n, "seconds": round(seconds, 3), "per_second": round(n / seconds, 1),
            "cpu_ms_per_invocation": cpu, "cpu_ms_per_invocation_total": round(sum(cpu.values()), 3)}


def _adk(n: int, warmup: int, concurrency: int) -> dict:
    from bench.adk_env import run_adk_bench

    return run_adk_bench("inmemory_concurrent.py", "--n", n, "--warmup", warmup, "--concurrency", concurrency)


def run(n: int, warmup: int, concurrency: int, precreate: bool) -> dict:
    """Both sides, adk / http / adk; the figures."""
    load_before = os.getloadavg()
    adk_first = _adk(n, warmup, concurrency)
    with tempfile.TemporaryDirectory(prefix="agentq-http-vs-adk-") as data_dir:
        env = {"GOOGLE_API_KEY": "", "GEMINI_API_KEY": ""}
        with LocalStack(data_dir, apps=APPS, extra_env=env) as stack:
            http = asyncio.run(_measure_http(stack, n, warmup, concurrency, precreate))
    adk_second = _adk(n, warmup, concurrency)
    adk_rate = (adk_first["per_second"] + adk_second["per_second"]) / 2
    adk_cpu = (adk_first["cpu_ms_per_invocation"] + adk_second["cpu_ms_per_invocation"]) / 2
    return {
        "machine_cpus": os.cpu_count(), "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()], "concurrency": concurrency,
        "sessions": "created before the window" if precreate else "created per invocation, inside the window",
        "agentq_http": http,
        "google_adk_inmemory": {"per_second": round(adk_rate, 1), "runs": [adk_first["per_second"],
                                                                           adk_second["per_second"]],
                                "cpu_ms_per_invocation": round(adk_cpu, 3)},
        "ratio_agentq_http_over_adk": round(http["per_second"] / adk_rate, 3),
    }


def _print(results: dict) -> None:
    http, adk = results["agentq_http"], results["google_adk_inmemory"]
    print(f"http vs google-adk in-process ({results['machine_cpus']} cpus, load {results['load_average_before']}"
          f" -> {results['load_average_after']}, {results['concurrency']} clients, sessions "
          f"{results['sessions']})")
    print(f"  agentq over HTTP (api + 1 worker + redis)  {http['per_second']} invocations/s")
    print(f"  google-adk InMemoryRunner in-process       {adk['per_second']} invocations/s  (runs {adk['runs']})")
    print(f"  ratio agentq / google-adk                  {results['ratio_agentq_http_over_adk']}x")
    cpu = http["cpu_ms_per_invocation"]
    print("  CPU ms per invocation: " + ", ".join(f"{name} {value}" for name, value in cpu.items())
          + f"; total {http['cpu_ms_per_invocation_total']} (google-adk: {adk['cpu_ms_per_invocation']})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=2000, help="invocations timed per side")
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--precreate", action="store_true", help="HTTP side: sessions created before the window")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "http_vs_adk.json"))
    args = parser.parse_args(argv)
    results = run(args.n, args.warmup, args.concurrency, args.precreate)
    _print(results)
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
