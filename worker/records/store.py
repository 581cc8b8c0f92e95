"""InvocationStore: every Redis operation on invocation records, shared by the client and the workers."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from typing import Any

from redis.crc import key_slot
from redis.exceptions import NoScriptError

from runtime.errors import (
    CallNotPendingError,
    InvalidTransitionError,
    InvocationNotFoundError,
    SessionNotFoundError,
    UsageError,
)
from runtime.ids import new_invocation_id
from runtime.redis_store import keys
from runtime.redis_store.connection import LoopClients
from runtime.redis_store.mux import queue_command
from runtime.redis_store.replication import wait_for_replicas
from runtime.redis_store.scripts import ADD_APPROVAL, CANCEL, ENQUEUE, RESPOND
from runtime.redis_store.session_layout import lifecycle_keys
from runtime.redis_store.streams import trim_args
from runtime.tracing.otel import current_traceparent
from worker.config import due_shards
from worker.config.broker import broker_url, kombu_broker
from worker.config.shards import ShardRegistry, shard_of, slot_tag
from worker.queues.dispatch import DISPATCH_GRACE_S, Dispatcher
from worker.records import audit, child_sessions
from worker.records.answer_check import check_against_pending
from worker.records.codec import decode_record, dumps, encode_fields, encode_record
from worker.records.inputs import (
    run_config_dict,
    to_content,
    to_function_response,
    with_state_delta,
    with_traceparent,
)
from worker.records.record import InvocationRecord, pending_summary
from worker.records.retention import RetentionPolicy
from worker.webhooks import due as webhooks_due
from worker.webhooks.config import WebhookSettings

MAX_LOCATIONS = 100_000
"""Invocation locations kept in memory per store (oldest forgotten first; a miss costs one HGET)."""

MAX_CONNECTIONS = 65_536
"""Per loop. Followers hold a connection while they block on a stream, and a worker keeps hundreds of
invocations in flight, so redis-py's default pool of 100 would refuse connections under load."""


@dataclass(frozen=True, kw_only=True)
class Where:
    """The app, user and session an invocation belongs to (never changes, so it is cached)."""

    app: str
    user: str
    session: str


