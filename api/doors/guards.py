"""What every door checks first: the caller's scope and roles, and who the store records as acting."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from api.access.approval_policy import ApprovalPolicies
from api.access.auth import ALL_ROLES, Caller, MissingRoleError, Role
from api.access.rate_limits import RateLimits
from api.served_apps import ServedApps
from runtime.errors import InvocationNotFoundError, NotFoundError
from worker.records.audit import LOOPBACK
from worker.webhooks.ssrf import WebhookGuard

MAX_ID_CHARS = 256


@dataclass(frozen=True, kw_only=True)
class Guards:
    """The settings the doors apply: the apps served (``api.served_apps``), who may answer what, how fast a principal may
    start work, and where a per-invocation webhook may point."""

    served: ServedApps = field(default_factory=ServedApps)
    approval: ApprovalPolicies = field(default_factory=ApprovalPolicies)
    rate_limits: RateLimits = field(default_factory=RateLimits)
    webhook_guard: WebhookGuard = field(default_factory=WebhookGuard)

    @classmethod
    def of(cls, settings: Any) -> Guards:
        """The guards of an ``api.settings.ApiSettings``."""
        return cls(served=settings.served, approval=settings.policies(),
                   rate_limits=settings.rate_limits, webhook_guard=settings.webhook_guard)

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None, apps: list[Any] | None = None) -> Guards:
        """The guards ``agentq api`` builds from the same environment (``AGENTQ_APPROVAL_POLICY*``,
        ``AGENTQ_RATE_*``, ``AGENTQ_WEBHOOK*``), for the CLI; ``apps``: loaded apps whose tools declare rules."""
        from api.access.approval_policy import with_declared
        from api.settings import load_approval_policy
        from worker.webhooks.config import WebhookSettings

        env = os.environ if environ is None else environ
        return cls(approval=with_declared(load_approval_policy(env), apps or []),
                   rate_limits=RateLimits.from_env(dict(env)), webhook_guard=WebhookSettings.from_env().guard())


def check_scope(guards: Guards, caller: Caller, app_name: str, user_id: str) -> None:
    """404 when the app is not served or the caller may not touch this user (indistinguishable on purpose)."""
    guards.served.check(app_name)
    if not caller.allows(app_name, user_id):
        raise NotFoundError(f"app {app_name!r} has no user {user_id!r} visible to this key")


async def visible_record(queue: Any, guards: Guards, caller: Caller, invocation_id: str):
    """The invocation's record if the caller may see it; otherwise the same 404 as an unknown id."""
    not_found = InvocationNotFoundError(f"invocation {invocation_id!r} not found")
    if len(invocation_id) > MAX_ID_CHARS:
        raise not_found
    try:
        record = await queue.get(invocation_id)
    except InvocationNotFoundError:
        raise not_found from None
    if not caller.allows(record.app_name, record.user_id):
        raise not_found
    if guards.served.follow_workers:
        guards.served.check(record.app_name)  # the caller may see it: say that no worker serves its app now
    elif not guards.served.serves(record.app_name):
        raise not_found
    return record


def require_role(caller: Caller, role: Role, action: str) -> None:
    """MissingRoleError (403) naming the action and the role it needs when the caller does not hold it."""
    if not caller.has_any(frozenset({role})):
        raise MissingRoleError(f"{action} needs role {role!r}; principal {caller.principal_id!r} has roles "
                               f"{list(caller.roles)!r}")


def actor_of(caller: Caller) -> dict[str, Any]:
    """Who the store records as acting (worker.records.audit): the principal and the client address."""
    return {"principal": caller.principal_id, "client": caller.client}


def enqueued_by(caller: Caller) -> str | None:
    """Who to record as having enqueued, for the approval rules: the principal, whatever the entry point (an A2A
    task's requester is the same principal as over HTTP); None for an anonymous loopback caller with auth off."""
    return None if caller.grant is None and caller.principal_id == LOOPBACK else caller.principal_id


def cli_caller() -> Caller:
    """The local operator at a terminal: principal ``cli:<os user>``, every role, every app and user (it holds
    the store's URL, so it could write anything anyway); the doors still apply the approval rules and limits."""
    from worker.records.audit import cli_actor

    return Caller(grant=None, principal_id=cli_actor()["principal"], named=True)


__all__ = ["ALL_ROLES", "Guards", "actor_of", "check_scope", "cli_caller", "enqueued_by", "require_role",
           "visible_record"]
