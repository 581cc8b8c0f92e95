"""Operations at a glance: invocations by status, run jobs waiting, workers alive (``GET /ops/summary``).

Counts cover what the caller's key may see. Statuses are counted over at most ``worker.status_counts.SCAN_LIMIT`` invocation records
(``sampled`` says when there were more), except ``parked``, which is exact (the users' parked indexes). Queue
depth and workers are the deployment's: with no worker alive a queued invocation waits, which a page must say.
"""

from __future__ import annotations

from fastapi import APIRouter, Depends

from ..auth import Caller
from ..deps import Services, get_caller, get_services, get_settings
from ..schemas import WireModel
from ..settings import ApiSettings
from .inbox import visible_pairs

router = APIRouter(tags=["ops"])

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
    pairs = await visible_pairs(services, settings, caller, None, None)  # 503 without a queue
    client = services.queue

    def visible(app: str, user: str) -> bool:
        return (not settings.app_names or app in settings.app_names) and caller.allows(app, user)

    counts, sampled = await client.ops.status_counts(visible)
    counts["parked"], _ = await client.inbox.fingerprint(pairs)
    workers = await client.ops.alive_workers()
    return SummaryOut(
        counts=counts, sampled=sampled, queue_depth=await client.ops.queue_depth(), workers_alive=len(workers),
        workers=[WorkerOut(name=w.name, last_beat=w.last_beat, apps=w.apps) for w in workers],
    )
