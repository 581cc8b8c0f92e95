"""Roles on every route: one table of which roles pass each route, checked against the app's own route list.

A route added without a rule in ``api.access.roles`` fails ``test_every_route_has_a_role_rule_and_this_table_names_it``
(and, until it gets one, only ``operate`` may call it).
"""

from __future__ import annotations

import re

import pytest
from fastapi.routing import APIRoute, APIWebSocketRoute

from api import ApiSettings, create_app
from api.access.auth import ALL_ROLES, hash_secret, parse_keys
from api.access.roles import ROUTE_ROLES, route_rule

from .conftest import make_client

ANY = set(ALL_ROLES)
NONE: set[str] = set()  # no role needed: routes that hold no one's data (or answer "not served")
E, R, A, OP = {"enqueue"}, {"read"}, {"answer"}, {"operate"}
USER = "/apps/{app_name}/users/{user_id}"
SESSION = USER + "/sessions/{session_id}"
ARTIFACT = SESSION + "/artifacts/{artifact_name:path}"

EXPECTED: dict[str, set[str]] = {
    "GET /health": NONE, "GET /metrics": OP,
    "GET /": NONE, "GET /ui": NONE, "GET /version": NONE, "GET /config/telemetry": NONE,
    "GET /run_live": NONE, "POST /run_live": NONE, "WEBSOCKET /run_live": NONE,
    **{f"{m} /dev/{{rest:path}}": NONE for m in ("GET", "POST", "PUT", "PATCH", "DELETE")},
    "GET /me": ANY, "GET /list-apps": ANY, "GET /apps/{app_name}/app-info": ANY,
    f"POST {USER}/sessions": E, f"POST {SESSION}": E, f"PATCH {SESSION}": E, f"DELETE {SESSION}": E,
    f"GET {USER}/sessions": R, f"GET {SESSION}": R | A,
    f"GET {SESSION}/artifacts": R, f"POST {SESSION}/artifacts": E,
    f"GET {ARTIFACT}/versions/metadata": R, f"GET {ARTIFACT}/versions/{{version_id}}/metadata": R,
    f"GET {ARTIFACT}/versions/{{version_id}}": R, f"GET {ARTIFACT}/versions": R, f"GET {ARTIFACT}": R,
    f"DELETE {ARTIFACT}": E,
    f"POST {SESSION}/invocations": E, "POST /run": E | A, "POST /run_sse": E | A,
    f"POST {SESSION}/rewind": E, f"POST {SESSION}:cancel": OP,
    "GET /invocations/{invocation_id}": R | A, "GET /invocations/{invocation_id}/nodes": R | A,
    "GET /invocations/{invocation_id}/events": R | A, f"GET {SESSION}/events": R,
    f"GET {USER}/invocations": R | A,
    "POST /invocations/{invocation_id}/function-responses": A,
    "POST /invocations/{invocation_id}/cancel": OP,
    "GET /invocations/{invocation_id}/oauth/{call_id}/authorize": A, "GET /oauth/callback": NONE,
    "GET /inbox": R | A, "GET /invocations": R | A, "GET /inbox/events": R | A,
    "GET /ops/summary": OP,
    "GET /webhooks/dead-letters": R | OP, "POST /webhooks/dead-letters/{delivery_id}/redeliver": OP,
    "GET /dev/apps/{app_name}/debug/trace/session/{session_id}": R,
    "GET /dev/apps/{app_name}/build_graph_image": ANY,
    "GET /dev/apps/{app_name}/users/{user_id}/sessions/{session_id}/events/{event_id}/graph": R,
    "GET /invocations/{invocation_id}/audit": R | A, "GET /apps/{app_name}/audit": R | OP,
    f"POST {USER}/schedules": E, f"GET {USER}/schedules": R, f"GET {USER}/schedules/{{schedule_id}}": R,
    f"PATCH {USER}/schedules/{{schedule_id}}": E, f"DELETE {USER}/schedules/{{schedule_id}}": E,
    f"GET {USER}/schedules/{{schedule_id}}/runs": R, f"POST {USER}/schedules/{{schedule_id}}/pause": E,
    f"POST {USER}/schedules/{{schedule_id}}/resume": E, f"POST {USER}/schedules/{{schedule_id}}/trigger": E,
}
"""``"METHOD path"`` -> the roles that pass it (each alone)."""

SECRETS = {role: f"{role}-only-secret-0001" for role in ALL_ROLES}
KEYS = {f"{role}-bot": {"sha256": hash_secret(secret), "users": ["*"], "apps": ["*"], "roles": [role]}
        for role, secret in SECRETS.items()}


