"""Operations at a glance: invocations by status, run jobs waiting, workers alive (``GET /ops/summary``).

Counts cover what the caller's key may see. Statuses are counted over at most ``SCAN_LIMIT`` invocation records
(``sampled`` says when there were more), except ``parked``, which is exact (the users' parked indexes). Queue
depth and workers are the deployment's: with no worker alive a queued invocation waits, which a page must say.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from fastapi import APIRouter, Depends

from ..auth import Caller
from ..deps import Services, get_caller, get_services, get_settings
from ..schemas import WireModel
from ..settings import ApiSettings
from ..stats import STATUSES
from .inbox import visible_pairs

router = APIRouter(tags=["ops"])

SCAN_LIMIT = 5_000
"""Invocation records counted per request, at most."""


class WorkerOut(WireModel):
    """A worker that beat recently."""

    name: str
    last_beat: float
    apps: list[str]


class SummaryOut(WireModel):
    """GET /ops/summary."""

    counts: dict[str, int]
    sampled: bool
    queue_depth: int
    workers_alive: int
    workers: list[WorkerOut]


@router.get("/ops/summary")
async def summary(
    caller: Caller = Depends(get_caller),
    settings: ApiSettings = Depends(get_settings),
    services: Services = Depends(get_services),
) -> SummaryOut:
    """Invocations by status (those the key may see), the run queue's depth, and the workers alive."""
    from worker.dispatch import QUEUE
    from worker.inbox import fingerprint
    from worker.workers_alive import alive_workers

    pairs = await visible_pairs(services, settings, caller, None, None)
    redis = services.redis

    def visible(app: str, user: str) -> bool:
        return (not settings.app_names or app in settings.app_names) and caller.allows(app, user)

    counts, sampled = await _status_counts(redis, visible)
    counts["parked"], _ = await fingerprint(redis, pairs)
    workers = await alive_workers(redis)
    return SummaryOut(
        counts=counts, sampled=sampled, queue_depth=await redis.llen(QUEUE), workers_alive=len(workers),
        workers=[WorkerOut(name=w.name, last_beat=w.last_beat, apps=w.apps) for w in workers],
    )


async def _status_counts(redis: Any, visible) -> tuple[dict[str, int], bool]:
    """Statuses of up to SCAN_LIMIT visible invocations (from the id -> place index), and whether there were more."""
    from runtime.redis_store import keys

    found: list[str] = []
    sampled = False
    async for invocation_id, raw in redis.hscan_iter(keys.invocation_index(), count=500):
        app, user, _session = json.loads(raw)
        if visible(app, user):
            if len(found) >= SCAN_LIMIT:
                sampled = True
                break
            found.append(keys.invocation(app, user, _text(invocation_id)))
    pipe = redis.pipeline(transaction=False)
    for key in found:
        pipe.hget(key, "status")
    statuses = Counter(_text(status) for status in (await pipe.execute() if found else []) if status is not None)
    return {status: statuses.get(status, 0) for status in STATUSES}, sampled


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
