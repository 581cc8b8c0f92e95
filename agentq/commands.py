"""Terminal commands on invocations: enqueue, follow, respond, approve, reject, cancel, get."""

from __future__ import annotations

import argparse
import json
import sys

from . import render
from .cli_errors import json_argument

ANSWER_EXAMPLE = """'{"status": "approved"}'"""
"""An answer the example reimbursement app (and the README's myapp.py) resumes on and pays."""

JSON_HELP = "print the wire form, one JSON line each (for machines); default: a readable view"


def add_json(parser: argparse.ArgumentParser) -> None:
    """``--json``: today's JSON lines instead of the readable view (as gh and kubectl do)."""
    parser.add_argument("--json", action="store_true", help=JSON_HELP)


def add_enqueue(parser: argparse.ArgumentParser) -> None:
    """``agentq enqueue APP USER MESSAGE``."""
    add_json(parser)
    parser.add_argument("app_name")
    parser.add_argument("user_id")
    parser.add_argument("message", help="the user's message (text; in single quotes, so the shell leaves $ alone)")
    parser.add_argument("--session", help="session id (default: a new session)")
    parser.add_argument("--state-delta", type=json_argument("""'{"tier": "gold"}'"""), default=None,
                        help="JSON object")
    parser.add_argument("--follow", action="store_true", help="print events until the invocation settles")
    parser.add_argument("--strategy", default="enqueue", metavar="{enqueue,reject,interrupt,rollback}",
                        help="with invocations in flight on --session: queue behind them (enqueue), refuse (reject), "
                             "cancel them (interrupt), or cancel them and rewind the session (rollback)")


def add_follow(parser: argparse.ArgumentParser) -> None:
    """``agentq follow INVOCATION_ID``."""
    add_json(parser)
    parser.add_argument("invocation_id")
    parser.add_argument("--after", help="a stream entry id: print only later entries")


def add_respond(parser: argparse.ArgumentParser) -> None:
    """``agentq respond INVOCATION_ID CALL_ID RESPONSE_JSON``."""
    add_json(parser)
    parser.add_argument("invocation_id")
    parser.add_argument("call_id")
    parser.add_argument("response", type=json_argument(ANSWER_EXAMPLE),
                        help=f"JSON object, in single quotes; the example apps approve with {ANSWER_EXAMPLE}")
    parser.epilog = f"example: agentq respond e-... <call id> {ANSWER_EXAMPLE} --follow (`agentq inbox` lists the calls)"
    parser.add_argument("--name", help="the function name (checked against the pending call)")
    parser.add_argument("--will-continue", action="store_true", help="an intermediate update; the call stays pending")
    parser.add_argument("--follow", action="store_true", help="print events until the invocation settles again")


def add_confirm(parser: argparse.ArgumentParser) -> None:
    """``agentq approve|reject INVOCATION_ID [CALL_ID]``: answer a tool confirmation."""
    add_json(parser)
    parser.add_argument("invocation_id")
    parser.add_argument("call_id", nargs="?", help="the adk_request_confirmation call's id (default: the only one)")
    parser.add_argument("--payload", type=json_argument("""'{"note": "ok"}'"""), default=None,
                        help="JSON value sent back to the tool")
    parser.add_argument("--follow", action="store_true", help="print events until the invocation settles again")


def add_cancel(parser: argparse.ArgumentParser) -> None:
    """``agentq cancel INVOCATION_ID``."""
    add_json(parser)
    parser.add_argument("invocation_id")
    parser.add_argument("--reason", default="cancelled from the command line")


def add_get(parser: argparse.ArgumentParser) -> None:
    """``agentq get INVOCATION_ID``."""
    add_json(parser)
    parser.add_argument("invocation_id")


def run(command: str, args: argparse.Namespace, redis_url: str) -> int:
    """Run one command against ``redis_url``; prints JSON lines. What changes state goes through the doors
    (``api.doors``) as principal ``cli:<os user>`` with every role, under the approval rules and rate limits
    the API reads from the same environment."""
    import asyncio

    if command == "enqueue":
        from worker.records.double_texting import check_strategy

        check_strategy(args.strategy)  # before a session is made for it
        _warn_without_worker(redis_url, args.app_name, getattr(args, "redis_where", redis_url))
    asyncio.run(_run(command, args, redis_url))
    return 0


