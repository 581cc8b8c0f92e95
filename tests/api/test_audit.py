"""The audit routes over real Redis, no worker (the test plays it): who answered, cancelled or redelivered, with
the caller's principal and client address, on the record, its status entries, its webhook and both audit routes;
scoped like every other read; written by no route."""

from __future__ import annotations

import json

import pytest

from api import ApiSettings, create_app
from api.access.auth import key_principal_id, parse_keys
from api.services import redis_services
from runtime.redis_store import keys, streams
from worker.fleet import lease
from worker.records.audit import AUDIT_KEY
from worker.records.record import PendingCall
from worker.webhooks import outbox as outbox
from worker.webhooks.deliverer import payload

from .conftest import make_client

ALICE, BOB, OPS = "alice-key-0001", "bob-key-000002", "ops-key-000003"
KEYS = {ALICE: {"users": ["alice"], "apps": ["weather"]}, BOB: {"users": ["bob"], "apps": ["*"]},
        OPS: {"users": ["*"], "apps": ["*"]}}
HOOK = "http://127.0.0.1:9/hook"  # never posted to: the test reads the outbox


def wire(entry: dict) -> dict:
    """An entry as the routes show it: every field, unset ones null."""
    return {"callIds": None, "reason": None, "deliveryId": None, "client": None, **entry}



@pytest.fixture
async def app(redis_url):
    backed = redis_services(redis_url)
    settings = ApiSettings(app_names=["weather", "reimbursement"], keys=parse_keys(KEYS))
    yield create_app(settings, backed.services, stats_provider=backed.stats_provider)
    await backed.aclose()


async def _parked(store, user: str, app: str = "weather", webhook: str | None = None) -> str:
    session = await store.create_session(app, user)
    invocation_id = await store.enqueue(app, user, session.id, "Pay 5", None, None, webhook=webhook)
    claim = await lease.acquire(store, invocation_id, "test-worker")
    await lease.add_pending(store, claim, [PendingCall(id="call-1", name="ask_for_approval", args={"amount": 5})])
    await lease.settle(store, claim, "parked")
    return invocation_id


async def _last_status(store, invocation_id):
    record = await store.get(invocation_id)
    entries = await streams.read_stream(store.redis, record.app_name, record.user_id, record.session_id)
    return [e.data for e in entries if e.kind == "status" and e.invocation_id == invocation_id][-1]


async def test_an_answer_is_audited_with_the_callers_principal_and_client_on_the_record_and_both_routes(app, store):
    invocation_id = await _parked(store, "alice")
    async with make_client(app, key=ALICE, host="203.0.113.7") as http:
        answered = await http.post(f"/invocations/{invocation_id}/function-responses", json={
            "functionResponses": [{"id": "call-1", "name": "ask_for_approval", "response": {"approved": True}}]})
        assert answered.status_code == 202, answered.text
        [entry] = (await store.get(invocation_id)).audit
        expected = {"action": "answer", "principal": key_principal_id(ALICE), "client": "203.0.113.7",
                    "at": entry.at, "callIds": ["call-1"]}
        assert entry.to_json_dict() == expected
        own = await http.get(f"/invocations/{invocation_id}/audit")
        assert (own.status_code, own.json()) == (200, {
            "invocationId": invocation_id, "appName": "weather", "userId": "alice",
            "sessionId": (await store.get(invocation_id)).session_id, "entries": [wire(expected)]})
        listed = await http.get("/apps/weather/audit")
        assert (listed.status_code, listed.json()) == (200, {"invocations": [own.json()], "nextPageToken": None})
    assert (await _last_status(store, invocation_id))["detail"]["answeredBy"] == {
        "principal": key_principal_id(ALICE), "client": "203.0.113.7", "at": entry.at}


async def test_a_cancel_is_audited_on_the_record_its_status_entry_its_webhook_and_both_routes(app, store):
    invocation_id = await _parked(store, "alice", webhook=HOOK)
    async with make_client(app, key=ALICE, host="198.51.100.4") as http:
        cancelled = await http.post(f"/invocations/{invocation_id}/cancel", json={"reason": "not needed"})
        assert cancelled.status_code == 200, cancelled.text
        [entry] = (await store.get(invocation_id)).audit
        expected = {"action": "cancel", "principal": key_principal_id(ALICE), "client": "198.51.100.4",
                    "at": entry.at, "reason": "not needed"}
        assert (await http.get(f"/invocations/{invocation_id}/audit")).json()["entries"] == [wire(expected)]
        assert (await http.get("/apps/weather/audit")).json()["invocations"][0]["entries"] == [wire(expected)]
    assert (await _last_status(store, invocation_id))["detail"] == {"reason": "not needed", "cancelledBy": {
        "principal": key_principal_id(ALICE), "client": "198.51.100.4", "at": entry.at}}
    notes = [json.loads(v) for v in (await store.redis.hgetall(keys.webhook_outbox())).values()]
    [note] = [n for n in notes if n["event"] == "cancelled"]
    assert json.loads(payload(note))["data"]["audit"] == [expected]


