"""RedisSessionService: sessions in Redis, one EVALSHA round trip per committed event.

Layout (see ``runtime/redis_store/keys/``): a meta hash (version, clock), a session-state hash, a user-state
hash, an events list with a sorted set of timestamps beside it, and the session's stream. The commit script
checks the fencing token and the writer's version, appends, applies the delta by prefix, bumps the version
and XADDs to the stream, all or nothing; a commit re-sent after a lost reply is recognised, not doubled.
On Redis Cluster ``app:`` state lives under another hash tag, so an event carrying an ``app:`` delta takes a
second trip (after the commit); on one node it rides along. The scripts go over one pipelined connection per
event loop (``redis_store/mux.py``); list and delete use redis-py.
"""

from __future__ import annotations

import asyncio
import time
from contextvars import ContextVar
from typing import Any, NamedTuple

from .._lent import LentList
from ..errors import FencedOutError, SessionExistsError, StaleSessionError
from ..events import Event
from ..ids import new_session_id
from ..redis_store import keys
from ..redis_store.codec import encode_pairs, flat_to_dict, json_mapping, text
from ..redis_store.connection import LoopClients
from ..redis_store.mux import queue_command
from ..redis_store.scripts import COMMIT_EVENT, CREATE_SESSION, READ_SESSION, READ_SESSION_SINCE
from ..redis_store.session_layout import build_session, commit_keys, create_keys, read_keys, session_keys
from ..redis_store.slots import shard_of
from ..redis_store.streams import DEFAULT_STREAM_MAXLEN, trim_args
from .base_session_service import BaseSessionService, set_fields
from .history_cache import CachedHistory, HistoryCache, digest, estimated_bytes
from .session import GetSessionConfig, ListSessionsResponse, Session
from .state import check_serialisable, split_by_scope

_Held = tuple[CachedHistory | None]
"""A read through the history cache: the cached entry it asked to be checked (None when there was none)."""



# Fencing: the lease an asyncio task writes under, and the fence and token each of its writes presents.
# A worker's claim bumps its session's fence (the ``fence`` field of its meta hash; ``lua/lib/fence.lua``) and runs the invocation in a task that carries the token
# (``current_fence``) and the session whose lease it holds (``current_lease_session``). Every write of that task
# that must not outlive the lease (an event commit here, an artifact save in ``artifacts.redis_artifact_service``)
# checks the token against the fence in the same script as the write, so a cancelled, rewound or superseded
# run writes nothing more.
#
# A run writes to more than its own session: an AgentTool runs its agent in a child session of the same app and
# user (``tools.agent_tool_session``). A child is part of its parent's invocation, not a writer of its own, so its
# writes are fenced by the *parent's* lease: cancelling the parent, or a worker taking it over, fences the child
# out at once, and the child needs no claim, heartbeat or reaper entry. The parent's fence and the child's
# keys share the user's hash tag, so the check stays in one script on a Redis Cluster.

current_fence: ContextVar[int | None] = ContextVar("agentq_current_fence", default=None)
"""The fencing token of the session lease the current asyncio task holds; None: write without a fence check
(in-process runs, the API, tests). A write that presents a token that is not the session's current one is
refused (``FencedOutError``) and writes nothing."""


class FencePlace(NamedTuple):
    """Where a session's fencing token is kept: the ``fence`` field of its meta hash, or, for a session claimed
    before that field existed and not since, its own fence key (``lua/lib/fence.lua``). Scripts take both."""

    fence_meta: str
    fence: str

    def __str__(self) -> str:
        return f"{self.fence_meta!r} (field 'fence'; {self.fence!r} before its first claim since)"


def fence_place(app_name: str, user_id: str, session_id: str) -> FencePlace:
    """The fence of this session, as the fenced scripts take it (``fence_meta=``, ``fence=``)."""
    return FencePlace(keys.session_meta(app_name, user_id, session_id),
                      keys.session_fence(app_name, user_id, session_id))


