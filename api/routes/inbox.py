"""The approver's inbox: every parked invocation the caller's key may see, across apps, users and sessions.

``GET /inbox`` pages them newest first (``?app=``, ``?user=`` narrow it; ``nextPageToken`` goes back as
``pageToken``); ``GET /inbox/events`` is an SSE stream with an ``event: inbox`` frame at once and whenever an
invocation parks or leaves the inbox, so a page reloads its list only when there is something new. Parks land
in many users' indexes and no stream carries them all, so the stream looks for a change itself, once a second
(one script call over the caller's parked indexes, ``client.inbox.fingerprint``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Depends, Query

from ..approval_policy import mark_answerable
from ..auth import WILDCARD, Caller
from ..deps import Services, get_caller, get_services, get_settings
from ..event_stream import EventStreamResponse
from ..schemas import InvocationOut, WireModel
from ..settings import ApiSettings
from ..sse import frame
from .invocations import queue_of

router = APIRouter(tags=["inbox"])

CHANGE_CHECK_S = 1.0
"""How often ``/inbox/events`` looks for a change."""


class InboxPage(WireModel):
    """A page of the inbox: the parked invocations the caller may answer (approval rules); ``total`` counts
    every parked invocation the filters and the key let through, answerable by this caller or not."""

    invocations: list[InvocationOut]
    next_page_token: str | None = None
    total: int


async def visible_pairs(services: Services, settings: ApiSettings, caller: Caller, app: str | None,
                        user: str | None) -> list[tuple[str, str]]:
    """The (app, user) pairs whose parked invocations the caller may see, narrowed by ``app`` and ``user``."""
    client = queue_of(services)  # 503 without a queue, as the other queue routes
    apps = settings.app_names or await _announced_apps(client)
    apps = [name for name in apps if caller.allows_app(name) and app in (None, name)]
    users = None if caller.grant is None or WILDCARD in caller.grant.users else list(caller.grant.users)
    if user is not None:
        users = [user] if users is None or user in users else []
    pairs = await client.inbox.user_pairs(apps, users)
    return [(a, u) for a, u in pairs if caller.allows(a, u)]


async def _announced_apps(client: Any) -> list[str]:
    """With no app list configured (any app is served): the apps the live workers run."""
    return sorted({name for worker in await client.ops.alive_workers() for name in worker.apps})


@router.get("/inbox")
async def get_inbox(
    app: str | None = Query(default=None, max_length=256, description="only this app"),
    user: str | None = Query(default=None, max_length=256, description="only this user"),
    limit: int = Query(default=25, ge=1, le=200, description="page size"),
    page_token: str | None = Query(default=None, alias="pageToken", max_length=2000),
    caller: Caller = Depends(get_caller),
    settings: ApiSettings = Depends(get_settings),
    services: Services = Depends(get_services),
) -> InboxPage:
    """Parked invocations (waiting on a person) of every app and user the key may see, newest first."""
    pairs = await visible_pairs(services, settings, caller, app, user)
    page, total = await services.queue.inbox.parked_page(pairs, page_size=limit, page_token=page_token)
    views = [mark_answerable(InvocationOut.from_record(record), record, caller, settings.approval)
             for record in page.items]
    # Only what the caller may answer (approval rules): a page may hold fewer than ``limit``.
    return InboxPage(invocations=[view for view in views if any(call.answerable for call in view.pending_calls)],
                     next_page_token=page.next_page_token, total=total)


@router.get("/inbox/events", include_in_schema=False)  # a stream that never ends: kept out of the fuzzed schema
async def inbox_events(
    app: str | None = Query(default=None, max_length=256),
    user: str | None = Query(default=None, max_length=256),
    caller: Caller = Depends(get_caller),
    settings: ApiSettings = Depends(get_settings),
    services: Services = Depends(get_services),
) -> EventStreamResponse:
    """SSE: ``event: inbox`` ``{"total": n}`` at once and each time the inbox (with these filters) changes."""
    await visible_pairs(services, settings, caller, app, user)  # refuse at once what the stream would refuse

    async def changes() -> AsyncIterator[bytes]:
        seen = None
        while True:
            # Users who park their first invocation later are picked up: the pairs are read again each time.
            pairs = await visible_pairs(services, settings, caller, app, user)
            total, digest = await services.queue.inbox.fingerprint(pairs)
            if digest != seen:
                seen = digest
                yield frame(json.dumps({"total": total}), event="inbox")
            await asyncio.sleep(CHANGE_CHECK_S)

    return EventStreamResponse(changes(), keepalive_s=settings.sse_keepalive_s)
