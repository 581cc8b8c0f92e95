"""RedisToolJournal: tool idempotency records ``invocation_id:function_call_id`` in Redis.

One hash per invocation: field = function call id, value ``s`` (started) or ``c<response JSON>`` (completed).
``begin`` marks a call started in one atomic step and returns what was there, so two workers racing on the same
call after a failover agree on whether it already ran.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from runtime.redis_store import keys
from runtime.redis_store.lua import LuaScript
from runtime.redis_store.mux import queue_command
from runtime.tools.tool_journal import BaseToolJournal, ToolCallRecord

log = logging.getLogger("agentq.worker")

JOURNAL_TTL_S = 30 * 24 * 3600
"""How long idempotency records are kept after a call began (long past any plausible redelivery)."""

_BEGIN = LuaScript("""
-- KEYS: journal; ARGV: call_id, ttl_s
local previous = redis.call('HGET', KEYS[1], ARGV[1])
if not previous or previous == 's' then
  redis.call('HSET', KEYS[1], ARGV[1], 's')
  redis.call('EXPIRE', KEYS[1], ARGV[2])
end
return previous
""")


class RedisToolJournal(BaseToolJournal):
    """The tool journal workers pass to their Runners; ``clients`` is a ``runtime.redis_store`` LoopClients."""

    def __init__(self, clients):
        self._clients = clients

    async def begin(self, invocation_id: str, function_call_id: str, tool_name: str) -> ToolCallRecord | None:
        previous = await _BEGIN(self._clients.mux(), [keys.tool_journal(invocation_id)],
                                [function_call_id, JOURNAL_TTL_S])
        return _decode(previous)

    async def complete(self, invocation_id: str, function_call_id: str, response: dict[str, Any]) -> None:
        value = "c" + json.dumps(response, separators=(",", ":"), default=str)
        command = ("HSET", keys.tool_journal(invocation_id), function_call_id, value)
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
        return _decode(await self._clients.get().hget(keys.tool_journal(invocation_id), function_call_id))


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
