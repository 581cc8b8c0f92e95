"""The approver page's JSON routes over real Redis, no worker: the cross-user inbox, the ops summary, /ui."""

from __future__ import annotations

import pytest

from api import ApiSettings, create_app
from api.access.auth import parse_keys
from api.services import redis_services
from worker.fleet import lease
from worker.fleet.workers_alive import beater
from worker.records.record import PendingCall

from .conftest import make_client

ALICE, BOB, ADMIN = "alice-key-0001", "bob-key-000002", "admin-key-0003"
KEYS = {ALICE: {"users": ["alice"], "apps": ["weather"]}, BOB: {"users": ["bob"], "apps": ["*"]},
        ADMIN: {"users": ["*"], "apps": ["*"]}}



@pytest.fixture
async def app(redis_url):
    backed = redis_services(redis_url)
    settings = ApiSettings(app_names=["weather", "reimbursement"], keys=parse_keys(KEYS))
    yield create_app(settings, backed.services, stats_provider=backed.stats_provider)
    await backed.aclose()


async def _parked(store, app: str, user: str, amount: int) -> str:
    session = await store.create_session(app, user)
    invocation_id = await store.enqueue(app, user, session.id, f"Pay {amount}", None, None)
    claim = await lease.acquire(store, invocation_id, "test-worker")
    await lease.add_pending(store, claim, [PendingCall(id=f"call-{amount}", name="ask_for_approval",
                                                       args={"amount": amount})])
    await lease.settle(store, claim, "parked")
    return invocation_id


async def _ids(http, **params) -> tuple[list[str], str | None, int]:
    body = (await http.get("/inbox", params=params)).json()
    return [item["invocationId"] for item in body["invocations"]], body["nextPageToken"], body["total"]


async def test_the_inbox_pages_every_visible_parked_invocation_across_users_and_apps_newest_first(app, store):
    made = [await _parked(store, app_name, user, amount) for amount, (app_name, user) in enumerate(
        [("weather", "alice"), ("reimbursement", "bob"), ("weather", "bob"), ("weather", "alice"),
         ("reimbursement", "carol")])]
    async with make_client(app, key=ADMIN) as http:
        first, token, total = await _ids(http, limit=2)
        second, token2, _ = await _ids(http, limit=2, pageToken=token)
        third, token3, _ = await _ids(http, limit=2, pageToken=token2)
        item = (await http.get("/inbox", params={"limit": 1})).json()["invocations"][0]
    assert (first + second + third, token3, total) == (made[::-1], None, 5)
    assert (item["status"], item["appName"], item["userId"], item["pendingCalls"][0]["args"]) == (
        "parked", "reimbursement", "carol", {"amount": 4})


async def test_a_key_sees_only_its_users_and_apps_and_filters_narrow_the_inbox(app, store):
    alice_weather = await _parked(store, "weather", "alice", 1)
    await _parked(store, "reimbursement", "alice", 2)  # alice's key does not reach this app
    bob_weather = await _parked(store, "weather", "bob", 3)
    bob_reimbursement = await _parked(store, "reimbursement", "bob", 4)
    async with make_client(app, key=ALICE) as alice, make_client(app, key=BOB) as bob:
        assert await _ids(alice) == ([alice_weather], None, 1)
        assert await _ids(alice, user="bob") == ([], None, 0)
        assert await _ids(bob) == ([bob_reimbursement, bob_weather], None, 2)
        assert await _ids(bob, app="weather") == ([bob_weather], None, 1)
        assert (await bob.get("/inbox", params={"pageToken": "bogus"})).status_code == 400
        assert (await bob.get("/inbox", headers={"Authorization": "Bearer nope-nope-nope"})).status_code == 401


async def test_the_ops_summary_counts_what_the_key_sees_and_says_when_no_worker_is_alive(app, store):
    await _parked(store, "weather", "alice", 1)
    await _parked(store, "weather", "bob", 2)
    session = await store.create_session("weather", "alice")
    await store.enqueue("weather", "alice", session.id, "still queued", None, None)
    async with make_client(app, key=ALICE) as http:
        before = (await http.get("/ops/summary")).json()
        await beater(store, "worker-1")()
        after = (await http.get("/ops/summary")).json()
    assert before == {
        "counts": {"queued": 1, "running": 0, "parked": 1, "completed": 0, "failed": 0, "cancelled": 0},
        "sampled": False, "queueDepth": 0, "workersAlive": 0, "workers": []}
    assert (after["workersAlive"], [w["name"] for w in after["workers"]]) == (1, ["worker-1"])


async def test_the_page_is_served_at_ui_and_the_root_redirects_there(app):
    async with make_client(app) as http:
        root = await http.get("/")
        page = await http.get("/ui")
        script = await http.get("/ui/static/app.js")
    assert (root.status_code, root.headers["location"]) == (307, "/ui")
    assert page.status_code == 200 and '<script type="module" src="/ui/static/app.js">' in page.text
    assert script.status_code == 200 and "javascript" in script.headers["content-type"]
