"""Redis cost per invocation, per committed event and per partial chunk, from the server's own counters.

    .venv/bin/python -m bench rediscost                 # this checkout
    .venv/bin/python -m bench.rediscost_bench --tree /work/main   # another checkout's code (its own .venv)

One embedded redis-server, one ``agentq worker`` process (solo pool, as bench/worker_bench.py), the apps of
bench/rediscost_apps.py. Each phase resets the server's counters (CONFIG RESETSTAT), does its work, and reads
INFO commandstats (every command, the ones Lua scripts run inside an EVALSHA included, as the issue counts them)
and INFO cpu (used_cpu_user + used_cpu_sys: the server's CPU, every client's share). The worker keeps running
its own passes (heartbeat, reaper, sweeper) meanwhile; their share is counted too, as in a real drain.

Phases, each N invocations on fresh sessions, enqueued with up to IN_FLIGHT at once by the benchmark's client:
- ``weather``: bench/WORKLOAD.md's one-tool round trip (4 committed events): the cost **per invocation**
  (enqueue, claim, read session, commit events, settle);
- ``steps``: the same with more tool rounds: (steps - weather) / (extra committed events) is the cost **per
  committed event**;
- ``chatter`` streamed (SSE) against ``chatter`` not streamed: the difference per chunk is the cost **per
  published partial chunk**.
Sessions are created before each phase's counters are reset (their cost is printed apart, ``create_session``).
The client waits by reading the completed count (one HMGET) every 50 ms; those HMGETs are taken out of the
figures.

``--tree PATH`` runs the same phases with another checkout's code (client and worker, under PATH/.venv), to
measure a "before" beside the current tree on the same machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
APPS = ("weather", "steps", "chatter")
IN_FLIGHT = 64
"""Enqueues in flight at once from the benchmark's client."""


def _tree() -> Path:
    return Path(os.environ.get("BENCH_REDISCOST_TREE", ROOT))


def _env(url: str) -> dict[str, str]:
    return {**os.environ, "AGENTQ_REDIS_URL": url, "PYTHONPATH": f"{_tree()}{os.pathsep}{HERE}",
            "AGENTQ_WEBHOOK_SECRET": "whsec_YmVuY2gtd2ViaG9vay1zZWNyZXQ="}


@contextmanager
def worker(url: str):
    """One ``agentq worker`` of the tree being measured, serving the apps of bench/rediscost_apps.py."""
    import redis

    from runtime.redis_store import keys

    args = [sys.executable, "-m", "agentq.cli", "--log-level", "WARNING", "worker", "--name", "cost-w1",
            "--pool", "solo", "--concurrency", "5000"]
    for app in APPS:
        args += ["--app", f"rediscost_apps:{app}"]
    log = open(Path(tempfile.gettempdir()) / "agentq-bench-rediscost.log", "wb")  # noqa: SIM115
    process = subprocess.Popen(args, cwd=_tree(), env=_env(url), stdout=log, stderr=log)
    try:
        with redis.Redis.from_url(url) as client:
            deadline = time.monotonic() + 240
            while not client.hexists(keys.workers(), "cost-w1"):
                assert time.monotonic() < deadline and process.poll() is None, "the worker did not start"
                time.sleep(0.05)
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()


async def _server_figures(redis) -> tuple[dict[str, int], float]:
    stats = await redis.info("commandstats")
    calls = {name.removeprefix("cmdstat_"): int(value["calls"]) for name, value in stats.items()}
    cpu = await redis.info("cpu")
    return calls, float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"])


