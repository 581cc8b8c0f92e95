"""Which roles may call each route: one table, checked by ``api.deps.get_caller`` on every request.

A rule is the set of roles any one of which lets the caller through (``NO_ROLE``: any caller the auth rules
already admit, for routes that hold no one's data). A route missing from the table needs ``operate``, so a
route added without a rule is closed rather than open (and ``tests/api/test_roles.py`` fails until it has one).

This table refuses an HTTP request early; the authority for what changes state is the door (``api.doors``),
which checks the role of its action itself, so A2A and the CLI, which have no routes here, are refused alike.
"""

from __future__ import annotations

from starlette.requests import Request

from api.access.auth import ALL_ROLES, Caller, MissingRoleError

NO_ROLE: frozenset[str] = frozenset()
ANY_ROLE = frozenset(ALL_ROLES)
ENQUEUE = frozenset({"enqueue"})
READ = frozenset({"read"})
READ_OR_ANSWER = frozenset({"read", "answer"})
ANSWER = frozenset({"answer"})
ENQUEUE_OR_ANSWER = frozenset({"enqueue", "answer"})
"""ADK's run routes start a run (a text message) or answer a parked one (a message of FunctionResponses): the
route lets either role through and the door of the action (``api.doors.enqueue`` or ``api.doors.answer``)
checks the one it needs, so answering needs ``answer`` whatever the entry point."""
OPERATE = frozenset({"operate"})
UNLISTED = OPERATE

USER = "/apps/{app_name}/users/{user_id}"
SESSION = USER + "/sessions/{session_id}"
ARTIFACT = SESSION + "/artifacts/{artifact_name:path}"

ROUTE_ROLES: dict[str, frozenset[str]] = {
    "GET /health": NO_ROLE, "GET /metrics": OPERATE,  # enforced by api.ops_access (no dependency reaches them)
    "GET /": NO_ROLE, "GET /ui": NO_ROLE, "GET /version": NO_ROLE, "GET /config/telemetry": NO_ROLE,
    "GET /run_live": NO_ROLE, "POST /run_live": NO_ROLE, "WEBSOCKET /run_live": NO_ROLE,  # answer "not served"
    **{f"{method} /dev/{{rest:path}}": NO_ROLE for method in ("GET", "POST", "PUT", "PATCH", "DELETE")},
    "GET /me": ANY_ROLE,
    "GET /list-apps": ANY_ROLE,
    "GET /apps/{app_name}/app-info": ANY_ROLE,
    f"POST {USER}/sessions": ENQUEUE, f"POST {SESSION}": ENQUEUE, f"PATCH {SESSION}": ENQUEUE,
    f"DELETE {SESSION}": ENQUEUE,
    f"GET {USER}/sessions": READ, f"GET {SESSION}": READ_OR_ANSWER,
    f"GET {SESSION}/artifacts": READ, f"POST {SESSION}/artifacts": ENQUEUE,
    f"GET {ARTIFACT}/versions/metadata": READ, f"GET {ARTIFACT}/versions/{{version_id}}/metadata": READ,
    f"GET {ARTIFACT}/versions/{{version_id}}": READ, f"GET {ARTIFACT}/versions": READ,
    f"GET {ARTIFACT}": READ, f"DELETE {ARTIFACT}": ENQUEUE,
    f"POST {SESSION}/invocations": ENQUEUE,
    f"POST {SESSION}/rewind": ENQUEUE, f"POST {SESSION}:cancel": OPERATE,
    "POST /run": ENQUEUE_OR_ANSWER, "POST /run_sse": ENQUEUE_OR_ANSWER,
    "GET /invocations/{invocation_id}": READ_OR_ANSWER,
    "GET /invocations/{invocation_id}/nodes": READ_OR_ANSWER,
    "GET /invocations/{invocation_id}/events": READ_OR_ANSWER,
    f"GET {SESSION}/events": READ,
    f"GET {USER}/invocations": READ_OR_ANSWER,
    "POST /invocations/{invocation_id}/function-responses": ANSWER,
    "POST /invocations/{invocation_id}/cancel": OPERATE,
    "GET /invocations/{invocation_id}/oauth/{call_id}/authorize": ANSWER,
    "GET /oauth/callback": NO_ROLE,  # the provider's redirect: the single-use state authorizes it (api.routes.oauth)
    "GET /inbox": READ_OR_ANSWER, "GET /invocations": READ_OR_ANSWER, "GET /inbox/events": READ_OR_ANSWER,
    "GET /ops/summary": OPERATE,
    "GET /webhooks/dead-letters": frozenset({"read", "operate"}),
    "POST /webhooks/dead-letters/{delivery_id}/redeliver": OPERATE,
    "GET /dev/apps/{app_name}/debug/trace/session/{session_id}": READ,
    "GET /dev/apps/{app_name}/build_graph_image": ANY_ROLE,
    "GET /dev/apps/{app_name}/users/{user_id}/sessions/{session_id}/events/{event_id}/graph": READ,
    "GET /invocations/{invocation_id}/audit": READ_OR_ANSWER,
    "GET /apps/{app_name}/audit": frozenset({"read", "operate"}),
    # Schedules enqueue runs as the user: changing one is enqueueing; reading one is reading.
    f"POST {USER}/schedules": ENQUEUE, f"GET {USER}/schedules": READ,
    f"GET {USER}/schedules/{{schedule_id}}": READ, f"PATCH {USER}/schedules/{{schedule_id}}": ENQUEUE,
    f"DELETE {USER}/schedules/{{schedule_id}}": ENQUEUE, f"GET {USER}/schedules/{{schedule_id}}/runs": READ,
    **{f"POST {USER}/schedules/{{schedule_id}}/{action}": ENQUEUE for action in ("pause", "resume", "trigger")},
}
"""``"METHOD path"`` (the route's path template) -> the roles that pass."""


def route_rule(method: str, path: str) -> frozenset[str]:
    """The roles that may call ``method path`` (``operate`` for a route the table does not list)."""
    return ROUTE_ROLES.get(f"{method} {path}", UNLISTED)


def check_route_roles(caller: Caller, request: Request) -> None:
    """MissingRoleError (403) naming the route and the roles it needs when the caller holds none of them."""
    route = request.scope.get("route")
    if route is None or caller.grant is None:
        return
    method = "GET" if request.method == "HEAD" else request.method
    rule = route_rule(method, route.path)
    if rule and not caller.has_any(rule):
        needed = " or ".join(repr(role) for role in ALL_ROLES if role in rule)
        raise MissingRoleError(f"{method} {route.path} needs role {needed}; principal {caller.principal_id!r} "
                               f"has roles {list(caller.roles)!r}")
