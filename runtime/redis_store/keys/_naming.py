"""How agentq names its Redis keys: the prefix, escaping, hash tags, and sharded cross-session sets."""

from __future__ import annotations

import functools
from urllib.parse import quote

PREFIX = "agentq:"
"""Every key agentq writes starts with this."""


@functools.lru_cache(maxsize=8192)
def _part(value: str) -> str:
    # Escape characters that would break the hash tag or the key structure (cached: every commit builds keys).
    # Sized for the ids of the invocations one worker has in flight: every new session and invocation id
    # adds an entry, so a bigger cache kept growing a long-lived worker for hundreds of thousands of them.
    return quote(value, safe="")


def user_tag(app_name: str, user_id: str) -> str:
    """The hash tag shared by a user's sessions and user state."""
    return "{" + _part(app_name) + "/" + _part(user_id) + "}"


def app_tag(app_name: str) -> str:
    """The hash tag of app-wide keys."""
    return "{" + _part(app_name) + "}"


def _session_base(app_name: str, user_id: str, session_id: str) -> str:
    return f"{PREFIX}{user_tag(app_name, user_id)}:s:{_part(session_id)}"


def sharded(name: str, shard: str) -> str:
    """A cross-session set the status scripts update together with a session's keys.

    On one node (``shard`` ''): the one global key, ``agentq:<name>``. On Redis Cluster every user's
    invocations have their own copy in the user's hash slot, ``agentq:{<shard>}:<name>``, where ``shard`` is the
    slot's tag (``worker.config.shards``), so no script crosses slots; the reaper walks the shards in use."""
    return f"{PREFIX}{name}" if not shard else f"{PREFIX}{{{shard}}}:{name}"
