"""BlockingReads: connections for one loop's blocking stream reads, each holding one read at a time.

A follower (an SSE stream, ``/run``, ``AgentqClient.events``) waits for its invocation's next entries with
``XREAD BLOCK``, several times per invocation. Through redis-py's pool each such read cost about 160 us of client
CPU (connection checkout, retry and observability wrappers, typed reply parsing), against about 65 us sent on a
``MuxConnection`` of its own. A blocking read cannot share the loop's pipelined connection (every reply behind it
would wait), so this keeps idle ``MuxConnection`` objects and lends one to each read; the reply comes back as
Redis sent it (``streams`` reads either form).

A read that ends in any other way than its reply (cancelled because the client left, a dropped connection, an
error) closes its connection instead of returning it: an abandoned ``XREAD BLOCK`` would otherwise answer the
next command sent on it.
"""

from __future__ import annotations

import asyncio

from .mux import MuxConnection


class BlockingReads:
    """Lends a connection of its own to each blocking command; at most ``max_connections`` at once (more wait)."""

    def __init__(self, url: str, *, max_connections: int):
        self._url = url
        self._idle: list[MuxConnection] = []
        self._slots = asyncio.Semaphore(max_connections)

    async def execute_command(self, *args):
        """Send one (blocking) command on a connection no other command is using; its reply, as Redis sent it."""
        async with self._slots:
            connection = self._idle.pop() if self._idle else MuxConnection(self._url)
            try:
                reply = await connection.execute_command(*args)
            except BaseException:
                await connection.aclose()
                raise
            self._idle.append(connection)
            return reply

    async def aclose(self) -> None:
        """Close the idle connections (one lent out is closed by its read when that ends)."""
        idle, self._idle = self._idle, []
        for connection in idle:
            await connection.aclose()
