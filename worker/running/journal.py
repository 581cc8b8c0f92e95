"""RedisToolJournal: tool idempotency records ``invocation_id:function_call_id`` in Redis.

One hash per invocation: field = function call id, value ``s`` (started) or ``c<response JSON>`` (completed).
``begin`` marks a call started in one atomic step and returns what was there, so two workers racing on the same
call after a failover agree on whether it already ran.

The hash sits beside the invocation's record (same hash tag) and has no TTL while the invocation may still
run or resume, however long it stays parked; it expires with the record once the invocation is final
(the settle and cancel scripts). ``begin`` refuses to start a call of an invocation that is final or gone: only a worker
that lost its lease (a cancel, a deleted session) can get there, and it must stop, not act.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from runtime.errors import FencedOutError
from runtime.redis_store import keys
from runtime.redis_store.mux import queue_command
from runtime.redis_store.replication import wait_for_replicas
from runtime.redis_store.scripts import JOURNAL_BEGIN
from runtime.tools.tool_journal import BaseToolJournal, ToolCallRecord

log = logging.getLogger("agentq.worker")



class RedisToolJournal(BaseToolJournal):
    """The tool journal workers pass to their Runners, on the worker's ``InvocationStore``."""

    def __init__(self, store):
        self._store = store
        self._clients = store.clients

    async def _keys(self, invocation_id: str) -> dict[str, str]:
        where = await self._store.locate(invocation_id)  # cached for every invocation the worker runs
        return {"journal": keys.invocation_journal(where.app, where.user, invocation_id),
                "record": keys.invocation(where.app, where.user, invocation_id)}

    async def begin(self, invocation_id: str, function_call_id: str, tool_name: str) -> ToolCallRecord | None:
        mux = self._clients.mux()
        call_keys = await self._keys(invocation_id)
        reply = await JOURNAL_BEGIN(mux, **call_keys, call_id=function_call_id)
        if reply[0] == "over":
            raise FencedOutError(f"invocation {invocation_id!r} is over (cancelled, or its session deleted); "
                                 f"call {function_call_id!r} of {tool_name!r} is not started")
        # With AGENTQ_REDIS_MIN_REPLICAS the 'started' mark must be on a replica before the tool acts: a failover
        # that lost it would let the resumed run start the call afresh, and a side effect happen twice.
        await wait_for_replicas(mux, f"call {function_call_id!r} of {tool_name!r} started",
                                key=call_keys["journal"])
        return _decode(reply[1] if len(reply) > 1 else None)

    async def complete(self, invocation_id: str, function_call_id: str, response: dict[str, Any]) -> None:
        value = "c" + json.dumps(response, separators=(",", ":"), default=str)
        journal = (await self._keys(invocation_id))["journal"]
        command = ("HSET", journal, function_call_id, value)
        mux = self._clients.mux()
        # Not awaited: the write is queued on the connection the session service commits on, so it reaches Redis
        # before the event carrying this response, a round trip per tool call sooner. If it fails, so does that
        # commit (same connection); the call then stays 'started' and is treated as in doubt, never re-run blind.
        reply = queue_command(mux, *command)
        if asyncio.isfuture(reply):
            reply.add_done_callback(_report_failure)
        else:
            await reply

    async def get(self, invocation_id: str, function_call_id: str) -> ToolCallRecord | None:
        """What the journal holds for one call (for tests and inspection)."""
        journal = (await self._keys(invocation_id))["journal"]
        return _decode(await self._clients.get().hget(journal, function_call_id))


def _report_failure(reply: asyncio.Future) -> None:
    if not reply.cancelled() and reply.exception() is not None:
        log.warning("tool journal: recording a completed call failed: %r", reply.exception())


def _decode(value: Any) -> ToolCallRecord | None:
    if value is None:
        return None
    if isinstance(value, bytes):
        value = value.decode()
    if value == "s":
        return ToolCallRecord(status="started")
    return ToolCallRecord(status="completed", response=json.loads(value[1:]))