class InvocationStore:
    """Records, session queues and the stream status entries of invocations."""

    def __init__(self, redis_url: str, *, celery_app: Any | None = None, retention: RetentionPolicy | None = None,
                 webhooks: WebhookSettings | None = None, reads_only: bool = False):
        """``reads_only``: the store of a client that sends no run job, so a Cluster store needs no broker of its
        own (``worker.client.AgentqClient``)."""
        self.redis_url = redis_url
        self.retention = retention or RetentionPolicy()
        self.webhooks = webhooks or WebhookSettings()
        self.clients = LoopClients(redis_url, max_connections=MAX_CONNECTIONS)
        self.dispatcher = Dispatcher(celery_app, broker_url=broker_url(redis_url))
        if self.clients.is_cluster and not reads_only:
            kombu_broker(self.dispatcher.broker_url)  # a Cluster as the broker too: refused now, naming the fix
        self._where: dict[str, Where] = {}
        self._first_entries: dict[str, str] = {}
        """Stream entry ids of the queued status of invocations this store enqueued (a follower starts there)."""
        self._session_service = None
        self._artifact_service = None
        self._scripts_loaded = False
        self.shard_registry = ShardRegistry()
        """The shards this store listed in ``keys.shards()`` lately (a Cluster's; ``worker.config.shards``)."""

    @property
    def redis(self):
        """The redis.asyncio client (decoded responses) of the running loop."""
        return self.clients.get()

    @property
    def stream_trim(self) -> dict[str, int]:
        """The stream trimming arguments (``maxlen``, ``slack``, ``max_age_ms``) of the settle and cancel scripts."""
        return trim_args(self.retention.stream_maxlen, self.retention.stream_max_age_s)

    @property
    def mux(self):
        """The running loop's pipelined connection for non-blocking commands (``runtime.redis_store.mux``)."""
        return self.clients.mux()

    async def batch(self, *commands: tuple) -> list:
        """Send commands back to back on the mux connection (one round trip); replies or exceptions, in order."""
        mux = self.mux
        # Queued at once as plain futures (no task per command); a coroutine only while not connected yet.
        return await asyncio.gather(*(queue_command(mux, *command) for command in commands), return_exceptions=True)

    @property
    def session_service(self):
        """A RedisSessionService on the same Redis (one that can report commits, see worker.records.session_service)."""
        if self._session_service is None:
            from worker.records.session_service import WorkerSessionService

            # Commits trim the stream by length only; by age (a few Redis calls more) once per invocation, when
            # it settles (the SETTLE and CANCEL scripts), which every stream write is followed by.
            # On the store's own connections: the tool journal (worker.journal) queues its 'completed' record on
            # the same pipelined connection ahead of the commit of the tool's response event, which is what makes
            # a crash between the two leave the call in doubt rather than lose it (tests/worker/test_journal_order.py).
            self._session_service = WorkerSessionService(
                self.redis_url, clients=self.clients, stream_maxlen=self.retention.stream_maxlen)
        return self._session_service

    @property
    def artifact_service(self):
        """A RedisArtifactService on the same Redis, made on first use (a rewind restores artifacts: worker.records.rewind)."""
        if self._artifact_service is None:
            from runtime.artifacts import RedisArtifactService

            self._artifact_service = RedisArtifactService(self.redis_url)
        return self._artifact_service

    async def aclose(self) -> None:
        """Close this loop's connections."""
        if self._artifact_service is not None:
            await self._artifact_service.aclose()
        await self.clients.aclose()

    # --- locating and reading ---

    async def locate(self, invocation_id: str) -> Where:
        """Where the invocation lives. Raises InvocationNotFoundError."""
        where = self._where.get(invocation_id)
        if where is None:
            raw = await self.mux.execute_command("HGET", self.index_key(invocation_id), invocation_id)
            if raw is None:
                raise InvocationNotFoundError(f"invocation {invocation_id!r} does not exist")
            app, user, session = json.loads(raw)
            where = self.remember(invocation_id, Where(app=app, user=user, session=session))
        return where

    def remember(self, invocation_id: str, where: Where) -> Where:
        """Cache where an invocation lives (it never moves), forgetting the oldest beyond MAX_LOCATIONS."""
        _put_bounded(self._where, invocation_id, where)
        return where

    def forget(self, invocation_id: str) -> None:
        """Drop a cached location a worker no longer needs (its invocation settled or left): a worker's
        memory then holds the invocations it runs, not every one it ever ran (up to MAX_LOCATIONS)."""
        self._where.pop(invocation_id, None)

    def remember_first_entry(self, invocation_id: str, entry: str) -> None:
        """Cache the stream entry of an invocation's queued status (worker.records.double_texting enqueues too)."""
        _put_bounded(self._first_entries, invocation_id, entry)

    def first_entry(self, invocation_id: str) -> str | None:
        """The first stream entry of an invocation this store enqueued (None: read it from the record)."""
        return self._first_entries.get(invocation_id)

    def where_args(self, invocation_id: str) -> list[str] | None:
        """``[app, user, session]`` of an invocation whose location is cached (for run-job messages)."""
        where = self._where.get(invocation_id)
        return None if where is None else [where.app, where.user, where.session]

    def shard(self, where: Where) -> str:
        """The shard of the watchdog's, reaper's and outbox's sets for this invocation ('' on one node)."""
        return shard_of(where.app, where.user, cluster=self.clients.is_cluster)

    def index_key(self, invocation_id: str) -> str:
        """The hash holding the invocation's index entry: the one global key on one node; on a Cluster the one
        in the hash slot of the id itself, so entries spread over every slot and a bare id still needs no
        other lookup to find its own."""
        if not self.clients.is_cluster:
            return keys.invocation_index()
        return keys.invocation_index(slot_tag(key_slot(invocation_id.encode())))

    def record_key(self, invocation_id: str, where: Where) -> str:
        """The record's hash key."""
        return keys.invocation(where.app, where.user, invocation_id)

    @staticmethod
    def session_script_keys(where: Where, *names: str) -> dict[str, str]:
        """The session keys ``names`` (queue, lease, fence, stream, active, session_meta) by name, as a script
        call takes them."""
        named = lifecycle_keys(where.app, where.user, where.session)
        return {name: named[name] for name in names}

    @staticmethod
    def inbox_script_keys(where: Where, shard: str) -> dict[str, str]:
        """The keys every status script that can change what an approver sees keeps in step: the app's parked
        index, the inbox change feed and the status counts (of the user's shard on a Cluster)."""
        return {"app_parked": keys.app_parked(where.app, shard), "inbox_changes": keys.inbox_changes(shard),
                "status_counts": keys.status_counts(shard)}

    @staticmethod
    def reaper_script_keys(shard: str) -> dict[str, str]:
        """The reaper's sets a cancel (lib/cancel_step.lua) drops the invocation from, so that no reaper sends
        the run job of a cancelled invocation again: the dispatch watchdog, lease expiries and call deadlines."""
        return {"dispatch_due": keys.dispatch_due(shard), "lease_expiries": keys.lease_expiries(shard),
                "call_deadlines": keys.call_deadlines(shard)}

    async def get(self, invocation_id: str) -> InvocationRecord:
        """The record. Raises InvocationNotFoundError."""
        where = await self.locate(invocation_id)
        fields = await self.fields(self.record_key(invocation_id, where))
        if not fields:
            raise InvocationNotFoundError(f"invocation {invocation_id!r} does not exist")
        return decode_record(fields)

    async def fields(self, record_key: str) -> dict[str, str]:
        """A record's hash (HGETALL over the pipelined connection: a fraction of redis-py's client CPU)."""
        return pairs(await self.mux.execute_command("HGETALL", record_key))

    async def list_invocations(
        self, app: str, user: str, status: str | None = None, *, session_id: str | None = None, limit: int = 100
    ) -> list[InvocationRecord]:
        """A user's invocations in an app, newest first, filtered by status and session (up to ``limit``)."""
        from worker.records.listing import invocations_page

        found: list[InvocationRecord] = []
        token = None
        while len(found) < limit:
            page = await invocations_page(self, app, user, status=status, session_id=session_id,
                                          page_size=limit - len(found), page_token=token)
            found += page.items
            token = page.next_page_token
            if token is None:
                break
        return found

    # --- writes from the client side ---

    async def enqueue(
        self, app: str, user: str, session_id: str, new_message: Any, state_delta: dict | None,
        run_config: Any, *, time_limit: float | None = None, park_timeout: float | None = None,
        webhook: str | None = None, principal: str | None = None, invocation_id: str | None = None,
        strategy: str = "enqueue", actor: dict | None = None,
    ) -> str:
        """Store a queued record behind the session's queue, publish its status, send its run job.

        The record is stamped with this store's retention (``retention_s``); without a ``park_timeout`` it
        gets the policy's default one for the app, without a ``webhook`` the app's configured one (if any).
        ``strategy``: what it does to the session's live invocations (worker.records.double_texting; ``actor`` is
        recorded as who cancelled those it interrupts)."""
        if park_timeout is None:
            park_timeout = self.retention.park_timeout_for(app)
        webhook = self.webhooks.url_for(app, webhook)
        if invocation_id is not None and await self.redis.exists(self.record_key(
                invocation_id, Where(app=app, user=user, session=session_id))):
            raise UsageError(f"invocation id {invocation_id!r} is in use")
        record = InvocationRecord(
            id=invocation_id or new_invocation_id(), app_name=app, user_id=user, session_id=session_id,
            new_message=to_content(new_message), state_delta=state_delta or None,
            run_config=run_config_dict(run_config), time_limit=time_limit, park_timeout=park_timeout,
            webhook=webhook, enqueued_by=principal, traceparent=current_traceparent(),  # the caller's trace
        )
        where = Where(app=app, user=user, session=session_id)
        if strategy != "enqueue":  # reject, interrupt, rollback: their own script (worker.double_texting)
            from worker.records import double_texting

            return await double_texting.enqueue(self, record, where, double_texting.check_strategy(strategy),
                                                actor=actor)
        shard = self.shard(where)
        await self.shard_registry.register(self.redis, shard)  # before the watchdog entry below is written
        enqueue = dict(
            session_meta=keys.session_meta(app, user, session_id), record=self.record_key(record.id, where),
            user_invocations=keys.user_invocations(app, user),
            **self.session_script_keys(where, "queue", "stream", "active"), status_counts=keys.status_counts(shard),
            invocation_id=record.id, created_at=record.created_at, status_data=QUEUED,
            fields=[*encode_record(record), "retention_s", repr(self.retention.settled_s)])
        if not self._scripts_loaded:  # so the EVALSHA below normally finds the script (no second round trip)
            await self.mux.script_load(ENQUEUE.source)
            self._scripts_loaded = True
        replies = await self.batch(
            ("HSET", self.index_key(record.id), record.id, dumps([app, user, session_id])),
            ENQUEUE.command(**enqueue),
            ("ZADD", keys.dispatch_due(shard), _ms(time.time() + DISPATCH_GRACE_S), record.id),
            # The sweeper's entry, from the start: nothing an invocation leaves outside its own keys (the
            # index entry, listing entries) can outlive it, whatever happens to the process that settles it.
            ("ZADD", keys.retention_due(shard), _ms(record.created_at + self.retention.settled_s), record.id),
            *self._idle_commands(app, user, session_id),
            *(self.due_marks(shard, _ms(time.time() + DISPATCH_GRACE_S)) if shard else ()),
        )
        reply = replies[1]
        if isinstance(reply, NoScriptError):  # a server restart emptied the script cache
            reply = await ENQUEUE(self.mux, **enqueue)
        failed = next((r for r in replies if isinstance(r, Exception) and not isinstance(r, NoScriptError)), None)
        if failed is not None or reply[0] == -1:
            await self.batch(("HDEL", self.index_key(record.id), record.id), ("ZREM", keys.dispatch_due(shard), record.id),
                             ("ZREM", keys.retention_due(shard), record.id))
            if failed is not None:
                raise failed
            raise SessionNotFoundError(f"session {session_id!r} of user {user!r} in app {app!r} does not exist")
        self.remember(record.id, where)
        _put_bounded(self._first_entries, record.id, reply[1])
        await wait_for_replicas(self.mux, f"invocation {record.id!r}",  # with AGENTQ_REDIS_MIN_REPLICAS
                                key=enqueue["record"])
        await self.dispatcher.send(record.id, [app, user, session_id])  # the watchdog entry covers a lost send
        return record.id

    async def respond(
        self, invocation_id: str, function_responses: list[Any], *, detail: dict | None = None,
        actor: dict | None = None, pending: list[Any] | None = None, state_delta: dict | None = None,
    ) -> InvocationRecord:
        """Validate and store function responses; a parked invocation goes back to queued and is dispatched.
        ``state_delta`` is committed with the response event when the invocation resumes (worker.records.inputs).

        ``detail`` is added to the ``queued`` status entry of a resumed invocation (why it resumed); ``actor``
        (``{principal, client}``, worker.records.audit) is recorded as who answered, in the same script call;
        ``pending``: the record's pending calls when the caller read them already (spares a read)."""
        responses = [to_function_response(item) for item in function_responses]
        if not responses:
            raise UsageError("respond() needs at least one function response")
        audit.refuse_forged(responses)
        now = time.time()
        entry = audit.entry("answer", actor, now, call_ids=[response.id for response in responses])
        if entry is not None:
            detail = {**(detail or {}), "answeredBy": audit.who(entry)}
        where = await self.locate(invocation_id)
        rkey = self.record_key(invocation_id, where)
        shard = self.shard(where)
        # Each answer against the shape its call declared (request_input's response_schema, a long-running
        # tool's answer_schema): a mismatch is a 400 naming the field, and nothing is stored.
        await check_against_pending(self, rkey, responses, pending)
        answers: list[str] = []
        for response in responses:
            # A nameless response gets the pending call's name from the script (the model must see which
            # function answered); its JSON then has no "name" key and at least "id", so it can be spliced in.
            wire = response.model_dump(mode="json", exclude_none=True)
            if not response.name:
                wire.pop("name", None)
            if response is responses[0]:
                wire = with_traceparent(with_state_delta(wire, state_delta), current_traceparent())
            answers += [response.id, response.name or "", "1" if response.will_continue else "0", dumps(wire)]
        # One round trip: validation, storing, requeueing, the watchdog entry and the record as stored.
        reply = await RESPOND(
            self.mux, record=rkey, **self.session_script_keys(where, "queue", "stream"),
            dispatch_due=keys.dispatch_due(shard),
            call_deadlines=keys.call_deadlines(shard), parked=keys.user_parked(where.app, where.user),
            webhook_due=keys.webhook_due(shard), webhook_outbox=keys.webhook_outbox(shard),
            **self.inbox_script_keys(where, shard),
            app_audit=self._app_audit_key(where, entry), invocation_id=invocation_id, now=now,
            due_ms=_ms(now + DISPATCH_GRACE_S), status_data=status_data("queued", {"resumed": True, **(detail or {})}),
            **audit.script_args(entry, where.user, invocation_id), responses=answers)
        outcome = reply[0]
        if outcome == "gone":
            raise InvocationNotFoundError(f"invocation {invocation_id!r} does not exist")
        if outcome == "not_pending":  # the error path only: one more read, to say what it does wait for
            raise CallNotPendingError(
                f"function call {reply[1]!r} is not pending on invocation {invocation_id!r} "
                f"(never issued as a long-running call, or already answered): "
                f"{pending_summary(await self.get(invocation_id))}"
            )
        if outcome == "bad_confirmation":
            raise UsageError(f"the answer to confirmation {reply[1]!r} must be "
                             '{"confirmed": true|false, "payload": ...} with a boolean "confirmed"')
        if outcome == "wrong_name":
            raise UsageError(f"function call {reply[1]!r} is a call of {reply[2]!r}, not of the response's name")
        await self._index_audit(where, entry, invocation_id)
        if outcome == "queued" and shard:  # the script's dispatch-watchdog entry, marked for the reaper
            await self.mux.execute_command(*due_shards.mark(shard, _ms(now + DISPATCH_GRACE_S)))
        if outcome == "queued":
            await self.dispatcher.send(invocation_id, self.where_args(invocation_id))
        return decode_record(pairs(reply[2]))

    async def add_approval(self, invocation_id: str, call_id: str, principal: str) -> list[str] | None:
        """Record ``principal``'s approval of pending confirmation ``call_id``; the approvers so far, or None
        when that principal had approved it already. Raises InvocationNotFoundError, CallNotPendingError."""
        where = await self.locate(invocation_id)
        reply = await ADD_APPROVAL(self.mux, record=self.record_key(invocation_id, where), call_id=call_id,
                                   principal=principal)
        if reply[0] == "gone":
            raise InvocationNotFoundError(f"invocation {invocation_id!r} does not exist")
        if reply[0] == "not_pending":
            raise CallNotPendingError(f"function call {call_id!r} is not pending on invocation {invocation_id!r}: "
                                      f"{pending_summary(await self.get(invocation_id))}")
        return None if reply[0] == "duplicate" else json.loads(reply[1])

    async def cancel(self, invocation_id: str, reason: str, *, actor: dict | None = None) -> InvocationRecord:
        """Cancel unless already final; a running invocation is fenced out of its next commit. ``actor``
        (``{principal, client}``, worker.records.audit) is recorded as who cancelled, in the same script call; the
        AgentTool child sessions the invocation made are deleted after (worker.records.child_sessions)."""
        where = await self.locate(invocation_id)
        shard = self.shard(where)
        now = time.time()
        entry = audit.entry("cancel", actor, now, reason=reason)
        detail = {"reason": reason, **({"cancelledBy": audit.who(entry)} if entry is not None else {})}
        error = {"type": "InvocationCancelledError", "message": reason}
        fields = encode_fields({"cancel_reason": reason, "error": error, "finished_at": now})
        reply = await CANCEL(
            self.mux, record=self.record_key(invocation_id, where),
            **self.session_script_keys(where, "queue", "lease", "fence", "stream", "active", "session_meta"),
            settled=keys.invocation_settled(where.app, where.user, invocation_id),
            journal=keys.invocation_journal(where.app, where.user, invocation_id),
            parked=keys.user_parked(where.app, where.user), webhook_due=keys.webhook_due(shard),
            webhook_outbox=keys.webhook_outbox(shard), **self.inbox_script_keys(where, shard),
            **self.reaper_script_keys(shard), app_audit=self._app_audit_key(where, entry),
            invocation_id=invocation_id, now=now, status_data=status_data("cancelled", detail), **self.stream_trim,
            **audit.script_args(entry, where.user, invocation_id), fields=fields)
        if reply[0] == "gone":
            raise InvocationNotFoundError(f"invocation {invocation_id!r} does not exist")
        if reply[0] == "final":
            raise InvalidTransitionError(f"invocation {invocation_id!r} is already {reply[1]}; it cannot be cancelled")
        await self._index_audit(where, entry, invocation_id)
        await child_sessions.delete_children(self, where.app, where.user, where.session, invocation_id)
        if reply[2]:
            await self.dispatch_next(reply[2])
        record = await self.get(invocation_id)
        if record.webhook:  # its notification is queued: on a Cluster, its shard is marked for delivery
            for command in webhooks_due.marks(shard, now * 1000):
                await self.mux.execute_command(*command)
        return record

    def _app_audit_key(self, where: Where, entry: audit.AuditEntry | None) -> str | None:
        """The app's audit index when the script can write it (one node: any key; Cluster: another slot)."""
        return keys.app_audit(where.app) if entry is not None and not self.clients.is_cluster else None

    async def _index_audit(self, where: Where, entry: audit.AuditEntry | None, invocation_id: str) -> None:
        """On Redis Cluster the app's audit index is written after the script (its key is in another slot)."""
        if entry is not None and self.clients.is_cluster:
            member = audit.script_args(entry, where.user, invocation_id)["audit_member"]
            await self.mux.execute_command("ZADD", keys.app_audit(where.app), "NX", _ms(entry.at), member)

    # --- sessions ---

    async def create_session(self, app: str, user: str, session_id: str | None = None,
                             state: dict | None = None):
        """Create a session (its idle deadline registered when sessions expire); SessionExistsError on a taken id."""
        session = await self.session_service.create_session(app_name=app, user_id=user, state=state,
                                                            session_id=session_id)
        idle = self._idle_commands(app, user, session.id)
        if idle:  # on a Cluster marked for the reaper too (an enqueue's dispatch mark is earlier: it needs none)
            await self.batch(*idle, *self.due_marks(self.shard(Where(app=app, user=user, session=session.id)),
                                                    int(idle[0][2])))
        return session

    async def delete_session(self, app: str, user: str, session_id: str, reason: str | None = None, *,
                             actor: dict | None = None) -> list[str]:
        """Delete every key of the session and cancel its invocations that are not final (the ids)."""
        from worker.records.deletion import delete_session

        return await delete_session(self, app, user, session_id, reason or f"session {session_id!r} was deleted",
                                    actor)

    def idle_commands(self, app: str, user: str, session_id: str) -> list[tuple]:
        """``_idle_commands`` for worker.records.double_texting, which writes an enqueue's companions itself."""
        return self._idle_commands(app, user, session_id)

    def _idle_commands(self, app: str, user: str, session_id: str) -> list[tuple]:
        """The session's idle-expiry check, pushed to now + the session TTL (none without one)."""
        if self.retention.session_idle_s is None:
            return []
        shard = self.shard(Where(app=app, user=user, session=session_id))
        return [("ZADD", keys.session_expiries(shard), _ms(time.time() + self.retention.session_idle_s),
                 dumps([app, user, session_id]))]

    def due_marks(self, shard: str, due_ms: int) -> list[tuple]:
        """After an entry due at ``due_ms`` in a Cluster shard's reaper or sweeper sets: the mark that makes the
        reaper read the shard by then (``worker.config.due_shards``); nothing on one node."""
        return [due_shards.mark(shard, due_ms)] if shard else []

    async def dispatch_next(self, invocation_id: str) -> None:
        """Send the run job of a session's new queue head (or of a resumed or reaped invocation), after its
        dispatch-watchdog entry (which covers a send that never arrives)."""
        shard = self.shard(await self.locate(invocation_id)) if self.clients.is_cluster else ""
        due_ms = _ms(time.time() + DISPATCH_GRACE_S)
        if shard:
            for reply in await self.batch(("ZADD", keys.dispatch_due(shard), due_ms, invocation_id),
                                          *self.due_marks(shard, due_ms)):
                if isinstance(reply, Exception):
                    raise reply
        else:
            await self.mux.execute_command("ZADD", keys.dispatch_due(shard), due_ms, invocation_id)
        await self.dispatcher.send(invocation_id, self.where_args(invocation_id))


QUEUED = json.dumps({"status": "queued", "detail": {}}, separators=(",", ":"))
"""The status entry of a new invocation (its data as streams carry it)."""


def status_data(status: str, detail: dict | None = None) -> str:
    """The ``data`` field of a status stream entry."""
    return dumps({"status": status, "detail": detail or {}})


def _put_bounded(cache: dict, key: str, value: Any) -> None:
    """``cache[key] = value``, forgetting the oldest entry beyond MAX_LOCATIONS."""
    cache[key] = value
    if len(cache) > MAX_LOCATIONS:
        del cache[next(iter(cache))]


def pairs(flat: list) -> dict[str, str]:
    """A flat ``[field, value, ...]`` reply as a dict."""
    return dict(zip(flat[::2], flat[1::2], strict=True))


def _ms(seconds: float) -> int:
    return int(seconds * 1000)
