"""``agentq migrate``: bring the store's data layout to this code's (``worker.records.migrate``), printing what it did.

Online and resumable: workers and the API of this release may run meanwhile (they count what the migration has
not reached yet themselves); run it again after an interruption and it goes on where it stopped.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``agentq migrate`` takes the global flags (--redis-url, --data-dir) and --check."""
    parser.add_argument("--check", action="store_true",
                        help="only print the store's layout version and this code's; exit 1 when they differ")


def run(args: argparse.Namespace, redis_url: str) -> int:
    """Migrate (or with --check, compare) the store at ``redis_url``; the exit code."""
    from worker.records.migrate import migrate_url

    return migrate_url(redis_url, retention_s=args.retention.settled_s, check_only=args.check,
                       owner=f"agentq migrate {socket.gethostname()}:{os.getpid()}",
                       progress=lambda line: print(line, file=sys.stderr))
