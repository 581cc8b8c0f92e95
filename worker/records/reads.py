"""What the client reads about the deployment beyond single invocations: ``client.ops`` (Redis answering, workers
alive, the run queues, invocations by status), ``client.inbox`` (parked invocations across users),
``client.dead_letters`` (webhook notifications given up on) and ``client.traces`` (a session's saved spans).

Each is bound to the client's store and uses its connections, so a caller such as the HTTP API or the CLI names no
key and sends no command: which keys hold what stays the worker's business (``tests/api/test_api_reads_through_client.py``,
``tests/worker/test_cli_reads_through_client.py``).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from runtime.redis_store import keys
from runtime.redis_store.codec import text
from worker.config import shards
from worker.fleet import app_catalog
from worker.fleet.workers_alive import AliveWorker, alive_workers, announced_apps
from worker.records import inbox, inbox_feed
from worker.records.status_counts import count_by_status, count_underflows
from worker.webhooks import outbox as webhook_outbox

if TYPE_CHECKING:
    from worker.records.inbox import Pair
    from worker.records.inbox_feed import ChangeBatch, FeedCursor
    from worker.records.listing import Page
    from worker.records.record import InvocationRecord
    from worker.records.store import InvocationStore

ALIVE_FRESH_S = 1.0
"""How long one read of the workers' beats answers ``alive_recently``: it is asked on every enqueue and every
stream opened on a queued invocation, and workers beat once a second, so a read this old is as good as new."""


class OpsReads:
    """The deployment at a glance, for /health, /metrics and the ops summary."""

    def __init__(self, store: InvocationStore):
        self._store = store
        self._alive: tuple[float, list[AliveWorker]] | None = None
        """(when, workers) of the latest beats read by ``alive_recently``."""

    async def check_store(self) -> None:
        """Return once Redis answers; raise its error when it does not."""
        await self._store.redis.ping()

    async def alive_workers(self) -> list[AliveWorker]:
        """The workers that beat within ``worker.fleet.workers_alive.ALIVE_S``, read now."""
        return await alive_workers(self._store.redis)

    async def announced_apps(self) -> list[str]:
        """The apps of every worker that announced itself, alive or not (``worker.fleet.workers_alive.announced_apps``)."""
        return await announced_apps(self._store.redis)

    async def app_catalog(self, app_names: list[str] | None) -> dict[str, dict[str, Any]]:
        """What the workers wrote about ``app_names`` (None: every app): ``{app: {info, approval}}`` (``worker.fleet.app_catalog``)."""
        return await app_catalog.read_entries(self._store.redis, app_names)

    async def alive_recently(self) -> list[AliveWorker]:
        """The workers alive, read at most once per ``ALIVE_FRESH_S``."""
        now = time.monotonic()
        if self._alive is not None and now - self._alive[0] < ALIVE_FRESH_S:
            return self._alive[1]
        workers = await self.alive_workers()
        self._alive = (now, workers)
        return workers

    async def queue_depth(self, apps: list[str] | None = None) -> int:
        """Run jobs waiting in the broker, over every run queue (``queue_depths``)."""
        return sum((await self.queue_depths(apps)).values())

    async def queue_depths(self, apps: list[str] | None = None) -> dict[str, int]:
        """Messages waiting in each run queue: the shared one (``worker.queues.dispatch.QUEUE``) and those of the apps the
        workers announced and of ``apps`` (those an API serves: their jobs queue before any worker announced
        itself), by this process's ``AGENTQ_APP_QUEUES`` (``worker.config.run_queues``)."""
        served = sorted({*(await self.announced_apps()), *(apps or [])})
        queues = self._store.dispatcher.queues.queues_for(served)
        pipe = self._store.redis.pipeline(transaction=False)
        for queue in queues:
            pipe.llen(queue)
        return dict(zip(queues, await pipe.execute(), strict=True))

    async def status_counts(self, apps: list[str] | None = None, users: list[str] | None = None) -> dict[str, int]:
        """Invocations by status, exactly: of the deployment, of ``apps``, or of ``users`` in ``apps``
        (``worker.records.status_counts.count_by_status``)."""
        return await count_by_status(self._store.redis, cluster=self._store.clients.is_cluster, apps=apps,
                                     users=users)

    async def status_count_underflows(self) -> int:
        """Transitions that would have moved a status count below zero (a bug; 0 when the counts are exact)."""
        return await count_underflows(self._store.redis, cluster=self._store.clients.is_cluster)

    async def webhook_stats(self) -> dict[str, float]:
        """The webhook outbox's counters and sizes (``worker.webhooks.outbox.stats``)."""
        return await webhook_outbox.stats(self._store.redis)


