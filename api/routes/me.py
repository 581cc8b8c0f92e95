"""``GET /me``: who the bearer key or token is (principal id, roles, users, apps), for the /ui's sign-in."""

from __future__ import annotations

from fastapi import APIRouter, Depends

from api.access.auth import ALL_ROLES, WILDCARD, Caller
from api.deps import get_caller
from api.views.schemas import WireModel

router = APIRouter(tags=["auth"])


class MeOut(WireModel):
    """The caller as the API sees it."""

    principal_id: str
    roles: list[str]
    users: list[str]
    apps: list[str]


@router.get("/me")
async def me(caller: Caller = Depends(get_caller)) -> MeOut:
    """The caller's principal id, roles and reach (with auth off: ``loopback`` with every role)."""
    if caller.grant is None:
        return MeOut(principal_id=caller.principal_id, roles=list(ALL_ROLES), users=[WILDCARD], apps=[WILDCARD])
    return MeOut(principal_id=caller.principal_id, roles=list(caller.grant.roles), users=caller.grant.users,
                 apps=caller.grant.apps)
