"""The approver's inbox: every parked invocation the caller's key may see, across apps, users and sessions.

``GET /inbox`` pages them newest first (``?app=``, ``?user=`` narrow it; ``nextPageToken`` goes back as
``pageToken``). A caller who may see every user of the apps, with no user filter, is served from the app-wide
parked index (``client.inbox.app_wide_page``), so the first page costs the same over 1,000 users as over one;
a narrower view merges its users' own indexes (``client.inbox.parked_page``).

``GET /inbox/events`` is an SSE stream: an ``event: inbox`` frame ``{"total": n}`` at once, then one
``{"changes": [...]}`` frame whenever invocations the caller may see park or leave the inbox, or
``{"reload": true}`` when the API cannot tell what changed. It follows the inbox change feed through this API
process's one follower (``api/streams/change_feed.py``): an open stream with nothing happening costs Redis nothing.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, Depends, Query, Request

from api.access.approval_policy import mark_answerable
from api.access.auth import WILDCARD, Caller
from api.deps import Services, get_caller, get_services, get_settings
from api.routes.invocations import queue_of
from api.settings import ApiSettings
from api.streams.change_feed import ChangeFeed, Update
from api.streams.event_stream import EventStreamResponse
from api.streams.sse import frame
from api.views.schemas import InvocationOut, WireModel

router = APIRouter(tags=["inbox"])

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
    apps = settings.served.names() or await _announced_apps(client)
    apps = [name for name in apps if caller.allows_app(name) and app in (None, name)]
    users = None if caller.grant is None or WILDCARD in caller.grant.users else list(caller.grant.users)
    if user is not None:
        users = [user] if users is None or user in users else []
    pairs = await client.inbox.user_pairs(apps, users)
    return [(a, u) for a, u in pairs if caller.allows(a, u)]


@dataclass(frozen=True, kw_only=True)
class InboxScope:
    """What one inbox view covers: every user of ``apps`` (``all_users``), or only the (app, user) ``pairs``."""

    apps: list[str]
    all_users: bool
    pairs: list[tuple[str, str]]


async def inbox_scope(services: Services, settings: ApiSettings, caller: Caller, app: str | None,
                      user: str | None) -> InboxScope:
    """The caller's inbox, narrowed by ``app`` and ``user``; never reads who the users are when it may see
    them all (the app-wide index has them)."""
    client = queue_of(services)  # 503 without a queue, as the other queue routes
    apps = settings.served.names() or await _announced_apps(client)
    apps = [name for name in apps if caller.allows_app(name) and app in (None, name)]
    if user is None and (caller.grant is None or WILDCARD in caller.grant.users):
        return InboxScope(apps=apps, all_users=True, pairs=[])
    pairs = await visible_pairs(services, settings, caller, app, user)
    return InboxScope(apps=apps, all_users=False, pairs=pairs)


async def _announced_apps(client: Any) -> list[str]:
    """With no app served by name (an in-process API that accepts any app): the apps the live workers run."""
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
    scope = await inbox_scope(services, settings, caller, app, user)
    if scope.all_users:
        page, total = await services.queue.inbox.app_wide_page(scope.apps, page_size=limit, page_token=page_token)
    else:
        page, total = await services.queue.inbox.parked_page(scope.pairs, page_size=limit, page_token=page_token)
    views = [mark_answerable(InvocationOut.from_record(record), record, caller, settings.policies())
             for record in page.items]
    # Only what the caller may answer (approval rules): a page may hold fewer than ``limit``.
    return InboxPage(invocations=[view for view in views if any(call.answerable for call in view.pending_calls)],
                     next_page_token=page.next_page_token, total=total)


@router.get("/inbox/events", include_in_schema=False)  # a stream that never ends: kept out of the fuzzed schema
async def inbox_events(
    request: Request,
    app: str | None = Query(default=None, max_length=256),
    user: str | None = Query(default=None, max_length=256),
    caller: Caller = Depends(get_caller),
    settings: ApiSettings = Depends(get_settings),
    services: Services = Depends(get_services),
) -> EventStreamResponse:
    """SSE: ``event: inbox`` ``{"total": n}`` at once, then the changes of this inbox (these filters) as they
    happen: ``{"changes": [{app, user, invocationId, change}]}``, or ``{"reload": true}``."""
    scope = await inbox_scope(services, settings, caller, app, user)  # refuse at once what the stream would refuse
    client = services.queue
    feed = change_feed(request, client)

    def visible(app_name: str, user_id: str) -> bool:
        # Not limited to the apps the scope listed: an app whose first worker starts later is followed too.
        return ((settings.served.follow_workers or settings.served.serves(app_name)) and app in (None, app_name)
                and user in (None, user_id) and caller.allows(app_name, user_id))

    async def frames() -> AsyncIterator[bytes]:
        async with feed.subscribe(visible) as subscription:
            # Read after subscribing: a change between the two is sent as well, never lost.
            total = (await client.inbox.app_wide_total(scope.apps) if scope.all_users
                     else await client.inbox.parked_total(scope.pairs))
            yield frame(json.dumps({"total": total}), event="inbox")
            while True:
                yield frame(json.dumps(_update_json(await subscription.next())), event="inbox")

    return EventStreamResponse(frames(), keepalive_s=settings.sse_keepalive_s)


def change_feed(request: Request, client: Any) -> ChangeFeed:
    """This API process's one follower of the inbox change feed (made on first use)."""
    feed = getattr(request.app.state, "inbox_change_feed", None)
    if feed is None:
        feed = request.app.state.inbox_change_feed = ChangeFeed(client.inbox)
    return feed


def _update_json(update: Update) -> dict[str, Any]:
    if update.reload:
        return {"reload": True}
    return {"changes": [{"app": change.app, "user": change.user, "invocationId": change.invocation_id,
                         "change": change.change} for change in update.changes]}
