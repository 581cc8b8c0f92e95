"""``agentq inbox``: the approver's inbox in the terminal, one readable block (``--json``: one JSON line) per parked invocation, newest first.

The same list as ``GET /inbox`` and the ``/ui`` page (``worker.records.inbox``: every (app, user) parked index, merged),
read through the worker's client (``AgentqClient.inbox``, ``worker/records/reads.py``) as the other invocation commands
are. ``--follow`` keeps watching and prints each invocation that parks from then on (once per set of pending
calls) until Ctrl-C; like ``/inbox/events`` it looks for a change once every ``POLL_S`` with one script call.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from . import render
from .commands import add_json
from .render import answer_command, example_answer, message_text

__all__ = ["add_arguments", "example_answer", "item", "run"]

POLL_S = 0.5
"""How often ``--follow`` looks for a change."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``agentq inbox [--app NAME] [--user ID] [--limit N] [--follow]``."""
    parser.add_argument("--app", action="append", dest="app_names", metavar="NAME",
                        help="only this app (repeatable; default: every app a worker announced)")
    parser.add_argument("--user", help="only this user")
    parser.add_argument("--limit", type=int, default=100, help="print at most this many (default 100)")
    parser.add_argument("--follow", action="store_true", help="then print each newly parked invocation until Ctrl-C")
    add_json(parser)


def item(record) -> dict[str, Any]:
    """An inbox line: who waits for what, and the command that answers it."""
    calls = [{"id": call.id, "name": call.name, "kind": call.kind, "args": call.args,
              "answerWith": answer_command(record, call)} for call in record.pending_calls]
    # The command as a shell takes it (JSON in single quotes); `jq -r .answerWith` prints it ready to paste.
    answer = answer_command(record, record.pending_calls[0]) if record.pending_calls else None
    text = message_text(record)
    return {"invocationId": record.id, "appName": record.app_name, "userId": record.user_id,
            "sessionId": record.session_id, "message": text, "parkedAt": record.updated_at,
            "pendingCalls": calls, "answerWith": answer}


async def _pairs(client: Any, args: argparse.Namespace) -> list[tuple[str, str]]:
    apps = args.app_names or await client.ops.announced_apps()
    return await client.inbox.user_pairs(apps, [args.user] if args.user else None)


async def _parked(client: Any, args: argparse.Namespace, limit: int) -> list:
    """Up to ``limit`` parked records of the filters, newest first."""
    pairs, records, token = await _pairs(client, args), [], None
    while len(records) < limit:
        page, _total = await client.inbox.parked_page(pairs, page_size=min(200, limit - len(records)),
                                                      page_token=token)
        records += page.items
        token = page.next_page_token
        if token is None:
            break
    return records


async def _run(redis_url: str, args: argparse.Namespace) -> int:
    from worker.client import AgentqClient

    if args.limit < 1:
        from runtime.errors import UsageError

        raise UsageError(f"--limit must be at least 1, not {args.limit}")
    # Any store URL, Cluster too; reads only, so a Cluster store needs no AGENTQ_BROKER_URL here.
    async with AgentqClient(redis_url, reads_only=True) as client:
        if not args.app_names and not await client.ops.announced_apps():
            print(f"agentq inbox: no worker has announced an app on the Redis at "
                  f"{getattr(args, 'redis_where', redis_url)} yet; name one with "
                  "--app NAME, or start `agentq worker` against this Redis", file=sys.stderr)
        printed = set()
        for record in reversed(await _parked(client, args, args.limit)):  # oldest first, so the newest ends last
            printed.add(_key(record))
            _show(record, args.json)
        if not args.json and not printed:
            render.out("no invocation waits on a person")
        seen = None
        while args.follow:
            _total, digest = await client.inbox.fingerprint(await _pairs(client, args))
            if digest != seen:
                seen = digest
                for record in reversed(await _parked(client, args, 200)):
                    if _key(record) not in printed:
                        printed.add(_key(record))
                        _show(record, args.json)
            await asyncio.sleep(POLL_S)
    return 0


def _key(record) -> tuple:
    # An invocation that parks again on new calls is new to the approver; the same wait is printed once.
    return record.id, tuple(call.id for call in record.pending_calls)


def _show(record, as_json: bool) -> None:
    if as_json:
        _print(item(record))
    else:
        render.inbox_item(record)


def _print(value: dict) -> None:
    sys.stdout.write(json.dumps(value) + "\n")
    sys.stdout.flush()


def run(args: argparse.Namespace, redis_url: str) -> int:
    """Print the inbox (and follow it); the exit code."""
    return asyncio.run(_run(redis_url, args))