class InboxReads:
    """The parked inbox across users and apps (``worker.records.inbox``)."""

    def __init__(self, store: InvocationStore):
        self._store = store

    async def user_pairs(self, apps: list[str], users: list[str] | None) -> list[Pair]:
        """(app, user) pairs of ``users`` in each app; ``users`` None: every user with a session there."""
        return await inbox.user_pairs(self._store.redis, apps, users)

    async def parked_page(self, pairs: list[Pair], *, page_size: int = 25,
                          page_token: str | None = None) -> tuple[Page[InvocationRecord], int]:
        """A page of the parked invocations of ``pairs``, newest first, and how many are parked in all."""
        return await inbox.parked_page(self._store.redis, pairs, page_size=page_size, page_token=page_token)

    async def app_wide_page(self, apps: list[str], *, page_size: int = 25,
                            page_token: str | None = None) -> tuple[Page[InvocationRecord], int]:
        """A page of every parked invocation of ``apps`` (all their users), newest first, and how many are
        parked in all; its cost does not grow with the number of users (``worker.records.inbox.app_wide_page``)."""
        return await inbox.app_wide_page(self._store.redis, apps, cluster=self._store.clients.is_cluster,
                                         page_size=page_size, page_token=page_token)

    async def parked_total(self, pairs: list[Pair]) -> int:
        """How many invocations of ``pairs`` are parked."""
        return await inbox.parked_total(self._store, pairs)

    async def app_wide_total(self, apps: list[str]) -> int:
        """How many invocations of ``apps`` are parked, all users."""
        return await inbox.app_wide_total(self._store, apps)

    async def fingerprint(self, pairs: list[Pair]) -> tuple[int, str]:
        """The parked total and a digest that changes when an invocation of ``pairs`` parks or leaves."""
        return await inbox.fingerprint(self._store.redis, pairs)

    async def feed_cursor(self) -> FeedCursor:
        """A cursor at the newest entry of the change feed: ``read_changes`` from it gives only later changes."""
        return await inbox_feed.feed_cursor(self._store.redis, cluster=self._store.clients.is_cluster)

    async def read_changes(self, cursor: FeedCursor, *, block_ms: int) -> ChangeBatch:
        """The inbox changes after ``cursor`` (moved past them), waiting up to ``block_ms`` for the first
        (``worker.records.inbox_feed``)."""
        return await inbox_feed.read_changes(self._store.redis, cursor, block_ms=block_ms)

    async def follow_new_shards(self, cursor: FeedCursor) -> None:
        """Add the shards registered since ``cursor`` was made (a Cluster; nothing on one node)."""
        await inbox_feed.add_new_shards(self._store.redis, cursor, cluster=self._store.clients.is_cluster)

    async def cursor_lost_changes(self, cursor: FeedCursor) -> bool:
        """True (and the cursor moved back) when the feed is older than the cursor: Redis lost data."""
        return await inbox_feed.check_cursor(self._store.redis, cursor)


class DeadLetters:
    """Webhook notifications the workers gave up on (``worker.webhooks.outbox``), and sending one again."""

    def __init__(self, store: InvocationStore):
        self._store = store

    async def page(self, *, limit: int, after: str | None = None) -> tuple[list[dict], str | None]:
        """Dead letters newest first after the cursor ``after``; the page and the next cursor (None: no more)."""
        return await webhook_outbox.dead_letters(self._store.redis, limit=limit, after=after)

    async def get(self, delivery_id: str) -> dict | None:
        """One dead letter by its delivery id (None: not in the list)."""
        return await webhook_outbox.dead_letter(self._store.redis, delivery_id)

    async def redeliver(self, entry: dict, *, actor: dict | None = None) -> bool:
        """Put the dead letter back in the outbox with a fresh retry window; False when it is gone. ``actor``
        is recorded on the invocation's record as who redelivered (worker.records.audit; default ``cli:<os user>``)."""
        from worker.records.audit import cli_actor

        return await webhook_outbox.redeliver(self._store.redis, entry, actor=actor or cli_actor())


class SessionTraces:
    """The spans the workers' runners saved for a session (``runtime.tracing.RedisSpanStore``), and finding which
    user a session belongs to when only its id is known (ADK's trace route names no user)."""

    def __init__(self, store: InvocationStore):
        self._store = store

    async def app_users(self, app_name: str, limit: int) -> list[str]:
        """Up to ``limit`` users with sessions in the app (any ``limit`` of them when there are more), sorted."""
        redis = self._store.redis
        if not self._store.clients.is_cluster:
            return sorted(text(user) for user in await redis.srandmember(keys.app_users(app_name), limit))
        return sorted((await shards.app_users(redis, [app_name]))[0])[:limit]  # merged over the shards

    async def users_with_session(self, app_name: str, users: list[str], session_id: str) -> list[str]:
        """Those of ``users`` that have a session ``session_id`` in the app, in the order given."""
        if not users:
            return []
        async with self._store.redis.pipeline(transaction=False) as pipe:
            for user in users:
                pipe.sismember(keys.user_sessions(app_name, user), session_id)
            found = await pipe.execute()
        return [user for user, has in zip(users, found, strict=True) if has]

    async def spans(self, app_name: str, user_id: str, session_id: str) -> list[dict[str, Any]]:
        """The session's spans, oldest run first."""
        from runtime.tracing import RedisSpanStore

        return await RedisSpanStore(client=self._store.redis).list(app_name=app_name, user_id=user_id,
                                                                   session_id=session_id)


class A2ATasks:
    """The A2A tasks of apps served over A2A (``api.a2a``), as the A2A SDK saves them (``worker.records.a2a_tasks``)."""

    def __init__(self, store):
        self._store = store

    async def keep(self, app: str, task_id: str, data: str) -> None:
        from worker.records import a2a_tasks

        await a2a_tasks.save(self._store, app, task_id, data)

    async def fetch(self, app: str, task_id: str) -> str | None:
        from worker.records import a2a_tasks

        return await a2a_tasks.get(self._store, app, task_id)

    async def newest(self, app: str, count: int) -> list[str]:
        from worker.records import a2a_tasks

        return await a2a_tasks.newest(self._store, app, count)

    async def forget(self, app: str, task_id: str) -> None:
        from worker.records import a2a_tasks

        await a2a_tasks.delete(self._store, app, task_id)