class HeldLease(NamedTuple):
    """The session whose lease a task holds, with its token, and what its writes present (made once per run:
    every commit of the run asks for them)."""

    app_name: str
    user_id: str
    session_id: str
    token: int
    fence: FencePlace
    token_text: str


current_lease_session: ContextVar[HeldLease | None] = ContextVar("agentq_lease_session", default=None)
"""The session whose lease the task holds (set by the worker's executor). It applies while ``current_fence`` is
its token; otherwise (None, or a code path that set ``current_fence`` alone, as a rewind does for the session it
holds) the token belongs to the session written."""


def hold_lease(token: int, app_name: str, user_id: str, session_id: str) -> None:
    """Make the current task write under the lease of this session with this token (for the rest of the task)."""
    current_fence.set(token)
    current_lease_session.set(HeldLease(app_name, user_id, session_id, token,
                                        fence_place(app_name, user_id, session_id), str(token)))


def fence_for(app_name: str, user_id: str, session_id: str) -> tuple[FencePlace, str]:
    """The fence and the token (``''``: unchecked) a write to this session presents.

    A session of the same app and user as the held lease (the lease's own, or an AgentTool's child session) is
    fenced by that lease; any other by its own fence, which a token of another session never matches.
    """
    held, token = _held_fence(app_name, user_id)
    return held or fence_place(app_name, user_id, session_id), token


def _held_fence(app_name: str, user_id: str) -> tuple[FencePlace | None, str]:
    """``fence_for`` without building the written session's own keys: ``(None, token)`` when those apply."""
    token = current_fence.get()
    if token is None:
        return None, ""
    held = current_lease_session.get()
    if held is not None and held.token == token and held.user_id == user_id and held.app_name == app_name:
        return held.fence, held.token_text
    return None, str(token)


_claimed_read: ContextVar[list | None] = ContextVar("agentq_claimed_read", default=None)
"""A session read the claim of the current task's run made (``adopt_claimed_read``): ``[key, entry, reply]``,
emptied by the first read that uses it (a list, so tasks that copied the context share it)."""