def _routes(app) -> list[tuple[str, str]]:
    """(method, path) of every route the app serves, included routers' routes too."""
    found: list[tuple[str, str]] = []

    def walk(routes):
        for route in routes:
            if hasattr(route, "original_router"):
                walk(route.original_router.routes)
            elif isinstance(route, APIWebSocketRoute):
                found.append(("WEBSOCKET", route.path))
            elif isinstance(route, APIRoute):
                found.extend((method, route.path) for method in sorted(route.methods))

    walk(app.routes)
    return found


@pytest.fixture
def role_app(memory_services):
    settings = ApiSettings(app_names=["weather"], keys=parse_keys(KEYS), max_body_bytes=10_000,
                           public_routes=frozenset())
    return create_app(settings, memory_services)


def test_every_route_has_a_role_rule_and_this_table_names_it(role_app):
    served = {f"{method} {path}" for method, path in _routes(role_app)}
    assert {"missing from api.access.roles.ROUTE_ROLES": sorted(served - set(ROUTE_ROLES)),
            "missing from this test's table": sorted(served - set(EXPECTED)),
            "in the table but not served": sorted(set(EXPECTED) - served)} == {
        "missing from api.access.roles.ROUTE_ROLES": [], "missing from this test's table": [],
        "in the table but not served": []}
    assert {key: set(ROUTE_ROLES[key]) for key in EXPECTED} == EXPECTED


def test_a_route_without_a_rule_needs_operate():
    assert route_rule("GET", "/a/route/nobody/listed") == frozenset({"operate"})


def _url(path: str) -> str:
    path = path.replace("{rest:path}", "x").replace("{artifact_name:path}", "a.txt")
    return re.sub(r"\{[a-z_]+\}", lambda m: "weather" if m.group(0) == "{app_name}" else "x", path)


@pytest.mark.parametrize("route", sorted(key for key in EXPECTED if not key.startswith("WEBSOCKET")))
async def test_each_route_lets_through_exactly_the_roles_its_rule_names(role_app, route):
    method, path = route.split(" ", 1)
    passed: set[str] = set()
    for role in ALL_ROLES:
        async with make_client(role_app, key=SECRETS[role]) as http:
            kwargs = {"json": {}} if method in ("POST", "PUT", "PATCH") else {}
            response = await http.request(method, _url(path), **kwargs)
        refused = response.status_code == 403 and response.json()["error"] == "MissingRoleError"
        if refused:
            assert "needs role" in response.json()["detail"] and f"{role}-bot" in response.json()["detail"]
        else:
            passed.add(role)
    assert passed == (EXPECTED[route] or set(ALL_ROLES))


async def test_a_refused_role_is_a_403_naming_the_missing_role(role_app):
    async with make_client(role_app, key=SECRETS["read"]) as http:
        response = await http.post("/invocations/e-1/function-responses", json={"functionResponses": []})
    assert (response.status_code, response.json()) == (403, {
        "error": "MissingRoleError",
        "detail": "POST /invocations/{invocation_id}/function-responses needs role 'answer'; principal "
                  "'read-bot' has roles ['read']"})


async def test_named_keys_are_stored_as_hashes_and_an_unnamed_key_keeps_every_role(memory_services):
    keys = parse_keys({**KEYS, "legacy-key-0001": {"users": ["*"]}})
    app = create_app(ApiSettings(app_names=["weather"], keys=keys), memory_services)
    async with make_client(app, key=SECRETS["operate"]) as ops, make_client(app, key="legacy-key-0001") as old:
        named, legacy = (await ops.get("/me")).json(), (await old.get("/me")).json()
        by_name = await make_client(app, key="operate-bot").get("/me")  # a key's name is not its secret
    assert named == {"principalId": "operate-bot", "roles": ["operate"], "users": ["*"], "apps": ["*"]}
    assert legacy == {"principalId": "key:" + hash_secret("legacy-key-0001")[:12], "roles": list(ALL_ROLES),
                      "users": ["*"], "apps": ["*"]}
    assert by_name.status_code == 401
    assert all(SECRETS[role] not in repr(keys) for role in ALL_ROLES)


async def test_keys_create_prints_a_new_key_once_and_a_keys_file_entry_holding_only_its_hash(memory_services, capsys):
    import json

    from agentq.cli import main

    assert main(["keys", "create", "approver-9", "--roles", "read,answer", "--users", "bob"]) == 0
    [key_line, _, entry_line] = capsys.readouterr().out.splitlines()
    secret = key_line.rsplit(" ", 1)[1]
    entry = json.loads(entry_line)
    app = create_app(ApiSettings(app_names=["weather"], keys=parse_keys(entry)), memory_services)
    async with make_client(app, key=secret) as http:
        me = (await http.get("/me")).json()
    assert (secret in entry_line, me) == (False, {"principalId": "approver-9", "roles": ["read", "answer"],
                                                  "users": ["bob"], "apps": ["*"]})
