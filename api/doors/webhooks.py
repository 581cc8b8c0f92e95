"""The redeliver door: send a webhook notification given up on (a dead letter) again."""

from __future__ import annotations

from typing import Any

from api.access.auth import Caller
from api.doors.guards import Guards, actor_of, check_scope, require_role
from runtime.errors import NotFoundError


async def redeliver(caller: Caller, guards: Guards, queue: Any, delivery_id: str) -> None:
    """Put a dead letter back in the outbox: scope (404, as for an unknown id), role ``operate`` (403), then the
    store, recording the caller as who redelivered it."""
    not_found = NotFoundError(f"dead letter {delivery_id!r} not found")
    letters = queue.dead_letters
    entry = await letters.get(delivery_id)
    if entry is None:
        raise not_found
    try:
        check_scope(guards, caller, entry["app"], entry["user"])
    except NotFoundError:
        raise not_found from None
    require_role(caller, "operate", f"redelivering dead letter {delivery_id!r}")
    if not await letters.redeliver(entry, actor=actor_of(caller)):
        raise not_found