async def _run(command: str, args: argparse.Namespace, redis_url: str) -> None:
    from api import doors
    from worker.client import AgentqClient

    caller, guards = doors.cli_caller(), doors.Guards.from_env()
    async with AgentqClient(redis_url) as client:
        try:
            if command == "enqueue":
                session_id = args.session or (await client.create_session(args.app_name, args.user_id)).id
                invocation_id = await doors.enqueue(
                    caller, guards, client, app_name=args.app_name, user_id=args.user_id, session_id=session_id,
                    new_message=args.message, state_delta=args.state_delta, strategy=args.strategy)
                if args.json:
                    _print({"invocationId": invocation_id, "sessionId": session_id})
                else:
                    render.out(f"enqueued {invocation_id} (session {session_id}); agentq follow {invocation_id}")
                if args.follow:
                    await _follow(client, invocation_id, as_json=args.json)
            elif command == "follow":
                await _follow(client, args.invocation_id, args.after, as_json=args.json)
            elif command in ("respond", "approve", "reject"):
                position = await client.stream_position(args.invocation_id)
                if command == "respond":
                    response = {"id": args.call_id, "name": args.name, "response": args.response,
                                "will_continue": args.will_continue or None}
                    outcome = await doors.answer(caller, guards, client, args.invocation_id,
                                                 [{k: v for k, v in response.items() if v is not None}])
                else:
                    outcome = await doors.confirm(caller, guards, client, args.invocation_id, args.call_id,
                                                  command == "approve", args.payload)
                if args.json:
                    _print({"invocationId": outcome.record.id, "status": outcome.record.status})
                else:
                    render.out(f"{outcome.record.id} accepted the answer; it is {outcome.record.status}")
                if args.follow:
                    await _follow(client, outcome.record.id, position, as_json=args.json)
            elif command == "cancel":
                record = await doors.cancel(caller, guards, client, args.invocation_id, args.reason)
                if args.json:
                    _print(record.to_json_dict())
                else:
                    render.out(f"{record.id} is {record.status}")
            elif command == "get":
                record = await client.get(args.invocation_id)
                if args.json:
                    _print(record.to_json_dict())
                else:
                    render.record_view(record)
        finally:
            await guards.rate_limits.aclose()


def _warn_without_worker(redis_url: str, app_name: str, where: str) -> None:
    """Say so when no live worker serves ``app_name`` on this Redis, naming the Redis (``where``): the invocation
    would wait, queued, with no other sign, and a worker on another Redis is the usual reason."""
    import asyncio

    from worker.client import AgentqClient

    async def serving() -> list[str]:
        async with AgentqClient(redis_url, reads_only=True) as client:  # any store URL, Cluster too
            return sorted({app for worker in await client.ops.alive_workers() for app in worker.apps})

    apps = asyncio.run(serving())
    if app_name not in apps:
        print(f"agentq enqueue: no worker alive serves app {app_name!r} on the Redis at {where} (served there: "
              f"{', '.join(apps) or 'none'}); the invocation waits, queued, until one does: agentq worker --app "
              "module:attr (with the same AGENTQ_REDIS_URL or AGENTQ_DATA_DIR)", file=sys.stderr)


async def _follow(client, invocation_id: str, after: str | None = None, *, as_json: bool = False) -> None:
    """Print ``invocation_id``'s entries until it settles: JSON lines, or one readable line each and, when it
    parks, what it waits for with the command that answers each call."""
    async for entry in client.events(invocation_id, after):
        if as_json:
            _print({"id": entry.id, "kind": entry.kind, "data": entry.data})
            continue
        render.out(render.event_line(entry.id, entry.kind, entry.data))
        if entry.kind == "status" and entry.data.get("status") == "parked":
            render.waits(await client.get(invocation_id))


def _print(value: dict) -> None:
    sys.stdout.write(json.dumps(value) + "\n")
    sys.stdout.flush()
