"""Driving an async generator from synchronous code, on a private event loop in a thread."""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import AsyncGenerator, Callable, Generator
from typing import Any

_DONE = object()


def iterate_in_thread(make: Callable[[], AsyncGenerator[Any, None]]) -> Generator[Any, None, None]:
    """Yield the items of ``make()`` as they come; an exception it raises is re-raised in the caller."""
    items: queue.Queue = queue.Queue()

    async def pump() -> None:
        async for item in make():
            items.put(item)

    def main() -> None:
        try:
            asyncio.run(pump())
        except BaseException as exc:  # handed to the caller's thread
            items.put(exc)
        finally:
            items.put(_DONE)

    thread = threading.Thread(target=main, name="agentq-runner", daemon=True)
    thread.start()
    try:
        while (item := items.get()) is not _DONE:
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        thread.join()
