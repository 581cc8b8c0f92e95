"""Store benchmark: RedisSessionService appends, round trips per event, get_session vs history size, and the
tool-round-trip workload (bench/WORKLOAD.md) through the Runner on Redis.

Run: ``python -m bench.store_bench`` (starts its own redis-server with AOF, as the CLI's embedded default does).
``run()`` returns the figures as a dict; the table goes to stdout.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time

import redis.asyncio as aioredis

from runtime.events import Event, EventActions
from runtime.redis_store.launcher import EmbeddedRedis
from runtime.sessions import GetSessionConfig, RedisSessionService

APP, USER = "bench", "u"


def _ms(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 3)


def _event(i: int) -> Event:
    return Event(author="agent", invocation_id="e-bench", actions=EventActions(state_delta={"n": i, "user:last": i}))


async def bench_appends(service: RedisSessionService, n: int) -> dict:
    """Sequential appends to one session: latency per committed event."""
    session = await service.create_session(app_name=APP, user_id=USER)
    samples = []
    start = time.perf_counter()
    for i in range(n):
        event = _event(i)
        t0 = time.perf_counter()
        await service.append_event(session, event)
        samples.append(time.perf_counter() - t0)
    seconds = time.perf_counter() - start
    return {"events": n, "per_second": round(n / seconds), "p50_ms": _ms(samples, 0.5), "p99_ms": _ms(samples, 0.99)}


async def bench_concurrent_appends(service: RedisSessionService, sessions: int, per_session: int) -> dict:
    """Many sessions appending at once (what a worker with many invocations in flight does)."""
    live = [await service.create_session(app_name=APP, user_id=f"c{i}") for i in range(sessions)]

    async def writer(session):
        for i in range(per_session):
            await service.append_event(session, _event(i))

    start = time.perf_counter()
    await asyncio.gather(*(writer(session) for session in live))
    seconds = time.perf_counter() - start
    return {"sessions": sessions, "events": sessions * per_session,
            "per_second": round(sessions * per_session / seconds)}


def _count_commands(service: RedisSessionService) -> list[str]:
    """Record the name of every command the service sends from now on (on its pool and pipelined connection)."""
    sent: list[str] = []
    for client in {service._clients.get(), service._clients.mux()}:
        original = client.execute_command

        async def counting(*args, _original=original, **options):
            sent.append(args[0])
            return await _original(*args, **options)

        client.execute_command = counting
    return sent


def _stop_counting(service: RedisSessionService) -> None:
    for client in {service._clients.get(), service._clients.mux()}:
        del client.execute_command


async def bench_round_trips(service: RedisSessionService, raw, n: int) -> dict:
    """Commands the client sends per committed event, and what INFO commandstats saw."""
    session = await service.create_session(app_name=APP, user_id=USER)
    await service.append_event(session, _event(-1))
    sent = _count_commands(service)
    before = await raw.info("commandstats")
    for i in range(n):
        await service.append_event(session, _event(i))
    after = await raw.info("commandstats")
    _stop_counting(service)
    evalsha = after["cmdstat_evalsha"]["calls"] - before.get("cmdstat_evalsha", {"calls": 0})["calls"]
    return {"events": n, "client_commands_per_event": len(sent) / n, "evalsha_per_event": evalsha / n,
            "commands": sorted(set(sent))}


async def bench_get_session(service: RedisSessionService, sizes=(10, 1_000, 10_000), rounds: int = 20,
                            reads: int = 25) -> dict:
    """get_session(num_recent_events=10) with state, and get_session(after_timestamp=...), at several history
    lengths. Sizes are measured in interleaved rounds so that load from elsewhere hits them alike."""
    sessions = {}
    for size in sizes:
        session = await service.create_session(app_name=APP, user_id=f"h{size}", state={"k": "v"})
        for i in range(size):
            await service.append_event(session, _event(i))
        sessions[size] = session
    recent = {size: [] for size in sizes}
    after = {size: [] for size in sizes}
    for _ in range(rounds):
        for size, session in sessions.items():
            where = {"app_name": APP, "user_id": f"h{size}", "session_id": session.id}
            since = GetSessionConfig(after_timestamp=session.events[-10].timestamp)
            for _ in range(reads):
                t0 = time.perf_counter()
                got = await service.get_session(**where, config=GetSessionConfig(num_recent_events=10))
                recent[size].append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                await service.get_session(**where, config=since)
                after[size].append(time.perf_counter() - t0)
            assert len(got.events) == 10 and got.version == size and got.state["k"] == "v"
    out: dict = {size: {"p50_ms": _ms(recent[size], 0.5), "mean_ms": round(statistics.fmean(recent[size]) * 1000, 3),
                        "after_ts_p50_ms": _ms(after[size], 0.5)} for size in sizes}
    out["ratio_10000_vs_10"] = round(out[sizes[-1]]["p50_ms"] / out[sizes[0]]["p50_ms"], 2)
    return out


def _workload():
    """The agentq side of bench/WORKLOAD.md (mirrors bench/adk_side/_workload.py): one tool round trip."""
    from google.genai import types

    from runtime.agents import LlmAgent
    from runtime.models import BaseLlm, LlmResponse
    from runtime.runners import Runner

    def get_weather(city: str) -> dict:
        """Returns the current weather for a city."""
        return {"city": city, "forecast": "sunny", "temperature_c": 21}

    class StatelessScript(BaseLlm):
        """The reply depends only on the request: a call first, then the answer once a response is in."""

        model: str = "scripted"

        async def generate_content_async(self, llm_request, stream=False):
            last = llm_request.contents[-1]
            if any(p.function_response for p in last.parts or ()):
                part = types.Part(text="It is sunny in Paris, 21 C.")
            else:
                part = types.Part(function_call=types.FunctionCall(name="get_weather", args={"city": "Paris"}))
            yield LlmResponse(
                content=types.Content(role="model", parts=[part]),
                usage_metadata=types.GenerateContentResponseUsageMetadata(
                    prompt_token_count=10, candidates_token_count=5, total_token_count=15),
            )

    def make_runner(service):
        agent = LlmAgent(name="weather_agent", model=StatelessScript(),
                         instruction="Answer weather questions with the get_weather tool.", tools=[get_weather])
        return Runner(app_name=APP, agent=agent, session_service=service)

    async def one_invocation(runner, i: int) -> list:
        # A fresh session per invocation, as on the ADK side.
        session = await runner.session_service.create_session(app_name=APP, user_id=USER)
        message = types.Content(role="user", parts=[types.Part(text=f"Weather in Paris? #{i}")])
        events = [e async for e in runner.run_async(user_id=USER, session_id=session.id, new_message=message)]
        said = [event for event in events if event.content]  # a closing actions-only event may follow
        assert len(said) == 3 and said[-1].is_final_response(), events
        return events

    return make_runner, one_invocation


async def bench_runner(url: str, n: int = 2000, warmup: int = 100) -> dict:
    """The tool-round-trip workload on RedisSessionService, sequential invocations (skipped without a Runner)."""
    try:
        make_runner, one_invocation = _workload()
    except ImportError as exc:
        return {"skipped": str(exc)}
    service = RedisSessionService(url)
    runner = make_runner(service)
    try:
        for i in range(warmup):
            await one_invocation(runner, i)
        start, cpu_start = time.perf_counter(), time.process_time()
        for i in range(n):
            await one_invocation(runner, i)
        seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu_start
        sent = _count_commands(service)
        for i in range(20):
            await one_invocation(runner, i)
        _stop_counting(service)
    finally:
        await service.aclose()
    return {"invocations": n, "seconds": round(seconds, 3), "per_second": round(n / seconds, 1),
            "per_cpu_second": round(n / cpu_seconds, 1), "round_trips_per_invocation": len(sent) / 20}


def adk_sqlite(n: int = 2000) -> dict:
    """google-adk's Runner on its SQLite store, same workload, in bench/.adk-venv (bench/adk_env.py)."""
    from bench.adk_env import run_adk_bench

    return run_adk_bench("sqlite_tool_roundtrip.py", "--n", n)


