"""agentq over HTTP against google-adk's InMemoryRunner in-process, side by side: ``python -m bench http``.

The agentq side is a real stack (embedded redis-server with AOF, one ``agentq worker``, one ``agentq api``, the
offline weather app). ``--concurrency`` K clients, each an httpx keep-alive connection, run invocations back
to back: create a session (``POST /apps/weather/users/bench/sessions``), then ``POST /run_sse`` and read the
stream to its end (function call, function response, final answer). The google-adk side
(bench/adk_side/inmemory_concurrent.py, in bench/.adk-venv) runs the same agent the same way in-process: K
asyncio tasks, each creating a session and running one invocation at a time. ``--precreate`` creates the
sessions before the timed window on the HTTP side (what ``bench api`` does) instead.

Both sides run in one run, one after the other, ``--rounds`` times each in the order adk, http, http, adk, ...
(each side's figure is the mean of its runs, so load drifting over the run weighs on both). Printed: both rates, the ratio (agentq / google-adk), and the CPU
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

from agentq.local_stack import CLI, LocalStack

ROOT = Path(__file__).resolve().parent.parent
APPS = ["examples.weather:app"]
MESSAGE = {"role": "user", "parts": [{"text": "What is the weather in Paris?"}]}
FRAMES_PER_INVOCATION = 3  # function call, function response, final answer


class _ProfiledApiStack(LocalStack):
    """A LocalStack whose ``agentq api`` runs under cProfile (its main thread: the event loop), stats to a file."""

    def __init__(self, *args, profile_to: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.profile_to = profile_to

    def _spawn(self, name: str, args: list[str]):
        if name != "api":
            return super()._spawn(name, args)
        import subprocess
        import sys

        code = ("import cProfile, sys; from agentq.cli import main; sys.argv[0] = 'agentq'; "
                "profile = cProfile.Profile(); profile.enable()\n"
                f"try:\n    main()\nfinally:\n    profile.disable(); profile.dump_stats({self.profile_to!r})")
        assert "from agentq.cli import main" in CLI  # the same entry point as an ordinary stack's API
        log = open(self.data_dir / f"{name}.log", "ab")  # noqa: SIM115 - owned by the child's lifetime
        return subprocess.Popen([sys.executable, "-c", code, *args], env=self.env(), stdout=log,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)


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


def run_http(n: int, warmup: int, concurrency: int, precreate: bool, profile_api: str | None = None) -> dict:
    """The agentq side alone: start the stack, measure, stop it (the API's profile written on its way out)."""
    with tempfile.TemporaryDirectory(prefix="agentq-http-vs-adk-") as data_dir:
        env = {"GOOGLE_API_KEY": "", "GEMINI_API_KEY": ""}
        stack = (LocalStack(data_dir, apps=APPS, extra_env=env) if profile_api is None
                 else _ProfiledApiStack(data_dir, apps=APPS, extra_env=env, profile_to=profile_api))
        with stack:
            return asyncio.run(_measure_http(stack, n, warmup, concurrency, precreate))


def _mean_http(runs: list[dict]) -> dict:
    cpu = {name: round(sum(run["cpu_ms_per_invocation"][name] for run in runs) / len(runs), 3)
           for name in runs[0]["cpu_ms_per_invocation"]}
    return {"invocations": sum(run["invocations"] for run in runs),
            "per_second": round(sum(run["per_second"] for run in runs) / len(runs), 1),
            "runs": [run["per_second"] for run in runs],
            "cpu_ms_per_invocation": cpu, "cpu_ms_per_invocation_total": round(sum(cpu.values()), 3)}


def run(n: int, warmup: int, concurrency: int, precreate: bool, rounds: int = 1) -> dict:
    """Both sides, ``rounds`` times in the order adk, http, http, adk, ... (each side's mean over its runs is
    taken, so load drifting over the run weighs on both); the figures."""
    load_before = os.getloadavg()
    adk_runs, http_runs = [], []
    for round_ in range(rounds):
        for side in ("adk", "http") if round_ % 2 == 0 else ("http", "adk"):
            if side == "adk":
                adk_runs.append(_adk(n, warmup, concurrency))
            else:
                http_runs.append(run_http(n, warmup, concurrency, precreate))
    http = _mean_http(http_runs)
    adk_rate = sum(run["per_second"] for run in adk_runs) / len(adk_runs)
    adk_cpu = sum(run["cpu_ms_per_invocation"] for run in adk_runs) / len(adk_runs)
    return {
        "machine_cpus": os.cpu_count(), "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()], "concurrency": concurrency,
        "sessions": "created before the window" if precreate else "created per invocation, inside the window",
        "agentq_http": http,
        "google_adk_inmemory": {"per_second": round(adk_rate, 1), "runs": [run["per_second"] for run in adk_runs],
                                "cpu_ms_per_invocation": round(adk_cpu, 3)},
        "ratio_agentq_http_over_adk": round(http["per_second"] / adk_rate, 3),
    }


def _print(results: dict) -> None:
    http, adk = results["agentq_http"], results["google_adk_inmemory"]
    print(f"http vs google-adk in-process ({results['machine_cpus']} cpus, load {results['load_average_before']}"
          f" -> {results['load_average_after']}, {results['concurrency']} clients, sessions "
          f"{results['sessions']})")
    print(f"  agentq over HTTP (api + 1 worker + redis)  {http['per_second']} invocations/s  (runs {http['runs']})")
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
    parser.add_argument("--rounds", type=int, default=2, help="runs of each side: adk, http, http, adk, ...")
    parser.add_argument("--side", choices=["both", "http"], default="both",
                        help="http: only the agentq side, one run, its JSON (to compare two checkouts)")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "http_vs_adk.json"))
    parser.add_argument("--profile-api", metavar="FILE",
                        help="only the HTTP side, its API process under cProfile; the pstats go to FILE")
    args = parser.parse_args(argv)
    if args.profile_api:
        import pstats

        http = run_http(args.n, args.warmup, args.concurrency, args.precreate, profile_api=args.profile_api)
        print(json.dumps(http))
        pstats.Stats(args.profile_api).sort_stats("tottime").print_stats(40)
        return 0
    if args.side == "http":
        print(json.dumps(run_http(args.n, args.warmup, args.concurrency, args.precreate)))
        return 0
    results = run(args.n, args.warmup, args.concurrency, args.precreate, args.rounds)
    _print(results)
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
