"""The inbox change feed of one API process: one follower task reads the feed for every open page.

Every open ``/inbox/events`` connection subscribes here instead of asking Redis itself. One asyncio task (the
follower) does a blocking read of the change streams (``client.inbox.read_changes``, ``worker/records/inbox_feed.py``)
and hands each change to the subscribers that may see it, so a thousand idle pages cost Redis one blocked read,
not a thousand polls. The follower starts with the first subscriber, at the newest entry, and stops with the
last; between reads it resumes from the last entry it read. When it cannot know what it missed (it fell behind
the streams' trim, or Redis lost data), it tells every subscriber to reload instead.

A subscriber that does not keep up (a stalled connection) does not hold the others back: its changes pile up to
``MAX_PENDING`` and are then replaced by one reload.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)

BLOCK_MS = 5_000
"""Longest single blocking read: an idle process sends one command per this long, whatever the pages open."""

MAX_PENDING = 1_000
"""Changes kept for one subscriber that has not taken them; past that it gets a reload instead."""

SHARDS_EVERY_S = 5.0
"""On a Cluster, how often the follower looks for shards registered since it started (one SMEMBERS)."""

RETRY_S = (0.1, 0.5, 1.0, 2.0, 5.0)
"""Waits before reading again after Redis failed, longer each time (the last one repeats)."""

Visible = Callable[[str, str], bool]
"""(app, user) -> whether a subscriber may see changes of that user."""


@dataclass(frozen=True, kw_only=True)
class Update:
    """What a subscriber is handed: the changes it may see since its last update, oldest first, or ``reload``
    when some may be missing (then ``changes`` is empty)."""

    changes: list[Any] = field(default_factory=list)
    reload: bool = False


class Subscription:
    """One subscriber's mailbox: the follower adds, the subscriber takes everything at once."""

    def __init__(self, visible: Visible):
        self.visible = visible
        self._changes: list[Any] = []
        self._reload = False
        self._waiter: asyncio.Future | None = None
        """Set while the subscriber waits with nothing to take."""

    def offer(self, changes: list[Any]) -> None:
        """Keep the changes this subscriber may see (called by the follower)."""
        mine = [change for change in changes if self.visible(change.app, change.user)]
        if not mine or self._reload:
            return
        self._changes += mine
        if len(self._changes) > MAX_PENDING:
            self.reload()
        self._wake()

    def reload(self) -> None:
        """Tell the subscriber to reload: whatever it was told before may be incomplete."""
        self._changes, self._reload = [], True
        self._wake()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    async def next(self) -> Update:
        """Wait for changes (or a reload), then take them all."""
        if not self._changes and not self._reload:
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        update = Update(changes=self._changes, reload=self._reload)
        self._changes, self._reload = [], False
        return update


class ChangeFeed:
    """The follower of one API process; ``inbox`` is the client's inbox reads (``worker.records.reads.InboxReads``)."""

    def __init__(self, inbox: Any, *, block_ms: int = BLOCK_MS, shards_every_s: float = SHARDS_EVERY_S):
        self._inbox = inbox
        self._block_ms = block_ms
        self._shards_every_s = shards_every_s
        self._subscribers: set[Subscription] = set()
        self._task: asyncio.Task | None = None
        self._started: asyncio.Future | None = None
        self.reads = 0
        """Blocking reads sent so far (for tests and benchmarks)."""

    @property
    def subscribers(self) -> int:
        """How many subscribers are following now."""
        return len(self._subscribers)

    @contextlib.asynccontextmanager
    async def subscribe(self, visible: Visible) -> AsyncIterator[Subscription]:
        """A subscription for the changes ``visible`` lets through. Once this returns, every change appended
        to the feed from then on reaches it (the follower has its starting position)."""
        subscription = Subscription(visible)
        self._subscribers.add(subscription)
        try:
            if self._task is None or self._task.done():  # none yet, or the last one could not start
                self._started = asyncio.get_running_loop().create_future()
                self._task = asyncio.create_task(self._follow(self._started), name="inbox-change-feed")
            await asyncio.shield(self._started)
            yield subscription
        finally:
            self._subscribers.discard(subscription)
            if not self._subscribers and self._task is not None:
                task, self._task = self._task, None
                task.cancel()  # a blocked read is abandoned at once (its connection is dropped, not reused)
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    async def _follow(self, started: asyncio.Future) -> None:
        cursor = None
        failures = 0
        shards_seen = 0.0
        loop = asyncio.get_running_loop()
        while True:
            try:
                if cursor is None:
                    cursor = await self._inbox.feed_cursor()
                    if not started.done():
                        started.set_result(None)
                elif failures and await self._inbox.cursor_lost_changes(cursor):
                    self._tell_all_to_reload()
                elif loop.time() - shards_seen >= self._shards_every_s:
                    await self._inbox.follow_new_shards(cursor)
                    shards_seen = loop.time()
                failures = 0
                self.reads += 1
                batch = await self._inbox.read_changes(cursor, block_ms=self._block_ms)
            except asyncio.CancelledError:
                raise
            except Exception as error:  # Redis away: wait, then resume from the cursor (or start, if none yet)
                if not started.done():
                    started.set_exception(error)
                    return
                log.warning("inbox change feed: reading failed (%s); trying again", error)
                await asyncio.sleep(RETRY_S[min(failures, len(RETRY_S) - 1)])
                failures += 1
                continue
            if batch.behind:
                log.warning("inbox change feed: fell behind the streams' trim; every open inbox reloads")
                self._tell_all_to_reload()
            elif batch.changes:
                for subscription in list(self._subscribers):
                    subscription.offer(batch.changes)

    def _tell_all_to_reload(self) -> None:
        for subscription in list(self._subscribers):
            subscription.reload()