async def _run(url: str, unix_url: str | None) -> dict:
    service = RedisSessionService(url)
    raw = aioredis.Redis.from_url(url, decode_responses=True)
    try:
        results = {
            "append": await bench_appends(service, 5_000),
            "append_concurrent": await bench_concurrent_appends(service, 100, 50),
            "round_trips": await bench_round_trips(service, raw, 1_000),
            "get_session": await bench_get_session(service),
        }
    finally:
        await raw.aclose()
        await service.aclose()
    results["runner"] = await bench_runner(url)
    if unix_url is not None:
        results["runner_unix_socket"] = await bench_runner(unix_url)
    return results


def _print(results: dict) -> None:
    a, c, r, g = results["append"], results["append_concurrent"], results["round_trips"], results["get_session"]
    print("store bench (RedisSessionService, embedded redis-server, AOF everysec)")
    print(f"  append, 1 session      {a['per_second']:>8} events/s   p50 {a['p50_ms']} ms   p99 {a['p99_ms']} ms")
    print(f"  append, {c['sessions']} sessions   {c['per_second']:>8} events/s")
    print(f"  round trips per event  {r['client_commands_per_event']:.2f} sent ({', '.join(r['commands'])}), "
          f"{r['evalsha_per_event']:.2f} EVALSHA seen by the server")
    for size in (10, 1_000, 10_000):
        row = g[size]
        print(f"  get_session @ {size:>6} events   p50 {row['p50_ms']} ms (last 10 + state)   "
              f"after_timestamp p50 {row['after_ts_p50_ms']} ms")
    print(f"  get_session 10,000 vs 10: {g['ratio_10000_vs_10']}x (target <= 1.5x)")
    for name, label in (("runner", "tcp"), ("runner_unix_socket", "unix socket")):
        runner = results.get(name)
        if runner and "per_second" in runner:
            print(f"  Runner tool round trip on Redis ({label}): {runner['per_second']} invocations/s, "
                  f"{runner['per_cpu_second']} per CPU second, {runner['round_trips_per_invocation']} round trips "
                  "each (target > 400/s)")
        elif runner:
            print(f"  Runner tool round trip: skipped ({runner['skipped']})")
    if "adk_sqlite" in results:
        ratio = results["runner_vs_adk_sqlite"]
        print(f"  google-adk Runner on SQLite: {results['adk_sqlite']['per_second']} invocations/s -> agentq on Redis "
              f"is {ratio['wall']}x (wall), {ratio['cpu']}x (per CPU second); target >= 5x")


