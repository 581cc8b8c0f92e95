"""``agentq migrate``: bring the store's data layout to this code's (``worker.migrate``), printing what it did.

Online and resumable: workers and the API of this release may run meanwhile (they count what the migration has
not reached yet themselves); run it again after an interruption and it goes on where it stopped.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``agentq migrate`` takes only the global flags (--redis-url, --data-dir)."""
    parser.add_argument("--check", action="store_true",
                        help="only print the store's layout version and this code's; exit 1 when they differ")


def run(args: argparse.Namespace, redis_url: str) -> int:
    """Migrate (or with --check, compare) the store at ``redis_url``; the exit code."""
    from runtime.redis_store.layout import LAYOUT_VERSION, LAYOUTS
    from runtime.redis_store.redis_url import redis_client_from_url
    from worker.migrate import migrate_store, stored_version

    client = redis_client_from_url(redis_url, asyncio=False, decode_responses=True)
    try:
        version = stored_version(client)
        if args.check:
            print(f"store layout {version}: {LAYOUTS.get(version, 'newer than this code')}")
            print(f"this code   {LAYOUT_VERSION}: {LAYOUTS[LAYOUT_VERSION]}")
            return 0 if version == LAYOUT_VERSION else 1
        report = migrate_store(client, retention_s=args.retention.settled_s,
                               owner=f"agentq migrate {socket.gethostname()}:{os.getpid()}",
                               on_batch=lambda report: print(f"  ... {report.records} record(s)", file=sys.stderr))
        if report is None:
            print(f"layout {LAYOUT_VERSION}: nothing to do")
            return 0
        for line in report.lines():
            print(line)
        return 0
    finally:
        client.close()
