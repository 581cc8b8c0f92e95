"""Emitter: the one channel through which every node of a workflow run hands its events to the Runner.

Nodes run as concurrent tasks (fan-out, parallel workers, dynamic children); the workflow's agent generator
yields their events one at a time. ``emit`` returns only once the Runner has committed the event (it resumed the
generator), so a node never runs ahead of its committed state, as an agent never does.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Collection, Coroutine
from typing import Any

from ..events import Event

_DONE = object()


class Emitter:
    def __init__(self) -> None:
        self._queue: asyncio.Queue = asyncio.Queue()

    async def emit(self, event: Event) -> None:
        """Hand ``event`` to the Runner and wait until it was committed (forwarded, for a partial one)."""
        committed = asyncio.get_running_loop().create_future()
        await self._queue.put((event, committed))
        await committed

    async def drain(self, main: Coroutine[Any, Any, Any]) -> AsyncGenerator[Event, None]:
        """Run ``main`` and yield every event emitted meanwhile; re-raise what ``main`` raised.

        Closing the generator (the Runner stopped: a lost lease, a cancel) cancels ``main`` and its nodes."""
        task = asyncio.create_task(main)
        task.add_done_callback(lambda _: self._queue.put_nowait((_DONE, None)))
        try:
            while True:
                item, committed = await self._queue.get()
                if item is _DONE:
                    break
                yield item
                if not committed.done():
                    committed.set_result(None)
            task.result()
        finally:
            await stop_tasks([task])


async def stop_tasks(tasks: Collection[asyncio.Task]) -> None:
    """Cancel the node runs still going (a sibling failed, or the run was stopped) and wait until they stopped."""
    for task in tasks:
        task.cancel()
    if tasks:
        await asyncio.gather(*tasks, return_exceptions=True)
