"""Audit routes: who answered, cancelled or redelivered, when and from where, per invocation and per app.

Read only: no route writes an entry (they are written by the scripts that make the changes, worker.records.audit), so
the trail cannot be edited through the API. Both follow the caller's scope: another user's invocation is a 404,
and an app's page holds only the users the caller may see. Entries expire with the records they describe.
"""

from __future__ import annotations

from fastapi import APIRouter, Depends, Path, Query

from api.access.auth import Caller
from api.deps import Services, get_caller, get_services, get_settings
from api.routes.invocations import queue_of, visible_record
from api.settings import ApiSettings
from api.views.schemas import WireModel
from runtime.errors import NotFoundError
from worker.records.audit import AuditEntry

router = APIRouter(tags=["audit"])


class InvocationAuditOut(WireModel):
    """GET /invocations/{id}/audit: the invocation's entries, oldest first."""

    invocation_id: str
    app_name: str
    user_id: str
    session_id: str
    entries: list[AuditEntry]


class AppAuditPage(WireModel):
    """GET /apps/{app}/audit: audited invocations, newest first entry first; ``nextPageToken`` goes back as
    ``pageToken`` (null: last page)."""

    invocations: list[InvocationAuditOut]
    next_page_token: str | None = None


@router.get("/invocations/{invocation_id}/audit")
async def invocation_audit(
    invocation_id: str,
    caller: Caller = Depends(get_caller),
    settings: ApiSettings = Depends(get_settings),
    services: Services = Depends(get_services),
) -> InvocationAuditOut:
    """Who answered, cancelled or redelivered for this invocation (404 as for an unknown id when the caller
    may not see it)."""
    record = await visible_record(services, settings, caller, invocation_id)
    return InvocationAuditOut(
        invocation_id=record.id, app_name=record.app_name, user_id=record.user_id, session_id=record.session_id,
        entries=list(record.audit))


@router.get("/apps/{app_name}/audit")
async def app_audit(
    app_name: str = Path(max_length=256),
    limit: int = Query(default=100, ge=1, le=1000, description="page size (invocations)"),
    page_token: str | None = Query(default=None, alias="pageToken", max_length=2000),
    caller: Caller = Depends(get_caller),
    settings: ApiSettings = Depends(get_settings),
    services: Services = Depends(get_services),
) -> AppAuditPage:
    """The app's audit trail by invocation, newest first; only the users the caller may see (a page may then
    hold fewer than ``limit`` and still have a next one). 404 for an app the caller may not see."""
    if not settings.served.serves(app_name) or not caller.allows_app(app_name):
        raise NotFoundError(f"app {app_name!r} not found")
    page = await queue_of(services).app_audit_page(app_name, allows=caller.allows, page_size=limit,
                                                    page_token=page_token)
    return AppAuditPage(
        invocations=[InvocationAuditOut(invocation_id=item["invocationId"], app_name=app_name,
                                        user_id=item["userId"], session_id=item["sessionId"],
                                        entries=[AuditEntry.model_validate(e) for e in item["entries"]])
                     for item in page.items],
        next_page_token=page.next_page_token)
