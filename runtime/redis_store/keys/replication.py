"""Keys of replication checks: the mark a Redis Cluster ``WAIT`` is anchored on."""

from __future__ import annotations

import re

from ._naming import PREFIX

_HASH_TAG = re.compile(r"\{([^}]+)\}")


def replication_mark(key: str) -> str:
    """String (short-lived): written in ``key``'s hash slot right before a ``WAIT`` on Redis Cluster.

    ``WAIT`` counts the replicas that have everything up to the last write of the connection it runs on, and
    a Cluster client's connections are pooled per node, so the connection that waits writes this mark first:
    the replicas that have it have every earlier write of that master (``runtime.redis_store.replication``).
    It shares ``key``'s hash tag, so it lives on the master that took the write."""
    tag = _HASH_TAG.search(key)
    if tag is None:
        return f"{PREFIX}{{{key}}}:replicated"
    return f"{PREFIX}{{{tag.group(1)}}}:replicated"
