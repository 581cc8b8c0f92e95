"""The audit trail below the API: who answered, cancelled or redelivered, written by the same script call that
makes the change, on the record, its status entries, the function response event, webhooks and the app's index;
gone with the record it describes."""

from __future__ import annotations

import json
import time

import pytest

from runtime.errors import UsageError
from runtime.redis_store import keys, streams
from tests.worker.test_worker_e2e import _settled
from worker.client import AgentqClient
from worker.fleet import lease
from worker.fleet.sweeper import sweep_once
from worker.records.audit import AUDIT_KEY, app_audit_page
from worker.records.record import PendingCall
from worker.records.retention import RetentionPolicy
from worker.records.store import InvocationStore
from worker.webhooks import outbox as outbox
from worker.webhooks.deliverer import payload

ALICE = {"principal": "key:alice", "client": "10.1.2.3"}
BOB = {"principal": "key:bob", "client": "10.9.9.9"}
HOOK = "http://127.0.0.1:9/hook"  # never posted to: these tests read the outbox


class RecordingCelery:
    def __init__(self):
        self.sent: list[str] = []

    def send_task(self, name, args, queue):
        self.sent.append(args[0])


@pytest.fixture
async def store(redis_url):
    store = InvocationStore(redis_url, celery_app=RecordingCelery(), retention=RetentionPolicy(settled_s=1))
    await store.session_service.create_session(app_name="app", user_id="u", session_id="s")
    yield store
    await store.aclose()


async def _parked(store, calls, webhook=None):
    invocation_id = await store.enqueue("app", "u", "s", "one", None, None, webhook=webhook)
    claim = await lease.acquire(store, invocation_id, "w")
    assert await lease.add_pending(store, claim, calls)
    assert await lease.settle(store, claim, "parked") == ("ok", "")
    return invocation_id


async def _status_details(store, invocation_id):
    entries = await streams.read_stream(store.redis, "app", "u", "s")
    return [(e.data["status"], e.data["detail"]) for e in entries if e.kind == "status"
            and e.invocation_id == invocation_id]


async def _outbox(store, invocation_id):
    raw = await store.redis.hgetall(keys.webhook_outbox())
    return sorted((json.loads(v) for v in raw.values() if json.loads(v)["inv"] == invocation_id),
                  key=lambda entry: entry["id"])


async def test_an_answer_is_recorded_on_the_record_its_queued_status_entry_and_the_app_index(store):
    invocation_id = await _parked(store, [PendingCall(id="c1", name="approve")])
    before = time.time()
    record = await store.respond(invocation_id, [{"id": "c1", "response": {"ok": True}}], actor=ALICE)
    [entry] = record.audit
    assert before <= entry.at <= time.time()
    assert entry.to_json_dict() == {"action": "answer", "principal": "key:alice", "client": "10.1.2.3",
                                    "at": entry.at, "callIds": ["c1"]}
    assert (await store.get(invocation_id)).audit == [entry]
    assert (await _status_details(store, invocation_id))[-1] == ("queued", {
        "resumed": True, "answeredBy": {"principal": "key:alice", "client": "10.1.2.3", "at": entry.at}})
    assert await store.redis.zrange(keys.app_audit("app"), 0, -1, withscores=True) == [
        (json.dumps(["u", invocation_id], separators=(",", ":")), float(int(entry.at * 1000)))]


async def test_an_answer_reaches_the_status_webhook_that_follows(store):
    invocation_id = await _parked(store, [PendingCall(id="c1", name="approve")], webhook=HOOK)
    await store.respond(invocation_id, [{"id": "c1", "response": {"ok": True}}], actor=ALICE)
    claim = await lease.acquire(store, invocation_id, "w")
    assert (await lease.settle(store, claim, "completed"))[0] == "ok"
    parked, completed = await _outbox(store, invocation_id)
    at = (await store.get(invocation_id)).audit[0].at
    assert json.loads(payload(parked))["data"].get("audit") is None  # nobody had answered yet
    body = json.loads(payload(completed))
    assert (body["type"], body["data"]["audit"]) == ("invocation.completed", [
        {"action": "answer", "principal": "key:alice", "client": "10.1.2.3", "at": at, "callIds": ["c1"]}])


async def test_a_cancel_is_recorded_on_the_record_its_status_entry_and_its_webhook(store):
    invocation_id = await _parked(store, [PendingCall(id="c1", name="approve")], webhook=HOOK)
    record = await store.cancel(invocation_id, "no longer needed", actor=BOB)
    [entry] = record.audit
    assert entry.to_json_dict() == {"action": "cancel", "principal": "key:bob", "client": "10.9.9.9",
                                    "at": entry.at, "reason": "no longer needed"}
    who = {"principal": "key:bob", "client": "10.9.9.9", "at": entry.at}
    assert (await _status_details(store, invocation_id))[-1] == (
        "cancelled", {"reason": "no longer needed", "cancelledBy": who})
    cancelled = (await _outbox(store, invocation_id))[-1]
    assert json.loads(payload(cancelled))["data"]["audit"] == [entry.to_json_dict()]


