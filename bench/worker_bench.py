"""Durable end-to-end benchmark: agentq workers beside a no-op Celery task on the same broker (and google-adk).

    .venv/bin/python -m bench.worker_bench            # full run, prints a table and writes bench/results/worker.json
    .venv/bin/python -m bench.worker_bench --quick    # smaller counts

Measures, on one machine, side by side in one run:
- durable throughput: enqueue -> worker -> Redis -> completed status observed, for the tool round trip of
  bench/WORKLOAD.md (fresh session per invocation), vs a no-op Celery task (same broker, same Celery settings,
  same pool), vs google-adk's in-memory in-process rate when bench/adk_env.py is available;
- latency: enqueue -> first event, and function response -> resumed event (p50, p99) on an idle worker;
- in-flight capacity: one worker process, a model that thinks 500 ms per call, N invocations kept in flight
  (closed loop, the N slots starting spread over one invocation's length): completions per second in the
  steady state vs the ideal N / (calls x 500 ms);
- failover: a worker SIGKILLed mid-invocation; time until another worker resumes it, and whether any event or
  side effect was lost or doubled;
- with ``--tracing both`` (or ``AGENTQ_BENCH_TRACING=both python -m bench worker``): the e2e run again on fresh
  workers with OpenTelemetry off and on (exporting to a local OTLP/HTTP receiver), interleaved, side by side.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APPS = ["bench.worker_apps:weather", "bench.worker_apps:approval", "bench.worker_apps:capacity",
        "bench.worker_apps:burst"]


def _env(url: str, **extra: str) -> dict[str, str]:
    secret = os.environ.get("AGENTQ_WEBHOOK_SECRET") or "whsec_YmVuY2gtd2ViaG9vay1zZWNyZXQ="  # workers need one
    return {**os.environ, "AGENTQ_REDIS_URL": url, "PYTHONPATH": str(ROOT), "AGENTQ_WEBHOOK_SECRET": secret,
            **extra}


@contextmanager
def agentq_workers(url: str, names: list[str], *, threads: int = 4, pool: str = "solo", handoff: str = "loop",
                   apps: list[str] = APPS, **env: str):
    """Start ``agentq worker`` processes serving ``apps`` and wait until they are ready."""
    import redis

    from runtime.redis_store import keys

    processes = {}
    for name in names:
        args = [sys.executable, "-m", "agentq.cli", "--log-level", "WARNING", "worker", "--name", name,
                "--threads", str(threads), "--pool", pool, "--handoff", handoff, "--concurrency", "5000"]
        for app in apps:
            args += ["--app", app]
        log = open(Path(tempfile.gettempdir()) / f"agentq-bench-{name}.log", "wb")  # noqa: SIM115
        processes[name] = subprocess.Popen(args, cwd=ROOT, env=_env(url, **env), stdout=log, stderr=log)
    try:
        with redis.Redis.from_url(url) as client:
            deadline = time.monotonic() + 60
            while not all(client.hexists(keys.workers(), name) for name in names):
                assert time.monotonic() < deadline, "workers did not start"
                time.sleep(0.05)
        yield processes
    finally:
        for process in processes.values():
            if process.poll() is None:
                process.terminate()
        for process in processes.values():
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
        with redis.Redis.from_url(url) as client:
            client.delete(keys.workers())


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def noop_rate(url: str, n: int, threads: int, redis_pid: int) -> dict:
    """Messages per second a Celery worker drains for a task that does nothing but count itself."""
    import redis

    from worker.queues.celery_app import make_celery

    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "bench.worker_noop", "worker", "-P", "threads", "-c", str(threads),
         "-Q", "agentq", "--without-gossip", "--without-mingle", "-l", "WARNING"],
        cwd=ROOT, env=_env(url), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    app = make_celery(url)
    try:
        with redis.Redis.from_url(url) as client:
            client.set("bench:noop_done", 0)
            for _ in range(50):  # warm up, and wait until the worker consumes
                app.send_task("bench.noop", queue="agentq")
            while int(client.get("bench:noop_done") or 0) < 50:
                time.sleep(0.01)
            client.set("bench:noop_done", 0)
            cpu = (cpu_seconds(worker.pid), cpu_seconds(redis_pid), time.process_time())
            start = time.perf_counter()
            for _ in range(n):
                app.send_task("bench.noop", queue="agentq")
            while int(client.get("bench:noop_done") or 0) < n:
                time.sleep(0.002)
            rate = n / (time.perf_counter() - start)
            used = (cpu_seconds(worker.pid), cpu_seconds(redis_pid), time.process_time())
            return {"rate": rate, **_cpu_per_invocation(cpu, used, n)}
    finally:
        worker.terminate()
        try:
            worker.wait(timeout=20)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()


def _cpu_per_invocation(before: tuple, after: tuple, n: int) -> dict:
    worker, redis, client = ((b - a) * 1000 / n for a, b in zip(before, after, strict=True))
    return {"cpu_ms_per_invocation": {"worker": worker, "redis": redis, "client": client}}


async def e2e_rate(url: str, n: int, window: int, worker_pid: int, redis_pid: int) -> dict:
    """Invocations per second, enqueue -> completed observed, ``window`` in flight; checks every history."""
    from worker.client import AgentqClient

    client = AgentqClient(url)
    user = f"tp-{time.time_ns()}"
    sessions = [(await client.create_session("weather", user)).id for _ in range(n)]
    gate = asyncio.Semaphore(window)
    statuses: list[str] = []

    async def one(index: int, session_id: str) -> str:
        async with gate:
            invocation_id = await client.enqueue("weather", user, session_id, f"Weather in Paris? #{index}")
            statuses.append((await client.wait(invocation_id, timeout=120)).status)
            return invocation_id

    await asyncio.gather(*[one(i, s) for i, s in enumerate(sessions[:50])])  # warm up
    cpu = (cpu_seconds(worker_pid), cpu_seconds(redis_pid), time.process_time())
    start = time.perf_counter()
    ids = await asyncio.gather(*[one(i, s) for i, s in enumerate(sessions[50:])])
    elapsed = time.perf_counter() - start
    used = (cpu_seconds(worker_pid), cpu_seconds(redis_pid), time.process_time())
    bad = await _check_histories(client, "weather", user, sessions, expected_events=4)
    await client.aclose()
    return {"rate": len(ids) / elapsed, "n": len(ids), "not_completed": sum(s != "completed" for s in statuses),
            "bad_histories": bad, **_cpu_per_invocation(cpu, used, len(ids))}


async def _check_histories(client, app: str, user: str, sessions: list[str], expected_events: int) -> int:
    """Sessions whose committed history or stream is not exactly one copy of each expected event."""
    from runtime.redis_store import streams

    bad = 0
    for session_id in sessions:
        session = await client.session_service.get_session(app_name=app, user_id=user, session_id=session_id)
        entries = await streams.read_stream(client._store.redis, app, user, session_id, count=1000)
        committed = [e.data["id"] for e in entries if e.kind == "event" and not e.data.get("partial")]
        said = [e for e in session.events if e.content is not None]  # not the end_of_agent bookkeeping
        if len(said) != expected_events or committed != [e.id for e in session.events]:
            bad += 1
    return bad


def _percentiles(samples: list[float]) -> dict:
    samples = sorted(samples)
    return {"p50_ms": statistics.median(samples) * 1000,
            "p99_ms": samples[min(len(samples) - 1, int(len(samples) * 0.99))] * 1000, "n": len(samples)}


async def _first_event(client, app, user, session_id, after, invocation_id) -> None:
    from runtime.redis_store import streams

    cursor = after
    while True:
        entries, cursor = await streams.read_page(client._store.redis, app, user, session_id, cursor,
                                                  invocation_id=invocation_id, block_ms=10_000)
        if not entries:
            raise TimeoutError("no event within 10 s")
        if any(e.kind == "event" for e in entries):
            return


async def latencies(url: str, samples: int) -> dict:
    """enqueue -> first event and respond -> resumed event, one at a time on an idle worker."""
    from worker.client import AgentqClient

    client = AgentqClient(url)
    user = f"lat-{time.time_ns()}"
    first, resumed = [], []
    for index in range(samples + 20):
        session = await client.create_session("weather", user)
        start = time.perf_counter()
        invocation_id = await client.enqueue("weather", user, session.id, f"Weather? #{index}")
        await _first_event(client, "weather", user, session.id, "0-0", invocation_id)
        if index >= 20:
            first.append(time.perf_counter() - start)
        await client.wait(invocation_id, timeout=30)
    for index in range(samples + 20):
        session = await client.create_session("approval", user)
        invocation_id = await client.enqueue("approval", user, session.id, "approve 5")
        record = await client.wait(invocation_id, timeout=30)
        position = await client.stream_position(invocation_id)
        start = time.perf_counter()
        await client.respond(invocation_id, [{"id": record.pending_calls[0].id, "response": {"ok": True}}])
        await _first_event(client, "approval", user, session.id, position, invocation_id)
        if index >= 20:
            resumed.append(time.perf_counter() - start)
        await client.wait(invocation_id, timeout=30)
    await client.aclose()
    return {"enqueue_to_first_event": _percentiles(first), "respond_to_resumed_event": _percentiles(resumed)}


async def capacity(url: str, in_flight: int, window: float) -> dict:
    """Closed loop: ``in_flight`` invocations of the 500 ms model kept running; completions/s vs ideal."""
    from runtime.redis_store import keys
    from worker.client import AgentqClient

    from .worker_apps import CAPACITY_LATENCY, CAPACITY_STEPS

    client = AgentqClient(url)
    user = f"cap-{time.time_ns()}"
    per_invocation = CAPACITY_STEPS * CAPACITY_LATENCY
    # The slots start spread over one invocation's length (a ramp-up, as load generators do), not all in the
    # same millisecond: a herd of simultaneous starts keeps arriving in waves for many cycles, and the rate
    # then measures the herd. Measuring starts after the ramp plus one more invocation's length.
    began = time.monotonic()
    measure_from = began + per_invocation * 2
    stop_at = measure_from + window
    done: list[float] = []
    peak = 0

    async def slot(index: int) -> None:
        await asyncio.sleep(per_invocation * index / in_flight)
        while time.monotonic() < stop_at:
            session = await client.create_session("capacity", user)
            invocation_id = await client.enqueue("capacity", user, session.id, "think")
            record = await client.wait(invocation_id, timeout=120)
            assert record.status == "completed", record
            done.append(time.monotonic())

    async def sample() -> None:
        nonlocal peak
        while time.monotonic() < stop_at:
            peak = max(peak, await client._store.redis.zcard(keys.lease_expiries()))
            await asyncio.sleep(0.1)

    await asyncio.gather(sample(), *[slot(index) for index in range(in_flight)])
    measured = [t for t in done if measure_from <= t <= stop_at]
    rate = len(measured) / (stop_at - measure_from)
    ideal = in_flight / per_invocation
    await client.aclose()
    return {"in_flight": in_flight, "model_latency_s": CAPACITY_LATENCY, "model_calls": CAPACITY_STEPS,
            "rate": rate, "ideal_rate": ideal, "ratio": rate / ideal, "peak_running": peak}


async def failover(url: str, processes: dict) -> dict:
    """SIGKILL the worker running an invocation; seconds until the survivor resumes it; lost/doubled events."""
    from worker.client import AgentqClient

    from .worker_apps import CAPACITY_STEPS

    client = AgentqClient(url)
    user = f"fo-{time.time_ns()}"
    session = await client.create_session("capacity", user)
    invocation_id = await client.enqueue("capacity", user, session.id, "think")
    seen = None
    async for entry in client.events(invocation_id):
        if entry.kind == "event" and entry.data.get("author") == "thinker":
            seen = entry.id
            break
    victim = (await client.get(invocation_id)).worker
    killed = time.monotonic()
    processes[victim].send_signal(signal.SIGKILL)
    resumed_after = None
    async for entry in client.events(invocation_id, after=seen):
        if entry.kind == "status" and entry.data["status"] == "running" and resumed_after is None:
            resumed_after = time.monotonic() - killed
    record = await client.get(invocation_id)
    bad = await _check_histories(client, "capacity", user, [session.id], expected_events=2 * CAPACITY_STEPS)
    await client.aclose()
    return {"resumed_after_s": resumed_after, "status": record.status, "attempts": record.attempts,
            "bad_histories": bad}


def tracing_side_by_side(url: str, n: int, redis_pid: int, *, threads: int, pool: str, handoff: str) -> dict:
    """The e2e run on a fresh worker with OpenTelemetry off and on (exporting every span to a local OTLP/HTTP
    receiver), interleaved off, on, off, on; each side's rate and worker CPU per invocation, and the spans the
    receiver decoded (none may be dropped: the batch queue is made large enough)."""
    from tests.otlp_receiver import OtlpReceiver

    runs: dict[str, list[dict]] = {"off": [], "on": []}
    with OtlpReceiver() as receiver:
        for mode in ("off", "on", "off", "on"):
            env = {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint if mode == "on" else "",
                   "OTEL_BSP_MAX_QUEUE_SIZE": "100000", "OTEL_BSP_SCHEDULE_DELAY": "1000"}
            name = f"bench-otel-{mode}-{len(runs[mode])}"
            with agentq_workers(url, [name], threads=threads, pool=pool, handoff=handoff, **env) as workers:
                runs[mode].append(asyncio.run(e2e_rate(url, n, 256, workers[name].pid, redis_pid)))
        time.sleep(2)  # the last batch (the worker flushes at shutdown; this is the receiver's side)
        spans = receiver.received()

    def side(mode: str) -> dict:
        done = runs[mode]
        return {"rate": sum(r["rate"] for r in done) / len(done),
                "worker_cpu_ms_per_invocation": sum(r["cpu_ms_per_invocation"]["worker"] for r in done) / len(done),
                "not_completed": sum(r["not_completed"] for r in done), "bad_histories": sum(r["bad_histories"]
                                                                                           for r in done)}

    off, on = side("off"), side("on")
    return {"off": off, "on": on, "rate_ratio": on["rate"] / off["rate"],
            "worker_cpu_ratio": on["worker_cpu_ms_per_invocation"] / off["worker_cpu_ms_per_invocation"],
            "invocations_traced": 2 * n, "spans_received": len(spans),
            "run_spans_received": sum(span.name == "invocation" for span in spans)}


def adk_rate() -> float | None:
    """google-adk's in-memory rate on the same workload, when bench/adk_env.py can provide it."""
    try:
        from bench.adk_env import run_adk_bench
    except ImportError:
        return None
    try:
        result = run_adk_bench("inmemory_tool_roundtrip.py")
    except Exception as exc:  # the ADK side is optional here; say why it is missing
        print(f"google-adk side unavailable: {exc}", file=sys.stderr)
        return None
    return result.get("per_second")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--n", type=int, default=None, help="invocations for the throughput runs")
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--pool", default="solo", choices=["solo", "threads"], help="agentq workers' Celery pool")
    parser.add_argument("--handoff", default="loop", choices=["claim", "loop"])
    parser.add_argument("--in-flight", type=int, default=500)
    parser.add_argument("--skip", action="append", default=[], help="noop|e2e|latency|capacity|failover|adk")
    parser.add_argument("--tracing", default=os.environ.get("AGENTQ_BENCH_TRACING", "off"), choices=["off", "both"],
                        help="both: also run the e2e part with OpenTelemetry off and on, side by side")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "worker.json"))
    args = parser.parse_args(argv)
    n = args.n or (500 if args.quick else 3000)
    from runtime.redis_store.launcher import EmbeddedRedis

    results: dict = {"machine_cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory() as tmp, EmbeddedRedis(tmp) as server:
        url = server.url
        redis_pid = server._process.pid
        if "noop" not in args.skip:
            results["noop_celery"] = noop_rate(url, n, args.threads, redis_pid)
        with agentq_workers(url, ["bench-w1"], threads=args.threads, pool=args.pool, handoff=args.handoff) as workers:
            if "e2e" not in args.skip:
                results["e2e"] = asyncio.run(e2e_rate(url, n, 256, workers["bench-w1"].pid, redis_pid))
            if "latency" not in args.skip:
                results.update(asyncio.run(latencies(url, 50 if args.quick else 200)))
            if "capacity" not in args.skip:
                results["capacity"] = asyncio.run(capacity(url, args.in_flight, 10.0 if args.quick else 20.0))
        if args.tracing == "both":
            results["e2e_tracing"] = tracing_side_by_side(url, n, redis_pid, threads=args.threads, pool=args.pool,
                                                          handoff=args.handoff)
        if "failover" not in args.skip:
            with agentq_workers(url, ["bench-f1", "bench-f2"], threads=args.threads, pool=args.pool,
                                handoff=args.handoff) as processes:
                results["failover"] = asyncio.run(failover(url, processes))
    if "adk" not in args.skip:
        results["adk_inmemory_rate"] = adk_rate()
    _report(results)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    return 0


def _report(results: dict) -> None:
    print(json.dumps(results, indent=2))
    e2e, noop = results.get("e2e", {}).get("rate"), results.get("noop_celery", {}).get("rate")
    adk = results.get("adk_inmemory_rate")
    checks = []
    if e2e and noop:
        checks.append((f"durable e2e {e2e:.0f}/s >= 60% of the no-op Celery task ({noop:.0f}/s): {e2e / noop:.0%}",
                       e2e >= 0.6 * noop))
    if e2e and adk:
        checks.append((f"durable e2e {e2e:.0f}/s above google-adk in-memory ({adk:.0f}/s): {e2e / adk:.2f}x",
                       e2e > adk))
    for key, label in (("enqueue_to_first_event", "enqueue -> first event"),
                       ("respond_to_resumed_event", "respond -> resumed event")):
        if key in results:
            p50 = results[key]["p50_ms"]
            checks.append((f"{label} p50 {p50:.2f} ms (p99 {results[key]['p99_ms']:.2f}) <= 3 ms", p50 <= 3))
    if "capacity" in results:
        cap = results["capacity"]
        checks.append((f"{cap['in_flight']} in flight, {cap['model_latency_s']:g}s model: {cap['ratio']:.0%} of the "
                       f"ideal rate (peak {cap['peak_running']} running) >= 90%", cap["ratio"] >= 0.9))
    if "failover" in results:
        fo = results["failover"]
        checks.append((f"SIGKILL failover: resumed after {fo['resumed_after_s']:.1f}s, {fo['status']}, "
                       f"{fo['bad_histories']} bad histories", fo["status"] == "completed" and not fo["bad_histories"]))
    if "e2e_tracing" in results:
        tr = results["e2e_tracing"]
        checks.append((f"OpenTelemetry off vs on: {tr['off']['rate']:.0f}/s vs {tr['on']['rate']:.0f}/s "
                       f"({tr['rate_ratio']:.0%}), worker CPU {tr['off']['worker_cpu_ms_per_invocation']:.2f} vs "
                       f"{tr['on']['worker_cpu_ms_per_invocation']:.2f} ms/invocation ({tr['worker_cpu_ratio']:.2f}x); "
                       f"{tr['run_spans_received']} run spans for {tr['invocations_traced']} traced invocations",
                       tr["run_spans_received"] >= tr["invocations_traced"]))
    lost = results.get("e2e", {}).get("bad_histories", 0) + results.get("e2e", {}).get("not_completed", 0)
    checks.append((f"lost or doubled events/side effects in the throughput run: {lost}", lost == 0))
    print_checks(checks)


def print_checks(checks: list[tuple[str, bool]]) -> bool:
    """Print each check as a PASS or MISS line; True when every one passed."""
    for text, ok in checks:
        print(("PASS " if ok else "MISS ") + text)
    return all(ok for _, ok in checks)


if __name__ == "__main__":
    raise SystemExit(main())
