"""Bearer keys: a key reaches only its users and apps, and sees 404 (not 403) for everything else."""

from __future__ import annotations

import pytest

from api.access.auth import KeyGrant, parse_keys
from api.settings import load_keys
from runtime.errors import UsageError

from .conftest import ALICE_KEY, BOB_KEY, make_client


async def test_a_request_without_a_key_is_refused_with_401_naming_the_header(keyed_app):
    async with make_client(keyed_app) as http:
        response = await http.get("/apps/weather/users/alice/sessions")
    assert (response.status_code, response.json(), response.headers["www-authenticate"]) == (
        401,
        {"error": "UnauthorizedError", "detail": "missing 'Authorization: Bearer <key>' header"},
        "Bearer",
    )


async def test_an_unknown_key_is_refused_with_401(keyed_app):
    async with make_client(keyed_app, key="not-a-real-key") as http:
        response = await http.get("/list-apps")
    assert (response.status_code, response.json()["detail"]) == (401, "the bearer key is not valid")


async def test_a_key_gets_404_for_another_users_session_that_exists(keyed_app):
    async with make_client(keyed_app, key=BOB_KEY) as bob:
        await bob.post("/apps/weather/users/bob/sessions", json={"sessionId": "secret"})
        own = await bob.get("/apps/weather/users/bob/sessions/secret")
    async with make_client(keyed_app, key=ALICE_KEY) as alice:
        theirs = await alice.get("/apps/weather/users/bob/sessions/secret")
        listing = await alice.get("/apps/weather/users/bob/sessions")
        create = await alice.post("/apps/weather/users/bob/sessions", json={"sessionId": "x"})
    assert own.status_code == 200
    assert [r.status_code for r in (theirs, listing, create)] == [404, 404, 404]
    assert theirs.json() == {"error": "NotFoundError", "detail": "app 'weather' has no user 'bob' visible to this key"}


async def test_a_key_limited_to_some_apps_sees_only_those_in_list_apps(keyed_app):
    async with make_client(keyed_app, key=ALICE_KEY) as alice:
        apps = await alice.get("/list-apps")
        other_app = await alice.get("/apps/reimbursement/users/alice/sessions")
    async with make_client(keyed_app, key=BOB_KEY) as bob:
        bob_apps = await bob.get("/list-apps")
    assert apps.json() == ["weather"]
    assert other_app.status_code == 404
    assert bob_apps.json() == ["reimbursement", "weather"]


async def test_with_no_keys_a_non_loopback_client_is_refused_even_for_health(open_app):
    async with make_client(open_app, host="10.1.2.3") as http:
        response = await http.get("/health")
    assert (response.status_code, response.json()) == (
        403,
        {
            "error": "NotLoopbackError",
            "detail": "no API keys are configured, so only loopback clients are served (client '10.1.2.3')",
        },
    )


async def test_with_keys_a_remote_client_is_served_and_health_needs_no_key(keyed_app):
    async with make_client(keyed_app, host="10.1.2.3") as http:
        response = await http.get("/health")
    assert (response.status_code, response.json()) == (200, {"status": "ok", "redis": "not used"})


def test_keys_parse_from_json_and_a_file_the_file_first(tmp_path):
    path = tmp_path / "keys.json"
    path.write_text('{"file-key-123": {"users": ["u1"]}, "shared-key-1": {"users": ["a"]}}')
    keys = load_keys(keys_json='{"shared-key-1": {"users": ["b"], "apps": ["x"]}}', keys_file=str(path))
    assert keys == {
        "file-key-123": KeyGrant(users=["u1"], apps=["*"]),
        "shared-key-1": KeyGrant(users=["b"], apps=["x"]),
    }


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"short": {"users": ["a"]}}, "API key 'shor'... is too short: use at least 8 characters"),
        ({"long-enough": {"users": []}}, "API key 'long'...: List should have at least 1 item after validation, not 0"),
        ({"long-enough": {"users": ["a"], "extra": 1}}, "API key 'long'...: Extra inputs are not permitted"),
    ],
)
def test_malformed_key_config_is_refused_with_a_message_naming_the_key(raw, message):
    with pytest.raises(UsageError) as caught:
        parse_keys(raw)
    assert str(caught.value) == message


def test_keys_json_that_is_not_an_object_is_refused():
    with pytest.raises(UsageError) as caught:
        load_keys(keys_json="[1, 2]")
    assert str(caught.value) == "AGENTQ_API_KEYS must be a JSON object of key -> {users, apps}"


def test_the_start_log_says_when_only_loopback_clients_are_served(open_app, keyed_app, caplog):
    from fastapi.testclient import TestClient

    caplog.set_level("INFO", logger="agentq.api")
    with TestClient(open_app):
        pass
    with TestClient(keyed_app):
        pass
    lines = [record.getMessage() for record in caplog.records if "key" in record.getMessage()]
    assert lines == [
        "agentq api: no API keys configured; serving loopback clients only",
        "agentq api: 2 bearer key(s) configured",
    ]