async def test_a_redelivery_is_recorded_on_the_record_and_the_app_index(store):
    invocation_id = await _parked(store, [PendingCall(id="c1", name="approve")], webhook=HOOK)
    [entry] = await outbox.claim(store.redis, limit=10, hold_s=30)
    await outbox.dead(store.redis, entry, error="HTTP 500")
    letter = await outbox.dead_letter(store.redis, entry["id"])
    assert await outbox.redeliver(store.redis, letter, actor=BOB)
    [audited] = (await store.get(invocation_id)).audit
    assert audited.to_json_dict() == {"action": "redeliver", "principal": "key:bob", "client": "10.9.9.9",
                                      "at": audited.at, "deliveryId": entry["id"]}
    page = await app_audit_page(store, "app", allows=lambda app, user: True)
    assert [item["invocationId"] for item in page.items] == [invocation_id]


async def test_a_function_response_carrying_the_audit_key_is_refused_and_nothing_is_stored(store):
    invocation_id = await _parked(store, [PendingCall(id="c1", name="approve")])
    forged = {"id": "c1", "response": {"ok": True, AUDIT_KEY: {"c1": {"principal": "someone-else"}}}}
    with pytest.raises(UsageError, match="may not carry 'agentq:answered_by'"):
        await store.respond(invocation_id, [forged], actor=ALICE)
    record = await store.get(invocation_id)
    assert (record.status, record.audit, record.responses) == ("parked", [], [])


async def test_the_python_client_records_its_os_user_when_no_actor_is_given(store, redis_url, monkeypatch):
    monkeypatch.setattr("getpass.getuser", lambda: "carol")
    invocation_id = await _parked(store, [PendingCall(id="c1", name="approve")])
    async with AgentqClient(redis_url, celery_app=RecordingCelery()) as client:
        record = await client.respond(invocation_id, [{"id": "c1", "response": {"ok": True}}])
    assert [(e.action, e.principal, e.client) for e in record.audit] == [("answer", "cli:carol", None)]


async def test_audit_entries_expire_with_their_record_and_leave_the_app_index(store):
    invocation_id = await _parked(store, [PendingCall(id="c1", name="approve")])
    await store.cancel(invocation_id, "done", actor=BOB)
    assert len((await app_audit_page(store, "app", allows=lambda app, user: True)).items) == 1
    record_key = keys.invocation("app", "u", invocation_id)
    # the audit lives on the record: same retention (the sweeper removes the record, which has no TTL, with its
    # status count once the retention has passed)
    assert await store.redis.pttl(record_key) == -1
    deadline = time.monotonic() + 10
    while await store.redis.exists(record_key) or await store.redis.zcard(keys.app_audit("app")):
        assert time.monotonic() < deadline, "the record or its audit index member outlived the retention"
        await store.redis.zadd(keys.retention_due(), {invocation_id: 0}, xx=True)  # due now, if not swept yet
        await sweep_once(store)
        await _sleep()
    assert (await app_audit_page(store, "app", allows=lambda app, user: True)).items == []


async def _sleep():
    import asyncio

    await asyncio.sleep(0.1)


async def test_an_approval_run_by_a_worker_commits_its_function_response_event_naming_who_answered(
        workers, client, user):
    session = await client.create_session("guarded", user)
    invocation_id = await client.enqueue("guarded", user, session.id, "wire 500")
    [pending] = (await _settled(client, invocation_id, "parked")).pending_calls
    await client.approve(invocation_id, actor=ALICE)
    record = await _settled(client, invocation_id, "completed")
    at = record.audit[0].at
    stored = await client.session_service.get_session(app_name="guarded", user_id=user, session_id=session.id)
    [answer] = [e for e in stored.events if e.get_function_responses()
                and e.get_function_responses()[0].id == pending.id]
    assert (answer.author, answer.custom_metadata) == (
        "user", {AUDIT_KEY: {pending.id: {"principal": "key:alice", "client": "10.1.2.3", "at": at}}})


async def test_deleting_a_session_records_who_cancelled_its_invocations(store):
    invocation_id = await _parked(store, [PendingCall(id="c1", name="approve")], webhook=HOOK)
    assert await store.delete_session("app", "u", "s", "tidy up", actor=BOB) == [invocation_id]
    record = await store.get(invocation_id)
    [entry] = record.audit
    assert (record.status, entry.to_json_dict()) == ("cancelled", {
        "action": "cancel", "principal": "key:bob", "client": "10.9.9.9", "at": entry.at, "reason": "tidy up"})
    cancelled = (await _outbox(store, invocation_id))[-1]
    assert json.loads(payload(cancelled))["data"]["audit"] == [entry.to_json_dict()]
    page = await app_audit_page(store, "app", allows=lambda app, user: True)
    assert [(item["invocationId"], item["entries"]) for item in page.items] == [
        (invocation_id, [entry.to_json_dict()])]
