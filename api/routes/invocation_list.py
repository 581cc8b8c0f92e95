"""``GET /invocations?status=&app=&user=``: invocations across every app and user the caller's grant lets it see
(``agentq list`` reads the same through the client). A read: no door, scoped as the inbox is."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query

from api.access.approval_policy import mark_answerable
from api.access.auth import Caller
from api.deps import Services, get_caller, get_services, get_settings
from api.routes.inbox import visible_pairs
from api.routes.invocations import queue_of
from api.settings import ApiSettings
from api.views.schemas import InvocationList, InvocationOut
from runtime.statuses import InvocationStatus
from worker.records.listing_across import invocations_across

router = APIRouter(tags=["invocations"])


@router.get("/invocations")
async def list_all_invocations(
    status: InvocationStatus | None = Query(default=None),
    app: str | None = Query(default=None, max_length=256, description="only this app"),
    user: str | None = Query(default=None, max_length=256, description="only this user"),
    limit: int = Query(default=100, ge=1, le=1000, description="page size"),
    page_token: str | None = Query(default=None, alias="pageToken", max_length=2000),
    caller: Caller = Depends(get_caller),
    settings: ApiSettings = Depends(get_settings),
    services: Services = Depends(get_services),
) -> InvocationList:
    """A page of the invocations of every app and user the key may see, by app and user, each user's newest
    first; ``nextPageToken`` (null on the last page) goes back as ``pageToken``. A page filtered by a status
    other than ``parked`` may hold fewer than ``limit`` and still have a next one."""
    pairs = await visible_pairs(services, settings, caller, app, user)
    page = await invocations_across(queue_of(services), pairs, status=status, page_size=limit,
                                    page_token=page_token)
    return InvocationList(invocations=[mark_answerable(InvocationOut.from_record(record), record, caller,
                                                       settings.policies()) for record in page.items],
                          next_page_token=page.next_page_token)
