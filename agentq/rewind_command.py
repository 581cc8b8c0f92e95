"""``agentq rewind APP USER SESSION INVOCATION_ID``: put a session back as it was before an invocation.

The same rewind as ``POST .../sessions/{sid}/rewind`` (worker.records.rewind): history, session state and session
artifacts as they were; refused while an invocation is queued, running or parked on the session.
"""

from __future__ import annotations

import argparse
import json
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The command's arguments."""
    parser.add_argument("app_name")
    parser.add_argument("user_id")
    parser.add_argument("session_id")
    parser.add_argument("invocation_id", help="the invocation to rewind to before (it and all after it are undone)")


def run(args: argparse.Namespace, redis_url: str) -> int:
    """Rewind and print the session's id, its state after the rewind and the rewind event's id, as one JSON line.
    The rewind goes through its door (``api.doors.rewind``) as principal ``cli:<os user>``."""
    import asyncio

    from api import doors
    from worker.client import AgentqClient

    async def rewound():
        async with AgentqClient(redis_url) as client:
            return await doors.rewind(doors.cli_caller(), doors.Guards.from_env(), client, args.app_name,
                                      args.user_id, args.session_id, args.invocation_id)

    session = asyncio.run(rewound())
    sys.stdout.write(json.dumps({"sessionId": session.id, "rewoundBefore": args.invocation_id,
                                 "rewindEventId": session.events[-1].id, "state": session.state}) + "\n")
    return 0
