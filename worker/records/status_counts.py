"""Invocations counted by status, exactly, for /metrics, the ops summary and ``agentq status``.

The status scripts keep the counts (``keys.status_counts``, ``lua/lib/status_counts.lua``) in the same step as
each transition, from the enqueue that creates a record to the sweep that removes it (``lua/invocations/
forget.lua``), as *flows*: one field per scope and transition (``<scope><from>><to>``, ``''`` for no status)
that only grows, so a transition costs one HINCRBY per scope. The count of a status is the flows into it less
the flows out of it, worked out here from one HMGET per shard in use (one on a single node), whatever the
number of invocations. Three scopes: some users of some apps, some apps (the two the scripts write), or the
whole deployment: the sum of the apps listed in the hash's ``!apps``.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from typing import Any

from runtime.redis_store import keys
from runtime.redis_store.codec import text
from runtime.statuses import STATUSES
from worker.config.shards import in_use

log = logging.getLogger("agentq.status_counts")

MOVES: tuple[tuple[str, str], ...] = (
    ("queued", "running"), ("queued", "cancelled"), ("queued", "failed"),
    ("running", "parked"), ("running", "completed"), ("running", "failed"), ("running", "cancelled"),
    ("running", "queued"),
    ("parked", "queued"), ("parked", "cancelled"), ("parked", "failed"),
)
"""The moves between two statuses that the scripts count in one flow (``COUNT_MOVES`` in the Lua library, in
the same order); any other one is counted there as a removal and a creation."""

FLOWS: tuple[tuple[str, str], ...] = (
    *(("", status) for status in STATUSES), *((status, "") for status in STATUSES), *MOVES)
"""Every (from, to) the scripts count, ``''`` for no status (created, removed): a scope's fields, in order."""

APPS = "!apps"
"""The field of ``keys.status_counts`` listing the apps counted in it, escaped, as ``' <app> <app> '``."""

UNDERFLOWS = "!underflows"
"""The field of ``keys.status_counts`` where the previous layout (per-status counters, layout 1) counted the
transitions that would have moved a counter below zero; kept through the upgrade, part of ``count_underflows``."""


def app_scope(app: str) -> str:
    """The field prefix of one app's flows (its name escaped as in the keys' hash tags, as the scripts do)."""
    return f"a:{keys.app_tag(app)[1:-1]}:"


def user_scope(app: str, user: str) -> str:
    """The field prefix of one user's flows in one app."""
    return f"u:{keys.user_tag(app, user)[1:-1]}:"


@functools.lru_cache(maxsize=4096)
def flow_fields(scope: str) -> tuple[str, ...]:
    """A scope's flow fields, in ``FLOWS`` order (the same few scopes are read again and again)."""
    return tuple(f"{scope}{start}>{end}" for start, end in FLOWS)


def net_counts(values: list[Any]) -> dict[str, int]:
    """Every status's count from one scope's flow values (HMGET replies in ``FLOWS`` order, None: 0); below
    zero only through a bug (``count_underflows`` finds those)."""
    counts = dict.fromkeys(STATUSES, 0)
    for (start, end), value in zip(FLOWS, values, strict=True):
        if value is not None:
            n = int(value)
            if start:
                counts[start] -= n
            if end:
                counts[end] += n
    return counts


def listed_apps(raw: Any) -> list[str]:
    """The escaped app names of an ``!apps`` value (None: none yet)."""
    return text(raw).split() if raw is not None else []


def scopes_of(apps: list[str] | None, users: list[str] | None) -> list[str] | None:
    """The scopes whose counts add up to what was asked: None for every app (``!apps`` says which)."""
    if apps is None:
        return None
    if users is None:
        return [app_scope(app) for app in apps]
    return [user_scope(app, user) for app in apps for user in users]


_listed: dict[str, str] = {}
"""The ``!apps`` each status counts key had at this process's last read of every app: the next read asks for
those apps' flows in the same HMGET as ``!apps`` itself, and only when ``!apps`` changed meanwhile (a new
app) reads again."""


async def _scope_counts(redis: Any, key: str, scopes: list[str] | None) -> tuple[list[dict[str, int]], int]:
    """Each scope's counts in one shard's hash, every listed app's when ``scopes`` is None, and the previous
    layout's ``!underflows`` there. One HMGET (two when an app was added since this process last looked)."""
    while True:
        listed = _listed.get(key, "") if scopes is None else ""
        asked = [f"a:{app}:" for app in listed.split()] if scopes is None else scopes
        values = await redis.hmget(key, [APPS, UNDERFLOWS, *(field for scope in asked for field in flow_fields(scope))])
        now_listed = text(values[0]) if values[0] is not None else ""
        if scopes is None and now_listed != listed:
            _listed[key] = now_listed
            continue
        per = len(FLOWS)
        return [net_counts(values[2 + n * per : 2 + (n + 1) * per]) for n in range(len(asked))], int(values[1] or 0)


async def _every_shard(redis: Any, cluster: bool, scopes: list[str] | None) -> list[tuple[list[dict[str, int]], int]]:
    shards = await in_use(redis, cluster=cluster)
    return await asyncio.gather(*(_scope_counts(redis, keys.status_counts(shard), scopes) for shard in shards))


async def count_by_status(redis: Any, *, cluster: bool, apps: list[str] | None = None,
                          users: list[str] | None = None) -> dict[str, int]:
    """Every status with how many invocations have it now: of every app (``apps`` None), of those ``apps``
    (``users`` None), or of those ``users`` in ``apps``. One HMGET per shard. A count below zero (a bug) reads
    as 0 and is logged."""
    counts = dict.fromkeys(STATUSES, 0)
    scopes = scopes_of(apps, users)
    if scopes == []:
        return counts
    for per_scope, _ in await _every_shard(redis, cluster, scopes):
        for scope_counts in per_scope:
            for status, n in scope_counts.items():
                if n < 0:
                    log.warning("status count %r is below zero (%d): read as 0", status, n)
                counts[status] += max(n, 0)
    return counts


async def count_underflows(redis: Any, *, cluster: bool) -> int:
    """How many app status counts are below zero now (a bug), over every shard in use, plus the previous
    layout's ``!underflows``; 0 when the counts are exact. Checked at read time: a transition adds to one
    flow per scope and reads none."""
    return sum(sum(n < 0 for counts in per_scope for n in counts.values()) + underflows
               for per_scope, underflows in await _every_shard(redis, cluster, None))


def every_scope_below_zero(fields: dict[str, str]) -> dict[str, int]:
    """``'<scope><status>'`` -> its count, for every count below zero in one shard's whole hash (HGETALL,
    decoded): the check of every scope, users' included, that tests run after each transition they make."""
    flows: dict[str, dict[str, int]] = {}
    for field, value in fields.items():
        if field.startswith("!") or ">" not in field:
            continue
        scope_and_start, _, end = field.rpartition(">")
        scope, _, start = scope_and_start.rpartition(":")
        flows.setdefault(scope + ":", {})[f"{start}>{end}"] = int(value)
    below = {}
    for scope, by_flow in flows.items():
        for status, n in net_counts([by_flow.get(f"{start}>{end}") for start, end in FLOWS]).items():
            if n < 0:
                below[scope + status] = n
    return below
