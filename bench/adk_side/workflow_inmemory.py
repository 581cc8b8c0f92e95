"""google-adk InMemoryRunner on the workflows of bench/workflow_shapes.py (runs ONLY inside bench/.adk-venv).

    python workflow_inmemory.py --apps wf_chain10,wf_agent3 --n 2000 --warmup 100

One invocation = create_session (a fresh session, as in bench/WORKLOAD.md) plus run_async consumed to the end,
one at a time on one event loop. The workflows come from bench/workflow_shapes.py, the very module agentq's
worker apps are built from. Prints one JSON line: {"runtime": "google-adk", "store": "memory", "apps": {name:
{"invocations", "seconds", "per_second", "per_cpu_second", "events"}}}.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/, for workflow_shapes

import workflow_shapes  # noqa: E402
from google.adk.runners import InMemoryRunner  # noqa: E402
from google.genai import types  # noqa: E402

USER = "u"


async def one_invocation(runner: InMemoryRunner, app_name: str, index: int) -> list:
    session = await runner.session_service.create_session(app_name=app_name, user_id=USER)
    text = types.Content(role="user", parts=[types.Part(text=workflow_shapes.message(index))])
    return [e async for e in runner.run_async(user_id=USER, session_id=session.id, new_message=text)]


async def rate(app, n: int, warmup: int) -> dict:
    runner = InMemoryRunner(app=app)
    try:
        for index in range(warmup):
            await one_invocation(runner, app.name, index)
        started, cpu = time.perf_counter(), time.process_time()
        for index in range(n):
            events = await one_invocation(runner, app.name, index)
            # one output event per node (the LlmAgent node's is its model answer)
            assert len(events) == workflow_shapes.APP_NODES[app.name], events
        seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu
    finally:
        await runner.close()
    return {"invocations": n, "seconds": round(seconds, 4), "per_second": round(n / seconds, 1),
            "per_cpu_second": round(n / cpu_seconds, 1), "events": len(events)}


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--apps", default="wf_chain10,wf_agent3")
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=100)
    args = parser.parse_args()
    apps = workflow_shapes.build_apps("google.adk")
    results = {name: await rate(apps[name], args.n, args.warmup) for name in args.apps.split(",")}
    print(json.dumps({"runtime": "google-adk", "store": "memory", "apps": results}))


if __name__ == "__main__":
    asyncio.run(main())
