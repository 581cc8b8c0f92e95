"""Backlog marks: an app whose run queue a worker keeps paused has its jobs waiting in the broker on purpose.

The dispatch watchdog re-sends a run job not claimed within ``DISPATCH_GRACE_S``, taking it for lost. During a
flood held back by a per-app cap (``worker.queues.app_limits``, ``worker.running.queue_flow``) nearly every queued job is that
old, and re-sending them only adds duplicates behind the originals, which the workers then consume and drop.
So while a worker keeps an app's queue paused it sets the app's mark (``keys.run_backlog``, a short TTL renewed
every ``MARK_EVERY_S``), and a reaper postpones an unclaimed job of a marked app by one grace period instead of
re-sending it. A job that really was lost is sent again once no worker holds the app's queue back: from then on
the queue drains, and the re-sent job would have waited behind the same backlog anyway. A worker that dies
stops renewing the mark, which lapses within ``MARK_TTL_S``.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

from runtime.errors import InvocationNotFoundError
from runtime.redis_store import keys
from worker.queues.dispatch import DISPATCH_GRACE_S

if TYPE_CHECKING:
    from worker.records.store import InvocationStore

MARK_EVERY_S = 1.0
MARK_TTL_S = 3
CHECK_FRESH_S = 0.5
"""How long a reaper trusts one read of an app's mark (a pass may look at a hundred jobs of one app)."""

_checked: dict[str, tuple[float, bool]] = {}


async def mark(store: InvocationStore, apps: Iterable[str | None]) -> None:
    """Mark ``apps`` (None, the jobs of no known app, has no mark) as held back by this worker for a while."""
    pipe = store.redis.pipeline(transaction=False)
    for app in apps:
        if app is not None:
            pipe.set(keys.run_backlog(app), "1", ex=MARK_TTL_S)
    await pipe.execute()


async def postponed(store: InvocationStore, invocation_id: str) -> bool:
    """If the invocation's app is marked, push its watchdog entry one grace period on and return True (the reaper
    then leaves it); False: send it again as usual."""
    try:
        where = await store.locate(invocation_id)
    except InvocationNotFoundError:
        return False
    now = time.monotonic()
    checked = _checked.get(where.app)
    if checked is None or now - checked[0] > CHECK_FRESH_S:
        checked = _checked[where.app] = (now, bool(await store.redis.exists(keys.run_backlog(where.app))))
    if not checked[1]:
        return False
    due_ms = int((time.time() + DISPATCH_GRACE_S) * 1000)
    await store.redis.zadd(keys.dispatch_due(store.shard(where)), {invocation_id: due_ms})
    return True