class RedisSessionService(BaseSessionService):
    """Durable sessions shared by every process that talks to the same Redis.

    Appends to one session from one process are serialised (ParallelAgent branches share a Session
    object); a writer whose session is stale, or whose fencing token is not the current one, is refused.

    ``history_cache_bytes`` (0: off) keeps parsed histories between reads (``sessions.history_cache``), so
    reading a session costs its state plus the events appended since this process last read or wrote it.
    Sessions read then share their older Event objects: treat committed events as read-only (the Runner
    does; ADK's in-memory service shares them too).
    """

    def __init__(
        self,
        url: str | None = None,
        *,
        client=None,
        clients: LoopClients | None = None,
        stream_maxlen: int = DEFAULT_STREAM_MAXLEN,
        stream_max_age_s: float | None = None,
        history_cache_bytes: int = 0,
    ):
        # ``clients``: connections shared with another Redis user of the same loop (the worker's invocation
        # store), so that writes they queue on the pipelined connection are ordered with this service's commits.
        self._clients = clients if clients is not None else LoopClients(url, client)
        self._trim = trim_args(stream_maxlen, stream_max_age_s)
        self._app_apart = self._clients.is_cluster  # app state on another slot: its own round trip
        self._locks: dict[tuple, list] = {}
        self._registered: set[str] = set()
        """Shards this service listed in ``keys.shards()`` already (a Cluster's; one SADD each per process)."""
        self.keep_histories(history_cache_bytes)

    def keep_histories(self, max_bytes: int) -> None:
        """Turn the parsed-history cache on with a budget of ``max_bytes`` (0: off), as ``history_cache_bytes``
        does at construction; for a service built elsewhere (the worker's, made by its invocation store)."""
        self.histories = HistoryCache(max_bytes) if max_bytes > 0 else None

    async def aclose(self) -> None:
        """Close the connections this service opened for the running loop."""
        await self._clients.aclose()

    async def create_session(
        self, *, app_name: str, user_id: str, state: dict[str, Any] | None = None, session_id: str | None = None
    ) -> Session:
        session_id = (session_id or "").strip() or new_session_id()
        if self.histories is not None:
            self.histories.discard((app_name, user_id, session_id))
        check_serialisable(state or {})
        scopes = split_by_scope(state or {})
        now = time.time()
        script_keys = create_keys(app_name, user_id, session_id, self._app_apart)
        state_pairs = [*encode_pairs(scopes["session"]), *encode_pairs(scopes["user"]),
                       *encode_pairs({} if self._app_apart else scopes["app"])]
        if self._app_apart:  # listed before the script writes the user's shard of the app's user set
            await self._register(shard_of(app_name, user_id, cluster=True))
        created = await CREATE_SESSION(self._clients.mux(), **script_keys, session_id=session_id, app=app_name,
                                       user=user_id, now=repr(now), state_pairs=state_pairs)
        if not created:
            raise SessionExistsError(f"session {session_id!r} already exists for app {app_name!r}, user {user_id!r}")
        user_state, app_state = created
        if self._app_apart:
            app_state = await self._write_and_read_app_state(app_name, json_mapping(scopes["app"]))
        meta = {"id": session_id, "app": app_name, "user": user_id, "last_update_time": repr(now), "version": "0"}
        return build_session(meta, json_mapping(scopes["session"]), app_state, user_state, [])

    async def _write_and_read_app_state(self, app_name: str, delta: dict[str, str]) -> list:
        """On a Cluster, where app state has a slot of its own: write ``delta`` to it and read it back, queued back
        to back on its master's mux connection (one key, so one connection: the read sees the write)."""
        mux = self._clients.mux()
        app_key = keys.app_state(app_name)
        written = None
        if delta:
            written = queue_command(mux, "HSET", app_key, *(part for pair in delta.items() for part in pair))
            if not asyncio.isfuture(written):  # no connection yet: a coroutine, sent only once awaited
                await written
                written = None
        state = queue_command(mux, "HGETALL", app_key)
        if written is not None:
            await written
        return await state

    async def _register(self, shard: str) -> None:
        if shard not in self._registered:
            await self._clients.get().sadd(keys.shards(), shard)
            self._registered.add(shard)

    async def _app_users(self, app_name: str) -> list[str]:
        """Every user with a session in the app, sorted (on a Cluster merged over the shards in use)."""
        client = self._clients.get()
        if not self._app_apart:
            return sorted(map(text, await client.smembers(keys.app_users(app_name))))
        shards = sorted(map(text, await client.smembers(keys.shards())))
        async with client.pipeline(transaction=False) as pipe:
            for shard in shards:
                pipe.smembers(keys.app_users(app_name, shard))
            found = await pipe.execute()
        return sorted({text(user) for members in found for user in members})

    async def get_session(
        self, *, app_name: str, user_id: str, session_id: str, config: GetSessionConfig | None = None
    ) -> Session | None:
        key = (app_name, user_id, session_id)
        recent = (config.num_recent_events or 0) if config else 0
        after = config.after_timestamp if config else None
        read, held = self._read(key, config)
        # On a Cluster app state is in a slot of its own: read on its master's mux connection, sent with the script
        app_read = queue_command(self._clients.mux(), "HGETALL", keys.app_state(app_name)) if self._app_apart else None
        reply = await read
        app_state = await app_read if app_read is not None else None
        if reply is None:
            if self.histories is not None:
                self.histories.discard(key)
            return None
        meta, session_state, user_state = flat_to_dict(reply[0]), reply[1], reply[2]
        if app_read is None:
            app_state = reply[3]
        if held is None:
            events = [Event.model_validate_json(raw) for raw in reply[4]]
        else:
            events = self._history(key, held, int(reply[4]), reply[5], int(meta["version"]))
            if events is None:  # the cached list was changed in place meanwhile: read it all again
                self.histories.discard(key)
                return await self.get_session(app_name=app_name, user_id=user_id, session_id=session_id)
        if after is not None:
            # The script starts at the first event at or after `after`; later ones may still be earlier.
            events = [event for event in events if event.timestamp >= after]
            events = events[-recent:] if recent else events
        return build_session(meta, session_state, app_state, user_state, events)

    def claimed_read_args(self, app_name: str, user_id: str, session_id: str) -> tuple[Any, dict[str, object]]:
        """What a claim that reads the session for its run (``invocations/acquire.lua``) presents: the cached copy
        it checks against (the entry, None when there is none or no cache, and what it held then) and the
        script's session keys (but its meta) and ``held_*`` arguments."""
        entry = None if self.histories is None else self.histories.get((app_name, user_id, session_id))
        held = (0, 0, "") if entry is None else (entry.version, entry.count, entry.digest)
        session = read_keys(app_name, user_id, session_id, self._app_apart)
        return (entry, held), {
            "state": session["state"], "user_state": session["user_state"], "events": session["events"],
            "app_state": session.get("app_state"),
            "held_version": held[0], "held_count": held[1], "held_last_sha": held[2]}

    def adopt_claimed_read(self, app_name: str, user_id: str, session_id: str, basis: Any, reply: Any) -> None:
        """Let the current task's first ``get_session`` of this session (without a config) use the read its
        claim made (``reply``, as ``read_session_since.lua`` returns it, against ``basis``, the first value of
        ``claimed_read_args``) instead of a round trip. Nothing else can commit to the session in between (the
        claim holds its lease); a commit through this service drops it anyway, as does a history cache entry
        that changed meanwhile."""
        _claimed_read.set([(app_name, user_id, session_id), basis, reply])

    def _take_claimed_read(self, key: tuple[str, str, str]):
        """The claim's read of ``key`` for ``get_session`` (an awaitable and the held entry, as ``_read``), once;
        None when there is none, or the history cache no longer holds what the claim read against."""
        claimed = _claimed_read.get()
        if not claimed or claimed[0] != key:
            return None
        _, (entry, held), reply = claimed
        claimed.clear()
        if self.histories is None:
            if reply is not None and int(reply[4]) != 0:
                return None
            return _ready(None if reply is None else [*reply[:4], reply[5]]), None
        if self.histories.get(key) is not entry or (
                entry is not None and (entry.version, entry.count, entry.digest) != held):
            return None
        return _ready(reply), (entry,)

    def _read(self, key: tuple[str, str, str], config: GetSessionConfig | None):
        """The read script call for ``get_session`` (a coroutine to await), and what the history cache held when
        it was made (None: not a cached read)."""
        if config is None:
            claimed = self._take_claimed_read(key)
            if claimed is not None:
                return claimed
        script_keys = read_keys(*key, self._app_apart)
        if config is None and self.histories is not None:
            entry = self.histories.get(key)
            held = (0, 0, "") if entry is None else (entry.version, entry.count, entry.digest)
            return READ_SESSION_SINCE(self._clients.mux(), **script_keys, held_version=held[0], held_count=held[1],
                                      held_last_sha=held[2], retry=True), (entry,)
        recent = (config.num_recent_events or 0) if config else 0
        after = config.after_timestamp if config else None
        return READ_SESSION(self._clients.mux(), **script_keys, recent=recent,
                            after="" if after is None else repr(after), retry=True), None

    def _history(self, key: tuple[str, str, str], held: _Held, first: int, raw_events: list[str],
                 version: int) -> LentList | None:
        """The session's events from a cached read: the held entry's first ``first`` events (the script checked
        they are the stored ones) and the rest parsed. The cache's own list is lent when no one else holds it,
        so a long history is not copied for every read; None when that list was changed in place meanwhile."""
        (entry,) = held
        new = [Event.model_validate_json(raw) for raw in raw_events]
        nbytes = sum(map(estimated_bytes, raw_events))
        if first == 0:
            if not self.histories.admit(key):
                return LentList(new)
            last = digest(raw_events[-1]) if raw_events else ""
            return self.histories.put(key, LentList(new), version, last, nbytes).events
        last = digest(raw_events[-1]) if raw_events else entry.digest
        if not entry.intact(first):
            return None
        cached = self.histories.current(entry) and first == entry.count
        if cached and len(entry.events) == first and entry.free():
            entry.events += new
            self.histories.vouch(entry, version, last, nbytes)
            return entry.events
        # Someone still holds the list, or a writer appended what was never committed, or the entry moved on
        # since the read was sent: a copy of the checked prefix (which the cache takes over when it can).
        events = LentList(entry.events[:first])
        events += new
        if cached:
            self.histories.put(key, events, version, last, entry.nbytes + nbytes).derived.update(entry.derived)
        return events

    def history_scratch(self, session: Session) -> dict:
        """The cached history's scratch dict when ``session``'s events start with the cached ones (by identity),
        so what the Runner derived from them in an earlier invocation is found again; else a new dict."""
        entry = None if self.histories is None else self.histories.get((session.app_name, session.user_id,
                                                                         session.id))
        if entry is None or not entry.intact(entry.count):
            return {}
        if session.events is entry.events:
            return entry.derived
        count = entry.count
        if count and (len(session.events) < count or session.events[count - 1] is not entry.events[count - 1]):
            return {}
        return entry.derived

    async def list_sessions(self, *, app_name: str, user_id: str | None = None) -> ListSessionsResponse:
        client = self._clients.get()
        users = [user_id] if user_id is not None else await self._app_users(app_name)
        async with client.pipeline(transaction=False) as pipe:
            for user in users:
                pipe.smembers(keys.user_sessions(app_name, user))
            session_ids = [sorted(map(text, ids)) for ids in await pipe.execute()]
        async with client.pipeline(transaction=False) as pipe:
            pipe.hgetall(keys.app_state(app_name))
            for user, ids in zip(users, session_ids, strict=True):
                pipe.hgetall(keys.user_state(app_name, user))
                for sid in ids:
                    pipe.hgetall(keys.session_meta(app_name, user, sid))
                    pipe.hgetall(keys.session_state(app_name, user, sid))
            replies = iter(await pipe.execute())
        app_state = next(replies)
        sessions = []
        for ids in session_ids:
            user_state = next(replies)
            for _ in ids:
                meta, session_state = next(replies), next(replies)
                if meta:  # deleted between the two trips
                    sessions.append(build_session({text(k): text(v) for k, v in meta.items()}, session_state,
                                             app_state, user_state, []))
        return ListSessionsResponse(sessions=sessions)

    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        async with self._clients.get().pipeline(transaction=True) as pipe:
            pipe.delete(*session_keys(app_name, user_id, session_id))
            pipe.srem(keys.user_sessions(app_name, user_id), session_id)
            pipe.zrem(keys.user_session_ids(app_name, user_id), session_id)
            await pipe.execute()
        if self.histories is not None:
            self.histories.discard((app_name, user_id, session_id))

    async def append_event(self, session: Session, event: Event) -> Event:
        if event.partial:
            return event
        self._prepare_event(event)
        # Serialise appends to one session within this loop: concurrent branches share the Session object,
        # and each commit must carry the version the previous one produced.
        lock_key = (asyncio.get_running_loop(), session.app_name, session.user_id, session.id)
        entry = self._locks.get(lock_key)
        if entry is None:
            entry = self._locks[lock_key] = [asyncio.Lock(), 0]
        entry[1] += 1
        try:
            async with entry[0]:
                await self._commit(session, event)
        finally:
            entry[1] -= 1
            if entry[1] == 0:
                del self._locks[lock_key]
        return event

    @property
    def stream_trim(self) -> dict[str, int]:
        """The stream trimming arguments every commit passes (``maxlen``, ``slack``, ``max_age_ms``)."""
        return dict(self._trim)

    async def _commit(self, session: Session, event: Event) -> None:
        app, user, sid = session.app_name, session.user_id, session.id
        claimed = _claimed_read.get()
        if claimed and claimed[0] == (app, user, sid):
            claimed.clear()  # the claim's read is not the stored session any more
        scopes = split_by_scope(event.actions.state_delta) if event.actions.state_delta else _NO_DELTA
        held, fence = _held_fence(app, user)  # an AgentTool's child: its parent's lease (see above)
        script_keys = commit_keys(app, user, sid, self._app_apart)
        if held is not None and held.fence_meta != script_keys["fence_meta"]:
            script_keys = {**script_keys, **held._asdict()}
        raw = event.to_json()
        # Retrying is safe: a commit that landed before its reply was lost is recognised and not repeated.
        reply = await COMMIT_EVENT(
            self._clients.mux(), **script_keys, expected_version=session.version,
            fence_token=fence, event_json=raw,
            timestamp=repr(event.timestamp), invocation_id=event.invocation_id, **self._trim,
            state_pairs=_delta_args(scopes, self._app_apart), retry=True)
        outcome = text(reply[0])
        if outcome == "fenced":
            raise FencedOutError(
                f"session {sid!r}: fencing token {int(fence)!r} is not the current one ({text(reply[1]) or None!r}), "
                f"checked at {FencePlace(script_keys['fence_meta'], script_keys['fence'])}"
            )
        if outcome == "stale":
            raise StaleSessionError(
                f"session {sid!r} is at version {int(reply[1])}, but the writer holds version {session.version}; "
                "reload it with get_session"
            )
        if outcome == "ok" and self._app_apart and scopes["app"]:
            await self._clients.get().hset(keys.app_state(app), mapping=json_mapping(scopes["app"]))
        # 'missing': the session was deleted (or never stored); like ADK, only the live object changes.
        self._apply_to_live_session(session, event)
        if outcome == "ok":
            set_fields(session, version=int(reply[1]))
            if self.histories is not None:
                self._adopt((app, user, sid), session, event, raw, int(reply[1]))

    def _adopt(self, key: tuple[str, str, str], session: Session, event: Event, raw: str, version: int) -> None:
        """Vouch for a committed event in the cached history when that was the stored history right before it
        (versions move by one per event): the next read need not fetch and parse it back. A session lent the
        cached list has appended the event to it already."""
        entry = self.histories.get(key)
        if entry is None or entry.version != version - 1 or entry.events.changed:
            return
        events = entry.events
        if session.events is events:
            if len(events) == entry.count + 1 and events[-1] is event:
                self.histories.vouch(entry, version, digest(raw), estimated_bytes(raw))
        elif len(events) == entry.count and entry.free():
            events.append(event)
            self.histories.vouch(entry, version, digest(raw), estimated_bytes(raw))


_NO_DELTA: dict[str, dict[str, Any]] = {"app": {}, "user": {}, "session": {}}
_NO_DELTA_ARGS = ("0", "0", "0")


def _delta_args(scopes: dict[str, dict[str, Any]], app_apart: bool) -> list[str] | tuple[str, ...]:
    """The commit script's pair lists for session, user and app state (app state apart: sent on its own)."""
    if scopes is _NO_DELTA:  # most events change no state
        return _NO_DELTA_ARGS
    return [*encode_pairs(scopes["session"]), *encode_pairs(scopes["user"]),
            *encode_pairs({} if app_apart else scopes["app"])]


async def _ready(value: Any) -> Any:
    """``value``, as an awaitable (a read that needed no round trip)."""
    return value
