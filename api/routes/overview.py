"""Operations at a glance: invocations by status, run jobs waiting, workers alive (``GET /ops/summary``).

Counts cover what the caller's key may see, exactly, from the counters the status scripts keep
(``worker.records.status_counts``): the deployment's, its apps', or its users' in those apps, whatever the number of
invocations. ``sampled`` is always false (counts were once sampled; the field stays for clients that read it).
Queue depth and workers are the deployment's: with no worker alive a queued invocation waits, which a page must
say.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends

from api.access.auth import WILDCARD, Caller
from api.deps import Services, get_caller, get_services, get_settings
from api.routes.invocations import queue_of
from api.settings import ApiSettings
from api.views.schemas import WireModel

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
    client = queue_of(services)  # 503 without a queue
    apps, users = await _scope(client, settings, caller)
    counts = await client.ops.status_counts(apps, users)
    workers = await client.ops.alive_workers()
    return SummaryOut(
        counts=counts, sampled=False, queue_depth=await client.ops.queue_depth(settings.app_names), workers_alive=len(workers),
        workers=[WorkerOut(name=w.name, last_beat=w.last_beat, apps=w.apps) for w in workers],
    )


async def _scope(client: Any, settings: ApiSettings, caller: Caller) -> tuple[list[str] | None, list[str] | None]:
    """The apps (None: all) and users (None: all) whose invocations the caller may count."""
    users = None if caller.grant is None or WILDCARD in caller.grant.users else list(caller.grant.users)
    if caller.grant is None or WILDCARD in caller.grant.apps:
        if not settings.app_names and users is None:
            return None, None
        apps = settings.served.names() or await client.ops.announced_apps()
    else:
        apps = caller.grant.apps
    return [name for name in apps if caller.allows_app(name) and settings.served.serves(name)], users