async def phase(client, app: str, n: int, *, streaming: bool = False) -> dict:
    """Enqueue ``n`` invocations of ``app`` on fresh sessions and wait until all completed; what Redis did."""
    from runtime.redis_store import keys

    redis = client._store.redis
    user = f"cost-{time.time_ns()}"
    sessions = [(await client.create_session(app, user)).id for _ in range(n)]
    # the app's completed count (a per-status counter, layout 1) and the fresh user's completions (a flow,
    # layout 2), so a --tree of either layout is followed by the same read
    watched = [f"a:{keys.app_tag(app)[1:-1]}:completed", f"u:{keys.user_tag(app, user)[1:-1]}:running>completed"]

    async def completed() -> int:
        counter, flow = await redis.hmget(keys.status_counts(), watched)
        return max(int(counter or 0) - start_count, int(flow or 0))

    start_count = 0
    start_count = await completed()
    run_config = {"streaming_mode": "sse"} if streaming else None
    gate = asyncio.Semaphore(IN_FLIGHT)

    async def one(session_id: str) -> None:
        async with gate:
            await client.enqueue(app, user, session_id, "Weather in Paris?", run_config=run_config)

    await redis.config_resetstat()
    cpu_before = (await _server_figures(redis))[1]
    await asyncio.gather(*(one(s) for s in sessions))
    polls = 0
    deadline = time.monotonic() + 2400
    while await completed() < n:
        polls += 1
        assert time.monotonic() < deadline, f"{app!r}: not every invocation completed"
        await asyncio.sleep(0.05)
    polls += 1
    calls, cpu_after = await _server_figures(redis)
    calls.pop("info", None)
    calls.pop("config|resetstat", None)
    calls.pop("config", None)
    calls["hmget"] = calls.get("hmget", 0) - polls
    total = sum(calls.values())
    return {"app": app, "streaming": streaming, "n": n, "commands": total,
            "redis_cpu_s": cpu_after - cpu_before, "by_command": dict(sorted(calls.items(), key=lambda kv: -kv[1]))}


async def measure(url: str, n: int) -> dict:
    from rediscost_apps import CHATTER_WORDS, STEPS

    from worker.client import AgentqClient

    client = AgentqClient(url)
    try:
        # warm up with as many in flight as the phases keep: scripts loaded, and the client's connection pool at
        # its full size (a connection opened during a phase would count its HELLO and CLIENT SETINFO)
        await phase(client, "weather", IN_FLIGHT)
        weather = await phase(client, "weather", n)
        steps = await phase(client, "steps", n)
        plain = await phase(client, "chatter", n)
        streamed = await phase(client, "chatter", n, streaming=True)
    finally:
        await client.aclose()

    def per(a: dict, b: dict, units: float) -> dict:
        return {"commands": (a["commands"] - b["commands"]) / units,
                "redis_cpu_us": (a["redis_cpu_s"] - b["redis_cpu_s"]) * 1e6 / units}

    per_invocation = {"commands": weather["commands"] / n, "redis_cpu_us": weather["redis_cpu_s"] * 1e6 / n,
                      "by_command": {k: round(v / n, 2) for k, v in weather["by_command"].items() if v}}
    extra_events = n * (2 * STEPS - 4)
    return {"tree": str(_tree()), "n": n, "per_invocation": per_invocation,
            "per_committed_event": per(steps, weather, extra_events),
            "per_partial_chunk": per(streamed, plain, n * CHATTER_WORDS)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1000, help="invocations per phase")
    parser.add_argument("--tree", default=None, help="measure another checkout's code (its .venv) instead")
    args = parser.parse_args(argv)
    if args.tree and Path(args.tree).resolve() != _tree().resolve():
        tree = Path(args.tree).resolve()
        env = {**os.environ, "BENCH_REDISCOST_TREE": str(tree), "PYTHONPATH": f"{tree}{os.pathsep}{HERE}"}
        return subprocess.run([str(tree / ".venv" / "bin" / "python"), __file__, "--n", str(args.n)],
                              cwd=tree, env=env).returncode
    sys.path[:0] = [str(_tree()), str(HERE)]
    from runtime.redis_store.launcher import EmbeddedRedis

    with tempfile.TemporaryDirectory() as tmp, EmbeddedRedis(tmp) as server, worker(server.url):
        results = asyncio.run(measure(server.url, args.n))
    print(json.dumps(results, indent=2))
    inv, event, chunk = results["per_invocation"], results["per_committed_event"], results["per_partial_chunk"]
    print(f"per invocation: {inv['commands']:.1f} commands, {inv['redis_cpu_us']:.0f} us Redis CPU "
          "(targets: <= 45, <= 200 us)")
    print(f"per committed event: {event['commands']:.1f} commands, {event['redis_cpu_us']:.0f} us Redis CPU")
    print(f"per partial chunk: {chunk['commands']:.1f} commands, {chunk['redis_cpu_us']:.0f} us Redis CPU")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
