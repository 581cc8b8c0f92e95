"""``agentq status``: is anything running, and how is it doing: Redis, workers alive, queue depth, counts.

The figures of ``GET /ops/summary`` (workers by heartbeat, ``worker.fleet.workers_alive``; the run queue's length;
invocations by status, exact: ``worker.records.status_counts``), for the whole deployment, read through the worker's client
(``AgentqClient.ops``, ``worker/records/reads.py``). ``sampled`` in the JSON form is always false (kept for scripts that
read it: counts were once sampled).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from typing import Any


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``agentq status [--json]``."""
    parser.add_argument("--json", action="store_true", help="one JSON object instead of text")


async def summary(redis_url: str) -> dict[str, Any]:
    """Workers alive, the run queue's depth and invocations by status, read through the client's ``ops``."""
    from worker.client import AgentqClient

    # Any store URL, Cluster too; reads only, so a Cluster store needs no AGENTQ_BROKER_URL here.
    async with AgentqClient(redis_url, reads_only=True) as client:
        workers = await client.ops.alive_workers()
        counts = await client.ops.status_counts()
        depths = await client.ops.queue_depths()
    now = time.time()
    return {
        "redis": redis_url,
        "workersAlive": len(workers),
        "workers": [{"name": w.name, "apps": w.apps, "lastBeatAgo": round(now - w.last_beat, 1)} for w in workers],
        "queueDepth": sum(depths.values()),
        "queueDepths": depths,
        "counts": counts,
        "sampled": False,
    }


def text(figures: dict[str, Any], embedded: dict[int, str] | None) -> str:
    """The human form: one line per subject."""
    redis_line = figures["redis"]
    if embedded is not None:
        users = ", ".join(f"agentq {command} (pid {pid})" for pid, command in sorted(embedded.items()))
        redis_line += f" (embedded; used by {users or 'no running agentq api or worker'}; `agentq stop` ends it)"
    if figures["workers"]:
        workers = f"{figures['workersAlive']} alive: " + "; ".join(
            f"{w['name']} [{', '.join(w['apps'])}] beat {w['lastBeatAgo']}s ago" for w in figures["workers"])
    else:
        workers = "none alive: queued invocations wait (start one: agentq worker --app module:attr)"
    counts = ", ".join(f"{status} {n}" for status, n in figures["counts"].items())
    by_queue = ", ".join(f"{queue} {n}" for queue, n in figures.get("queueDepths", {}).items() if n)
    return (f"redis        {redis_line}\nworkers      {workers}\nqueue        {figures['queueDepth']} run jobs "
            f"waiting{f' ({by_queue})' if by_queue else ''}\ninvocations  {counts}")


def run(args: argparse.Namespace, redis_url: str, embedded: dict[int, str] | None) -> int:
    """Print the status; ``embedded``: the processes registered on the embedded server (None: external Redis)."""
    figures = asyncio.run(summary(redis_url))
    if args.json:
        print(json.dumps(figures))
    else:
        print(text(figures, embedded))
    return 0
