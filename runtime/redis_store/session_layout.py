"""Which keys each session script touches, in the order the scripts expect, and how replies become a Session.

Key lists are cached: quoting the names costs about a tenth of a commit's client time.
"""

from __future__ import annotations

import functools

from ..events import Event
from ..sessions.session import Session
from . import keys
from .codec import decode_state


@functools.lru_cache(maxsize=4096)
def create_keys(app: str, user: str, sid: str, app_apart: bool) -> tuple[str, ...]:
    """KEYS of CREATE_SESSION: meta, state, user state, user's sessions (set and sorted), [app state, app users]."""
    own = (keys.session_meta(app, user, sid), keys.session_state(app, user, sid), keys.user_state(app, user),
           keys.user_sessions(app, user), keys.user_session_ids(app, user))
    return own if app_apart else (*own, keys.app_state(app), keys.app_users(app))


@functools.lru_cache(maxsize=4096)
def read_keys(app: str, user: str, sid: str, app_apart: bool) -> tuple[str, ...]:
    """KEYS of READ_SESSION: meta, state, user state, events, event times, [app state]."""
    own = (keys.session_meta(app, user, sid), keys.session_state(app, user, sid), keys.user_state(app, user),
           keys.session_events(app, user, sid), keys.session_event_times(app, user, sid))
    return own if app_apart else (*own, keys.app_state(app))


@functools.lru_cache(maxsize=4096)
def commit_keys(app: str, user: str, sid: str, app_apart: bool) -> tuple[str, ...]:
    """KEYS of COMMIT_EVENT: meta, state, user state, events, event times, stream, fence, active, [app state]."""
    own = (keys.session_meta(app, user, sid), keys.session_state(app, user, sid), keys.user_state(app, user),
           keys.session_events(app, user, sid), keys.session_event_times(app, user, sid),
           keys.session_stream(app, user, sid), keys.session_fence(app, user, sid),
           keys.session_active_invocations(app, user, sid))
    return own if app_apart else (*own, keys.app_state(app))


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
