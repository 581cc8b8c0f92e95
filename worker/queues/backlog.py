"""When an unclaimed run job is not lost: the dispatch watchdog's postponements.

The dispatch watchdog (``worker.fleet.reaper``) re-sends a run job not claimed within ``DISPATCH_GRACE_S``.
Age alone does not make a job lost; ``postponed`` pushes the watchdog entry one grace period on instead of
re-sending when the job is known to be somewhere:
- its app's queue is held back by a worker (the backlog mark below);
- its app's run queue in the broker still holds messages (``waiting_in_broker``): a backlog queued before any
  worker started, or faster than the workers drain it, is every job overdue at once, and re-sending each (up to
  a hundred per reaper pass per worker) only queued duplicates behind the originals. The broker's queue is a
  FIFO list, so a job that really was lost is re-sent once the queue is empty: a re-sent job would have waited
  behind the same backlog anyway (and one grace period later, so that a job taken as the queue emptied is
  claimed first);
- it was taken and claimed: the invocation is ``running`` under a live session lease (a worker took the job
  and has not yet heartbeated, which is when the entry leaves the watchdog's set). A worker that dies there
  lets its lease lapse, and the job is re-sent.

Backlog marks: an app whose run queue a worker keeps paused has its jobs waiting in the broker on purpose.

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
from runtime.redis_store.codec import text
from worker.queues.dispatch import DISPATCH_GRACE_S

if TYPE_CHECKING:
    from worker.records.store import InvocationStore, Where

MARK_EVERY_S = 1.0
MARK_TTL_S = 3
CHECK_FRESH_S = 0.5
"""How long a reaper trusts one read of an app's mark (a pass may look at a hundred jobs of one app)."""

BROKER_MARK_S = int(DISPATCH_GRACE_S)
"""How long an app stays marked after a reaper saw its run queue holding messages."""

_checked: dict[tuple[int, str], tuple[float, bool]] = {}
_depths: dict[tuple[int, str], tuple[float, int]] = {}
"""Per store (``id``) and app or queue: when it was read, and what."""


async def mark(store: InvocationStore, apps: Iterable[str | None]) -> None:
    """Mark ``apps`` (None, the jobs of no known app, has no mark) as held back by this worker for a while."""
    pipe = store.redis.pipeline(transaction=False)
    for app in apps:
        if app is not None:
            pipe.set(keys.run_backlog(app), "1", ex=MARK_TTL_S)
    await pipe.execute()


async def postponed(store: InvocationStore, invocation_id: str) -> bool:
    """If the invocation's run job is not lost (see the module docstring), push its watchdog entry one grace
    period on and return True (the reaper then leaves it); False: send it again as usual."""
    try:
        where = await store.locate(invocation_id)
    except InvocationNotFoundError:
        return False
    if not (await _held_back(store, where.app) or await waiting_in_broker(store, where.app)
            or await _claimed(store, invocation_id, where)):
        return False
    due_ms = int((time.time() + DISPATCH_GRACE_S) * 1000)
    await store.redis.zadd(keys.dispatch_due(store.shard(where)), {invocation_id: due_ms})
    return True


async def _held_back(store: InvocationStore, app: str) -> bool:
    now = time.monotonic()
    checked = _checked.get((id(store), app))
    if checked is None or now - checked[0] > CHECK_FRESH_S:
        checked = _checked[id(store), app] = (now, bool(await store.redis.exists(keys.run_backlog(app))))
    return checked[1]


async def waiting_in_broker(store: InvocationStore, app: str) -> bool:
    """True while the run queue that ``app``'s jobs go to holds messages; seeing it so also sets the app's
    backlog mark for one grace period (``BROKER_MARK_S``), so that a job a worker took just as the queue
    emptied, and has not claimed yet, is not taken for lost by any reaper. Read as the ops figures read the
    queue depth (``worker.records.reads.OpsReads.queue_depths``): LLEN on the store's Redis, which is the broker
    unless ``AGENTQ_BROKER_URL`` names another (then this reads 0 and age alone decides, as before)."""
    queue = store.dispatcher.queues.queue_for(app)
    now = time.monotonic()
    depth = _depths.get((id(store), queue))
    if depth is None or now - depth[0] > CHECK_FRESH_S:
        depth = _depths[id(store), queue] = (now, int(await store.redis.llen(queue)))
        if depth[1]:
            await store.redis.set(keys.run_backlog(app), "1", ex=BROKER_MARK_S)
            _checked[id(store), app] = (now, True)
    return depth[1] > 0


async def _claimed(store: InvocationStore, invocation_id: str, where: Where) -> bool:
    status, holder = await store.batch(
        ("HGET", store.record_key(invocation_id, where), "status"),
        ("GET", keys.session_lease(where.app, where.user, where.session)))
    status, holder = text(status), text(holder)
    return status == "running" and isinstance(holder, str) and holder.partition("|")[0] == invocation_id