def run(redis_url: str | None = None, *, adk: bool = False) -> dict:
    """Run every store benchmark (on ``redis_url``, or fresh embedded redis-servers) and print a table.

    The embedded servers run with AOF on (everysec), like the CLI's embedded default; the Runner workload
    runs over TCP and over a unix socket (what a co-located Redis gives you). With ``adk``, google-adk's
    Runner on SQLite runs right after it for the side-by-side ratio (target >= 5x).
    """
    if redis_url is not None:
        results = asyncio.run(_run(redis_url, None))
    else:
        with tempfile.TemporaryDirectory(prefix="agentq-store-bench-") as data_dir:
            with EmbeddedRedis(f"{data_dir}/tcp") as tcp, EmbeddedRedis(f"{data_dir}/unix", unix_socket=True) as unix:
                results = asyncio.run(_run(tcp.url, unix.url))
    if adk and "per_second" in results["runner"]:
        results["adk_sqlite"] = adk_sqlite()
        results["runner_vs_adk_sqlite"] = {
            "wall": round(results["runner"]["per_second"] / results["adk_sqlite"]["per_second"], 2),
            "cpu": round(results["runner"]["per_cpu_second"] / results["adk_sqlite"]["per_cpu_second"], 2),
        }
    _print(results)
    return results


if __name__ == "__main__":
    print(json.dumps(run(adk="--adk" in sys.argv)))  # for bench.side_by_side
