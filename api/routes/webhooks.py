"""Webhook routes: the dead-letter list (notifications the workers gave up on) and sending one again.

A dead letter shows only to a key that may see its invocation's app and user (others: as if it did not exist).
Its ``lastError`` (a connection error says what answers at an address) shows only to operators
(``may_see_delivery_errors``): to everyone else it is null, so the list is no port scanner.
"""

from __future__ import annotations

import re

from fastapi import APIRouter, Depends, Path, Query

from api import doors
from api.access.auth import Caller
from api.access.roles import OPERATE
from api.deps import Services, get_caller, get_services, get_settings
from api.routes.invocations import queue_of
from api.settings import ApiSettings
from api.views.schemas import WireModel
from runtime.errors import UsageError

router = APIRouter(tags=["webhooks"])

_TOKEN = re.compile(r"\d{15}:.{1,300}")


class DeadLetterOut(WireModel):
    """A notification that was not delivered within its retry window."""

    delivery_id: str
    event: str
    invocation_id: str
    app_name: str
    user_id: str
    session_id: str
    url: str
    attempts: int
    last_error: str | None = None
    transitioned_at: float
    dead_at: float

    @classmethod
    def from_entry(cls, entry: dict) -> DeadLetterOut:
        """The public view of a dead-lettered outbox entry."""
        return cls(delivery_id=entry["id"], event=entry["event"], invocation_id=entry["inv"], app_name=entry["app"],
                   user_id=entry["user"], session_id=entry["session"], url=entry["url"], attempts=entry["attempts"],
                   last_error=entry.get("last_error"), transitioned_at=float(entry["at"]),
                   dead_at=float(entry["dead_at"]))


class DeadLetterPage(WireModel):
    """A page of dead letters, newest first; ``nextPageToken`` goes back as ``pageToken`` (null: last page)."""

    dead_letters: list[DeadLetterOut]
    next_page_token: str | None = None


class RedeliveryOut(WireModel):
    """202 answer to a redelivery: the notification is back in the outbox under the same delivery id."""

    delivery_id: str
    status: str = "queued"


def may_see_delivery_errors(caller: Caller) -> bool:
    """True when ``caller`` may read why deliveries failed: the ``operate`` role's privilege (auth off: yes)."""
    return caller.has_any(OPERATE)


def _visible(entry: dict, settings: ApiSettings, caller: Caller) -> bool:
    return settings.served.serves(entry["app"]) and caller.allows(entry["app"],
                                                                                          entry["user"])


@router.get("/webhooks/dead-letters")
async def dead_letters(
    limit: int = Query(default=100, ge=1, le=1000),
    page_token: str | None = Query(default=None, alias="pageToken", max_length=400),
    caller: Caller = Depends(get_caller),
    settings: ApiSettings = Depends(get_settings),
    services: Services = Depends(get_services),
) -> DeadLetterPage:
    """Dead letters the key may see, newest first (a page may hold fewer than ``limit`` for a narrow key)."""
    letters = queue_of(services).dead_letters  # 503 without a queue, as the other queue routes
    if page_token is not None and not _TOKEN.fullmatch(page_token):
        raise UsageError(f"pageToken {page_token!r} was not handed out by this API")
    entries, next_token = await letters.page(limit=limit, after=page_token)
    visible = [DeadLetterOut.from_entry(entry) for entry in entries if _visible(entry, settings, caller)]
    if not may_see_delivery_errors(caller):
        visible = [letter.model_copy(update={"last_error": None}) for letter in visible]
    return DeadLetterPage(dead_letters=visible, next_page_token=next_token)


@router.post("/webhooks/dead-letters/{delivery_id}/redeliver", status_code=202)
async def redeliver(
    delivery_id: str = Path(max_length=400),
    caller: Caller = Depends(get_caller),
    settings: ApiSettings = Depends(get_settings),
    services: Services = Depends(get_services),
) -> RedeliveryOut:
    """Send a dead letter again: back in the outbox with a fresh retry window and the same ``webhook-id``."""
    await doors.redeliver(caller, doors.Guards.of(settings), queue_of(services), delivery_id)
    return RedeliveryOut(delivery_id=delivery_id)
