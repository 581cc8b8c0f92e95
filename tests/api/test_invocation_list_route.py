"""``GET /invocations?status=&app=``: invocations across apps and users, paged, scoped by the caller's key
(issue 27 item 1, what ``agentq list`` shows). Real Redis, no worker: what is enqueued stays queued."""

from __future__ import annotations

import pytest

from api import ApiSettings, create_app
from api.access.auth import parse_keys
from api.services import redis_services

from .conftest import ALICE_KEY, KEYS, make_client

OPS_KEY = "ops-key-00003"
MESSAGE = {"role": "user", "parts": [{"text": "Reimburse $20 for lunch"}]}


@pytest.fixture
async def queue_app(redis_url):
    backed = redis_services(redis_url)
    keys = parse_keys({**KEYS, OPS_KEY: {"users": ["*"], "apps": ["*"]}})
    settings = ApiSettings(app_names=["weather", "reimbursement"], keys=keys, max_body_bytes=100_000)
    yield create_app(settings, backed.services, stats_provider=backed.stats_provider)
    await backed.aclose()


async def _enqueue(http, user: str) -> str:
    await http.post(f"/apps/weather/users/{user}/sessions", json={"sessionId": "s1"})
    response = await http.post(f"/apps/weather/users/{user}/sessions/s1/invocations", json={"newMessage": MESSAGE})
    assert response.status_code == 202, response.text
    return response.json()["invocationId"]


async def test_the_list_spans_users_and_apps_the_key_may_see_and_pages_each_item_once(queue_app):
    async with make_client(queue_app, key=OPS_KEY) as http:
        ids = {user: await _enqueue(http, user) for user in ("alice", "bob", "carol")}
        everything = (await http.get("/invocations", params={"status": "queued"})).json()
        assert {item["invocationId"] for item in everything["invocations"]} == set(ids.values())
        assert everything["nextPageToken"] is None
        seen, token = [], None
        while True:
            page = (await http.get("/invocations", params={"limit": 1, **({"pageToken": token} if token else {})}))
            body = page.json()
            seen += [item["invocationId"] for item in body["invocations"]]
            token = body["nextPageToken"]
            if token is None:
                break
        assert sorted(seen) == sorted(ids.values())
        assert (await http.get("/invocations", params={"status": "failed"})).json()["invocations"] == []
        assert (await http.get("/invocations", params={"app": "reimbursement"})).json()["invocations"] == []
    async with make_client(queue_app, key=ALICE_KEY) as http:  # alice's key: her invocations only
        mine = (await http.get("/invocations")).json()
        assert [item["invocationId"] for item in mine["invocations"]] == [ids["alice"]]


async def test_the_list_refuses_a_status_that_does_not_exist_naming_it(queue_app):
    async with make_client(queue_app, key=OPS_KEY) as http:
        response = await http.get("/invocations", params={"status": "broken"})
    assert response.status_code == 422 and "status" in response.json()["detail"]
