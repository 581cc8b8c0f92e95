"""``agentq scheduler`` runs the clock that fires schedules' ticks; ``agentq schedules ...`` manages schedules.

Run one scheduler or several (for availability): each tick is enqueued once whichever of them fires it
(``worker.schedules``). The schedule commands print JSON, one schedule or run per line, through the worker's
client (``AgentqClient.schedules``) as the other commands do.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal

from . import render
from .cli_errors import json_argument
from .commands import add_json

log = logging.getLogger("agentq.scheduler")

ACTIONS = ("create", "list", "get", "update", "pause", "resume", "trigger", "delete", "runs")


def add_scheduler_arguments(parser: argparse.ArgumentParser) -> None:
    """``agentq scheduler [--name NAME]``."""
    parser.add_argument("--name", default=None, help="the name in its log lines (default scheduler-<pid>)")


def add_schedules_arguments(parser: argparse.ArgumentParser) -> None:
    """``agentq schedules ACTION APP USER [ID] ...``."""
    parser.add_argument("action", choices=ACTIONS)
    parser.add_argument("app_name")
    parser.add_argument("user_id")
    parser.add_argument("schedule_id", nargs="?", help="the schedule (every action but create and list)")
    parser.add_argument("--cron", help="cron expression: 5 fields, or 6 with seconds first")
    parser.add_argument("--every", type=float, dest="interval_s", metavar="SECONDS", help="interval (>= 1 s)")
    parser.add_argument("--timezone", help="IANA zone the cron fields are read in (default UTC)")
    parser.add_argument("--jitter", type=float, dest="jitter_s", metavar="SECONDS", help="random delay per run")
    parser.add_argument("--start-at", type=float, metavar="UNIX_TIME", help="no tick before this")
    parser.add_argument("--end-at", type=float, metavar="UNIX_TIME", help="no tick after this")
    parser.add_argument("--missed", choices=("latest", "all", "skip"), help="overdue ticks: the newest, all, none")
    parser.add_argument("--message", help="the user message of each run")
    parser.add_argument("--session", dest="session_id", help="run in this session (default: a new one per run)")
    parser.add_argument("--state-delta", type=json_argument("""'{"tier": "gold"}'"""), default=None,
                        help="JSON object")
    parser.add_argument("--id", dest="new_id", help="create: the schedule's id (default sch-<uuid>)")
    parser.add_argument("--limit", type=int, default=20, help="runs: how many (default 20)")
    add_json(parser)


_SPEC_FLAGS = {"cron": "cron", "interval_s": "intervalS", "timezone": "timezone", "jitter_s": "jitterS",
               "start_at": "startAt", "end_at": "endAt", "missed": "missed", "message": "newMessage",
               "session_id": "sessionId", "state_delta": "stateDelta"}


def run_scheduler(args: argparse.Namespace, redis_url: str) -> int:
    """Fire due ticks until SIGTERM or Ctrl-C."""
    from worker.records.store import InvocationStore
    from worker.schedules import Scheduler

    name = args.name or f"scheduler-{os.getpid()}"

    async def main() -> None:
        store = InvocationStore(redis_url, retention=args.retention)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        log.info("scheduler %s: store %s", name, redis_url)
        try:
            await Scheduler(store, name=name).run(stop)
        finally:
            await store.aclose()

    asyncio.run(main())
    return 0


def run_schedules(args: argparse.Namespace, redis_url: str) -> int:
    """One ``agentq schedules`` action; JSON lines on stdout."""
    from runtime.errors import UsageError
    from worker.client import AgentqClient

    if args.action not in ("create", "list") and not args.schedule_id:
        raise UsageError(f"agentq schedules {args.action} needs the schedule id after APP USER")
    spec = {key: getattr(args, flag) for flag, key in _SPEC_FLAGS.items() if getattr(args, flag) is not None}
    from api import doors

    async def main() -> None:
        caller, guards = doors.cli_caller(), doors.Guards.from_env()
        async with AgentqClient(redis_url, retention=args.retention) as client:
            try:
                await _action(args, spec, client, caller, guards)
            finally:
                await guards.rate_limits.aclose()

    asyncio.run(main())
    return 0


async def _action(args: argparse.Namespace, spec: dict, client, caller, guards) -> None:
    """One action; what changes a schedule goes through its door (``api.doors``) as ``cli:<os user>``."""
    from api import doors
    from runtime.errors import UsageError

    schedules, where = client.schedules, (args.app_name, args.user_id)
    door = (caller, guards, client, *where)
    if args.action == "create":
        _print(args, await doors.create_schedule(*door, spec, schedule_id=args.new_id))
    elif args.action == "list":
        token, found = None, []
        while True:
            page = await schedules.page(*where, page_token=token)
            found += page.items
            token = page.next_page_token
            if token is None:
                break
        if args.json:
            for schedule in found:
                _print(args, schedule)
        elif found:
            render.schedules_table([schedule.to_json_dict() for schedule in found])
        else:
            render.out(f"no schedule for {args.user_id!r} in {args.app_name!r}")
    elif args.action == "update":
        if not spec:
            raise UsageError("agentq schedules update: give at least one of the schedule flags to change")
        _print(args, await doors.update_schedule(*door, args.schedule_id, spec))
    elif args.action == "trigger":
        invocation_id = await doors.trigger_schedule(*door, args.schedule_id)
        _line(args, {"invocationId": invocation_id}, f"triggered {invocation_id}; agentq follow {invocation_id}")
    elif args.action == "delete":
        await doors.delete_schedule(*door, args.schedule_id)
        _line(args, {"deleted": args.schedule_id}, f"deleted {args.schedule_id}")
    elif args.action == "runs":
        records = await schedules.runs(*where, args.schedule_id, limit=args.limit)
        if not args.json:
            render.invocations_table(records)
        for record in records if args.json else []:
            print(json.dumps({"invocationId": record.id, "sessionId": record.session_id,
                              "status": record.status, "createdAt": record.created_at}))
    elif args.action in ("pause", "resume"):
        door_of = doors.pause_schedule if args.action == "pause" else doors.resume_schedule
        _print(args, await door_of(*door, args.schedule_id))
    else:  # get
        _print(args, await schedules.get(*where, args.schedule_id))


def _print(args: argparse.Namespace, schedule) -> None:
    """A schedule: its JSON line, or its fields as a table (times local)."""
    if args.json:
        print(json.dumps(schedule.to_json_dict()))
    else:
        render.key_values(schedule.to_json_dict())


def _line(args: argparse.Namespace, value: dict, text: str) -> None:
    if args.json:
        print(json.dumps(value))
    else:
        render.out(text)