async def test_a_redelivery_is_audited_with_the_operators_principal_and_client(app, store):
    invocation_id = await _parked(store, "alice", webhook=HOOK)
    [note] = await outbox.claim(store.redis, limit=10, hold_s=30)
    await outbox.dead(store.redis, note, error="HTTP 500")
    async with make_client(app, key=OPS, host="192.0.2.9") as http:
        redelivered = await http.post(f"/webhooks/dead-letters/{note['id']}/redeliver")
        assert redelivered.status_code == 202, redelivered.text
        entries = (await http.get(f"/invocations/{invocation_id}/audit")).json()["entries"]
    assert entries == [wire({"action": "redeliver", "principal": key_principal_id(OPS), "client": "192.0.2.9",
                             "at": entries[0]["at"], "deliveryId": note["id"]})]


async def test_the_audit_routes_follow_the_callers_scope_another_users_invocation_is_a_404(app, store):
    alices = await _parked(store, "alice")
    bobs = await _parked(store, "bob")
    for invocation_id in (alices, bobs):
        await store.cancel(invocation_id, "tidy", actor={"principal": "key:ops", "client": None})
    async with make_client(app, key=ALICE) as alice, make_client(app, key=BOB) as bob:
        assert (await alice.get(f"/invocations/{bobs}/audit")).status_code == 404
        assert (await bob.get(f"/invocations/{alices}/audit")).status_code == 404
        assert (await alice.get("/invocations/e-nope/audit")).status_code == 404
        assert [i["invocationId"] for i in (await alice.get("/apps/weather/audit")).json()["invocations"]] == [alices]
        assert [i["invocationId"] for i in (await bob.get("/apps/weather/audit")).json()["invocations"]] == [bobs]
        assert (await alice.get("/apps/reimbursement/audit")).status_code == 404  # her key does not reach it
        assert (await bob.get("/apps/not-served/audit")).status_code == 404


async def test_the_app_audit_route_pages_newest_first_without_repeats(app, store):
    made = []
    for _ in range(5):
        invocation_id = await _parked(store, "bob")
        await store.cancel(invocation_id, "paging", actor={"principal": "key:ops", "client": None})
        made.append(invocation_id)
    seen, token = [], None
    async with make_client(app, key=BOB) as http:
        while True:
            params = {"limit": 2, **({"pageToken": token} if token else {})}
            body = (await http.get("/apps/weather/audit", params=params)).json()
            assert len(body["invocations"]) <= 2
            seen += [item["invocationId"] for item in body["invocations"]]
            token = body["nextPageToken"]
            if token is None:
                break
        assert (await http.get("/apps/weather/audit", params={"pageToken": "nope"})).status_code == 400
    assert seen == list(reversed(made))


async def test_a_client_cannot_forge_the_audit_metadata(app, store):
    invocation_id = await _parked(store, "alice")
    forged_meta = {"id": "call-1", "name": "ask_for_approval", "response": {"approved": True},
                   "customMetadata": {AUDIT_KEY: {"call-1": {"principal": "key:someone-else"}}}}
    forged_key = {"id": "call-1", "name": "ask_for_approval",
                  "response": {"approved": True, AUDIT_KEY: {"call-1": {"principal": "key:someone-else"}}}}
    async with make_client(app, key=ALICE) as http:
        meta = await http.post(f"/invocations/{invocation_id}/function-responses",
                               json={"functionResponses": [forged_meta]})
        key = await http.post(f"/invocations/{invocation_id}/function-responses",
                              json={"functionResponses": [forged_key]})
        assert meta.status_code == 422  # the body takes no custom_metadata at all
        assert (key.status_code, key.json()["detail"]) == (400, (
            "function response 'call-1' may not carry 'agentq:answered_by': who answered is recorded by agentq, "
            "never taken from the answer"))
        record = await store.get(invocation_id)
        assert (record.status, record.audit, record.responses) == ("parked", [], [])
        # and no route writes the trail
        for method in ("POST", "PUT", "PATCH", "DELETE"):
            assert (await http.request(method, f"/invocations/{invocation_id}/audit")).status_code == 405
            assert (await http.request(method, "/apps/weather/audit")).status_code == 405


async def test_an_answer_through_adks_run_route_is_audited_with_the_caller(app, store):
    import asyncio

    invocation_id = await _parked(store, "alice")
    session_id = (await store.get(invocation_id)).session_id
    body = {"appName": "weather", "userId": "alice", "sessionId": session_id, "newMessage": {"role": "user", "parts": [
        {"functionResponse": {"id": "call-1", "name": "ask_for_approval", "response": {"approved": True}}}]}}
    async with make_client(app, key=ALICE, host="203.0.113.8") as http:
        running = asyncio.create_task(http.post("/run", json=body))  # waits for a worker there is none of
        try:
            async with asyncio.timeout(10):
                while not (record := await store.get(invocation_id)).audit:
                    await asyncio.sleep(0.05)
        finally:
            running.cancel()
    assert [(e.action, e.principal, e.client, e.call_ids) for e in record.audit] == [
        ("answer", key_principal_id(ALICE), "203.0.113.8", ["call-1"])]
