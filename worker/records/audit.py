"""The audit trail: who answered, cancelled or redelivered for an invocation, when, and from which address.

An entry is written by the same Lua script call that makes the change it describes (``respond``, ``cancel``,
``webhooks/redeliver``), onto the record's ``audit`` field (a JSON list), so it expires with the record and no
route or client call can write one on its own. The app's index (``keys.app_audit``) names the invocations that
have entries, by their first entry's time; the sweeper drops a member once its record is gone.

An answer's entry also reaches the function response event the worker commits (``custom_metadata`` under
``AUDIT_KEY``: who answered each call), the ``queued`` status entry of the resumed invocation (``answeredBy``), a
cancel's the ``cancelled`` status entry (``cancelledBy``), and every later webhook carries the list (``audit``).

An actor is ``{"principal": ..., "client": ...}``: the HTTP API passes its caller's principal id and client
address; the Python client and CLI, with no HTTP caller, pass ``cli_actor()`` (``cli:<os user>``).
"""

from __future__ import annotations

import getpass
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

from runtime.errors import UsageError
from runtime.redis_store import keys

AUDIT_KEY = "agentq:answered_by"
"""The ``custom_metadata`` key of a function response event: ``{call_id: {principal, client, at}}``."""

LOOPBACK = "loopback"
"""The principal of every caller when the API runs without auth (api.access.auth.Caller): it names nobody, so an answer
from it is kept in the record's audit only and not stamped on the event; the event then is exactly what ADK's
own server (which has no auth) commits, as google-adk's conformance tool checks."""

AuditAction = Literal["answer", "cancel", "redeliver"]


class AuditEntry(BaseModel):
    """One audited action on an invocation."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    action: AuditAction
    principal: str
    client: str | None = None
    at: float
    call_ids: list[str] | None = None
    """An answer's function call ids."""
    reason: str | None = None
    """A cancel's reason."""
    delivery_id: str | None = None
    """A redelivery's webhook delivery id."""

    def to_json_dict(self) -> dict[str, Any]:
        """The wire form: camelCase keys, unset ones left out."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


def cli_actor() -> dict[str, Any]:
    """The actor of a Python client or CLI call with no HTTP caller: ``cli:<os user>``."""
    try:
        user = getpass.getuser()
    except Exception:  # no login name (a container without a passwd entry)
        user = "unknown"
    return {"principal": f"cli:{user}", "client": None}


def check_actor(actor: dict[str, Any] | None) -> dict[str, Any] | None:
    """``actor`` as ``{principal, client}``; UsageError when it names no principal."""
    if actor is None:
        return None
    principal = actor.get("principal") if isinstance(actor, dict) else None
    client = actor.get("client") if isinstance(actor, dict) else None
    if not isinstance(principal, str) or not principal or not (client is None or isinstance(client, str)):
        raise UsageError(f"an actor is {{'principal': str, 'client': str | None}}, got {actor!r}")
    return {"principal": principal, "client": client}


def entry(action: AuditAction, actor: dict[str, Any] | None, at: float, **details: Any) -> AuditEntry | None:
    """The audit entry of ``action`` by ``actor`` at ``at`` (None without an actor: nothing is recorded)."""
    actor = check_actor(actor)
    if actor is None:
        return None
    return AuditEntry(action=action, at=at, **actor, **{k: v for k, v in details.items() if v is not None})


def script_args(audit: AuditEntry | None, user: str, invocation_id: str) -> dict[str, str]:
    """The ``audit`` and ``audit_member`` arguments of the scripts that record an entry."""
    member = json.dumps([user, invocation_id], separators=(",", ":"))
    wire = "" if audit is None else json.dumps(audit.to_json_dict(), separators=(",", ":"))
    return {"audit": wire, "audit_member": member}


def who(audit: AuditEntry) -> dict[str, Any]:
    """The ``{principal, client, at}`` shown on events and status entries."""
    return {"principal": audit.principal, "client": audit.client, "at": audit.at}


def refuse_forged(responses: list[Any]) -> None:
    """UsageError when a function response carries ``AUDIT_KEY`` itself: only the worker writes it."""
    for response in responses:
        if isinstance(response.response, dict) and AUDIT_KEY in response.response:
            raise UsageError(f"function response {response.id!r} may not carry {AUDIT_KEY!r}: who answered is "
                             "recorded by agentq, never taken from the answer")


def answered_by(record: Any, call_ids: list[str]) -> dict[str, Any] | None:
    """``{AUDIT_KEY: {call_id: who}}`` for the calls of ``call_ids`` the record's audit names (latest answer
    wins), or None when none is named: the function response event's ``custom_metadata``. Answers from
    ``LOOPBACK`` (auth off) name nobody and are left out."""
    found: dict[str, Any] = {}
    for item in record.audit:
        if item.action == "answer" and item.principal != LOOPBACK:
            for call_id in item.call_ids or ():
                if call_id in call_ids:
                    found[call_id] = who(item)
    return {AUDIT_KEY: found} if found else None


async def app_audit_page(store: Any, app: str, *, allows: Any, page_size: int = 100,
                         page_token: str | None = None) -> Any:
    """A page of the app's audited invocations, newest first entry first, each as ``{invocationId, userId,
    sessionId, entries}``; ``allows(app, user)`` filters the users the caller may see (a page may then hold
    fewer than ``page_size`` and still have a next one). Invocations whose records are gone are skipped."""
    from worker.records.listing import (  # listing imports the record
        Page,
        check_page_size,
        decode_token,
        encode_token,
    )

    check_page_size(page_size)
    index = keys.app_audit(app)
    position = None
    if page_token:
        score, member = decode_token(page_token, "a")
        position = (float(score), str(member))
    raw = await _after(store.redis, index, position, page_size + 1)
    members = raw[:page_size]
    next_token = encode_token("a", members[-1][1], members[-1][0]) if len(raw) > page_size else None
    wanted = []
    for member, _ in members:
        user, invocation_id = json.loads(member)
        if allows(app, user):
            wanted.append((member, user, invocation_id))
    replies = await store.batch(*[("HMGET", keys.invocation(app, user, inv), "session_id", "audit")
                                  for _, user, inv in wanted])
    items, gone = [], []
    for (member, user, invocation_id), reply in zip(wanted, replies, strict=True):
        if isinstance(reply, Exception):
            raise reply
        session_id, audit = reply
        if audit is None:
            gone.append(member)
            continue
        items.append({"invocationId": invocation_id, "userId": user, "sessionId": session_id,
                      "entries": [AuditEntry.model_validate(e).to_json_dict() for e in json.loads(audit)]})
    if gone:  # the sweeper removes them too; a reader need not wait for it
        await store.redis.zrem(index, *gone)
    return Page(items=items, next_page_token=next_token)


async def _after(redis: Any, index: str, position: tuple[float, str] | None, count: int) -> list[tuple[str, float]]:
    """Up to ``count`` members after ``position`` (newest first; equal scores by member, descending)."""
    if position is None:
        return await redis.zrevrangebyscore(index, "+inf", "-inf", start=0, num=count, withscores=True)
    score, last = position
    found: list[tuple[str, float]] = []
    offset = 0
    while len(found) < count:
        chunk = await redis.zrevrangebyscore(index, score, "-inf", start=offset, num=count + 64, withscores=True)
        found += [(m, s) for m, s in chunk if s < score or m < last]
        if len(chunk) < count + 64:
            break
        offset += len(chunk)
    return found[:count]
