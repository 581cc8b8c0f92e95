"""PerLoopCache: one network client per asyncio event loop."""

from __future__ import annotations

import asyncio
import weakref
from typing import Generic, TypeVar

T = TypeVar("T")


class PerLoopCache(Generic[T]):
    """Holds one object (a client) per event loop, plus one for use outside any loop.

    Connection pools belong to the loop that opened them, and a worker may run several loops (one per thread)
    that share a model instance. Entries go away with their loop. Copies start empty, because a client owns
    sockets that cannot be copied or pickled.
    """

    def __init__(self) -> None:
        self._by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, T] = weakref.WeakKeyDictionary()
        self._outside_loop: T | None = None

    def get(self, loop: asyncio.AbstractEventLoop | None) -> T | None:
        """The object made for ``loop`` (None: outside any loop), if any."""
        return self._outside_loop if loop is None else self._by_loop.get(loop)

    def put(self, loop: asyncio.AbstractEventLoop | None, value: T) -> T:
        """Remember ``value`` for ``loop`` and return it."""
        if loop is None:
            self._outside_loop = value
        else:
            self._by_loop[loop] = value
        return value

    def __len__(self) -> int:
        return len(self._by_loop) + (self._outside_loop is not None)

    def __copy__(self) -> PerLoopCache[T]:
        return PerLoopCache()

    def __deepcopy__(self, memo: dict) -> PerLoopCache[T]:
        return PerLoopCache()

    def __reduce__(self):
        return (PerLoopCache, ())
