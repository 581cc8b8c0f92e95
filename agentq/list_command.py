"""``agentq list [--status S] [--app NAME] [--user ID] [--limit N]``: invocations across apps and users, a table
(``--json``: one JSON line each), as ``GET /invocations`` lists them (``worker.records.listing_across``)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from . import render
from .commands import add_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``agentq list`` flags."""
    parser.add_argument("--status", choices=["queued", "running", "parked", "completed", "failed", "cancelled"],
                        help="only invocations of this status (e.g. failed)")
    parser.add_argument("--app", action="append", dest="app_names", metavar="NAME",
                        help="only this app (repeatable; default: every app a worker announced)")
    parser.add_argument("--user", help="only this user")
    parser.add_argument("--limit", type=int, default=100, help="print at most this many (default 100)")
    add_json(parser)


async def _run(redis_url: str, args: argparse.Namespace) -> int:
    from runtime.errors import UsageError
    from worker.client import AgentqClient
    from worker.records.listing_across import invocations_across

    if args.limit < 1:
        raise UsageError(f"--limit must be at least 1, not {args.limit}")
    async with AgentqClient(redis_url, reads_only=True) as client:
        apps = args.app_names or await client.ops.announced_apps()
        if not apps:
            print(f"agentq list: no worker has announced an app on the Redis at "
                  f"{getattr(args, 'redis_where', redis_url)} yet; name one with "
                  "--app NAME", file=sys.stderr)
        pairs = await client.inbox.user_pairs(apps, [args.user] if args.user else None)
        records, token = [], None
        while len(records) < args.limit:
            page = await invocations_across(client, pairs, status=args.status,
                                            page_size=min(1000, args.limit - len(records)), page_token=token)
            records += page.items
            token = page.next_page_token
            if token is None:
                break
    if args.json:
        for record in records:
            sys.stdout.write(json.dumps(record.to_json_dict()) + "\n")
    elif records:
        render.invocations_table(records)
    else:
        render.out(f"no {args.status + ' ' if args.status else ''}invocation")
    return 0


def run(args: argparse.Namespace, redis_url: str) -> int:
    """Print the listing; the exit code."""
    return asyncio.run(_run(redis_url, args))
