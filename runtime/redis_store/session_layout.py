"""Which keys each session script touches, named as its ``.lua`` header names them, and how replies become a
Session.

Key maps are cached (read-only views): quoting the names costs about a tenth of a commit's client time.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from types import MappingProxyType

from ..events import Event
from ..sessions.session import Session
from . import keys
from .codec import decode_state
from .slots import shard_of


@functools.lru_cache(maxsize=4096)
def create_keys(app: str, user: str, sid: str, app_apart: bool) -> Mapping[str, str]:
    """KEYS of CREATE_SESSION (sessions/create_session.lua); app state left out when kept apart (on a Cluster,
    where the app's user set is the copy in the user's shard)."""
    own = {"meta": keys.session_meta(app, user, sid), "state": keys.session_state(app, user, sid),
           "user_state": keys.user_state(app, user), "user_sessions": keys.user_sessions(app, user),
           "session_ids": keys.user_session_ids(app, user),
           "app_users": keys.app_users(app, shard_of(app, user, cluster=app_apart))}
    if not app_apart:
        own["app_state"] = keys.app_state(app)
    return MappingProxyType(own)


@functools.lru_cache(maxsize=4096)
def read_keys(app: str, user: str, sid: str, app_apart: bool) -> Mapping[str, str]:
    """KEYS of READ_SESSION and READ_SESSION_SINCE (sessions/read_session*.lua)."""
    own = {"meta": keys.session_meta(app, user, sid), "state": keys.session_state(app, user, sid),
           "user_state": keys.user_state(app, user), "events": keys.session_events(app, user, sid),
           "times": keys.session_event_times(app, user, sid)}
    if not app_apart:
        own["app_state"] = keys.app_state(app)
    return MappingProxyType(own)


@functools.lru_cache(maxsize=4096)
def commit_keys(app: str, user: str, sid: str, app_apart: bool) -> Mapping[str, str]:
    """KEYS of COMMIT_EVENT (sessions/commit_event.lua)."""
    own = {**read_keys(app, user, sid, app_apart), "stream": keys.session_stream(app, user, sid),
           "fence_meta": keys.session_meta(app, user, sid), "fence": keys.session_fence(app, user, sid),
           "active": keys.session_active_invocations(app, user, sid)}
    return MappingProxyType(own)


@functools.lru_cache(maxsize=4096)
def lifecycle_keys(app: str, user: str, sid: str) -> Mapping[str, str]:
    """The session's keys the invocation scripts take (``lua/invocations/``), named as their headers name them;
    a caller passes the ones its script takes (``InvocationStore.session_script_keys``). The fencing token is the
    ``fence`` field of ``session_meta``; ``fence`` is the key sessions claimed before that field kept it in
    (``lua/lib/fence.lua``)."""
    return MappingProxyType({
        "queue": keys.session_queue(app, user, sid), "lease": keys.session_lease(app, user, sid),
        "fence": keys.session_fence(app, user, sid), "stream": keys.session_stream(app, user, sid),
        "active": keys.session_active_invocations(app, user, sid), "session_meta": keys.session_meta(app, user, sid)})


def session_keys(app: str, user: str, sid: str) -> tuple[str, ...]:
    """The keys of one session's history and state (what the session service's delete_session removes; the
    worker's deletion also removes its queue, lease, fence and artifacts and cancels its invocations)."""
    return (keys.session_meta(app, user, sid), keys.session_state(app, user, sid), keys.session_events(app, user, sid),
            keys.session_event_times(app, user, sid), keys.session_stream(app, user, sid),
            keys.session_active_invocations(app, user, sid), keys.session_fence(app, user, sid))


def build_session(meta: dict[str, str], session_state, app_state, user_state, events: list[Event]) -> Session:
    """A Session from stored parts; state merges session, app and user scopes (JSON-decoded, so a fresh copy)."""
    state = decode_state(session_state)
    state.update(decode_state(app_state))
    state.update(decode_state(user_state))
    return Session.model_construct(
        id=meta["id"], app_name=meta["app"], user_id=meta["user"], state=state, events=events,
        last_update_time=float(meta["last_update_time"]), version=int(meta["version"]),
    )
