"""google-adk InMemoryRunner, tool round trip, K invocations in flight at once (bench/http_vs_adk.py's anchor).

Runs only with bench/.adk-venv's python (bench.adk_env.run_adk_bench). The same agent and the same invocation
as inmemory_tool_roundtrip.py (a fresh session each, created inside the timed work), but ``--concurrency``
asyncio tasks each run invocations back to back until ``--n`` have finished, so the rate is comparable with a
client that keeps K requests in flight over HTTP.
Prints one JSON line: {"runtime": "google-adk", "store": "memory", "concurrency": K, "per_second": ...}.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import time

from _workload import APP, make_agent, one_invocation
from google.adk.runners import InMemoryRunner


async def _drive(runner, n: int, concurrency: int, counter) -> None:
    async def client() -> None:
        while (i := next(counter)) < n:
            events = await one_invocation(runner, i)
            assert len(events) == 3 and events[-1].is_final_response(), events

    await asyncio.gather(*(client() for _ in range(concurrency)))


async def main_async() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    runner = InMemoryRunner(agent=make_agent(), app_name=APP)
    try:
        await _drive(runner, args.warmup, args.concurrency, itertools.count())
        t0, cpu0 = time.perf_counter(), time.process_time()
        await _drive(runner, args.n, args.concurrency, itertools.count())
        seconds = time.perf_counter() - t0
        cpu_seconds = time.process_time() - cpu0
    finally:
        await runner.close()
    print(json.dumps({
        "runtime": "google-adk", "store": "memory", "concurrency": args.concurrency, "invocations": args.n,
        "seconds": round(seconds, 4), "per_second": round(args.n / seconds, 1),
        "cpu_ms_per_invocation": round(cpu_seconds * 1000 / args.n, 3),
    }))


if __name__ == "__main__":
    asyncio.run(main_async())
