"""The invocation lifecycle in Redis, below the Runner: records, session queues, leases, fencing, responses."""

from __future__ import annotations

import asyncio

import pytest
from google.genai import types

from runtime.errors import (
    CallNotPendingError,
    FencedOutError,
    InvalidTransitionError,
    InvocationNotFoundError,
    SessionNotFoundError,
)
from runtime.events import Event
from runtime.redis_store import keys, streams
from runtime.sessions.redis_session_service import current_fence
from worker.fleet import lease, reaper
from worker.fleet.reaper import reap_once
from worker.records.follow import wait
from worker.records.record import PendingCall
from worker.records.store import InvocationStore


class RecordingCelery:
    """Stands in for the broker: remembers which run jobs were sent."""

    def __init__(self):
        self.sent: list[str] = []

    def send_task(self, name, args, queue):
        self.sent.append(args[0])


@pytest.fixture
async def store(redis_url):
    store = InvocationStore(redis_url, celery_app=RecordingCelery())
    await store.session_service.create_session(app_name="app", user_id="u", session_id="s")
    yield store
    await store.aclose()


async def test_enqueue_stores_a_queued_record_publishes_its_status_and_sends_one_job(store):
    invocation_id = await store.enqueue("app", "u", "s", "hello", {"k": 1}, {"max_llm_calls": 3}, time_limit=9)
    record = await store.get(invocation_id)
    assert record.model_dump(exclude={"created_at", "updated_at", "first_entry"}) == {
        "id": invocation_id, "app_name": "app", "user_id": "u", "session_id": "s", "status": "queued",
        "new_message": types.Content(role="user", parts=[types.Part(text="hello")]).model_dump(),
        "state_delta": {"k": 1}, "run_config": {"max_llm_calls": 3}, "pending_calls": [], "responses": [],
        "response_state_delta": None, "schedule_id": None,
        "attempts": 0, "time_limit": 9.0, "park_timeout": None, "webhook": None, "error": None,
        "cancel_reason": None, "worker": None, "finished_at": None, "audit": [], "approvals": {}, "enqueued_by": None,
            "traceparent": None, "run_span": None, "answer_traceparents": None,
    }
    entries = await streams.read_stream(store.redis, "app", "u", "s")
    assert [(e.kind, e.invocation_id, e.data) for e in entries] == [
        ("status", invocation_id, {"status": "queued", "detail": {}})
    ]
    assert record.first_entry == entries[0].id
    assert store.dispatcher.app.sent == [invocation_id]


async def test_enqueue_to_a_missing_session_is_refused_and_leaves_nothing(store):
    with pytest.raises(SessionNotFoundError, match="'nope'"):
        await store.enqueue("app", "u", "nope", "hello", None, None)
    assert await store.redis.hlen(keys.invocation_index()) == 0
    assert store.dispatcher.app.sent == []


async def test_only_the_queue_head_takes_the_lease_and_settling_hands_the_session_to_the_next(store):
    first = await store.enqueue("app", "u", "s", "one", None, None)
    second = await store.enqueue("app", "u", "s", "two", None, None)
    assert await lease.acquire(store, second, "w") == "not_head"
    claim = await lease.acquire(store, first, "w")
    assert isinstance(claim, lease.Claim) and claim.record.status == "running" and claim.record.attempts == 1
    assert await lease.acquire(store, first, "w2") == "held"  # a duplicate delivery is dropped
    assert await lease.settle(store, claim, "completed") == ("ok", second)
    assert (await store.get(first)).status == "completed"
    assert await lease.acquire(store, first, "w") == "settled"
    assert isinstance(await lease.acquire(store, second, "w"), lease.Claim)


async def test_a_new_lease_raises_the_fence_and_the_old_holder_can_neither_commit_nor_settle(store):
    invocation_id = await store.enqueue("app", "u", "s", "one", None, None)
    old = await lease.acquire(store, invocation_id, "w1", ttl_s=0.05)
    await store.redis.delete(keys.session_lease("app", "u", "s"))  # the lease ran out (worker stalled)
    new = await lease.acquire(store, invocation_id, "w2")
    assert new.fence == old.fence + 1 and new.record.attempts == 2 and new.interrupted
    assert await lease.heartbeat(store, [old, new]) == [False, True]
    session = await store.session_service.get_session(app_name="app", user_id="u", session_id="s")
    token = current_fence.set(old.fence)
    try:
        with pytest.raises(FencedOutError):
            await store.session_service.append_event(session, Event(author="user", invocation_id=invocation_id))
    finally:
        current_fence.reset(token)
    assert await lease.settle(store, old, "completed") == ("lost", "")
    assert (await store.get(invocation_id)).status == "running"


async def _parked(store, calls):
    invocation_id = await store.enqueue("app", "u", "s", "one", None, None)
    claim = await lease.acquire(store, invocation_id, "w")
    assert await lease.add_pending(store, claim, calls)
    assert await lease.settle(store, claim, "parked") == ("ok", "")
    return invocation_id


async def test_a_response_to_a_pending_call_requeues_the_invocation_and_a_replay_is_refused(store):
    invocation_id = await _parked(store, [PendingCall(id="c1", name="approve", args={"amount": 5})])
    assert [c.model_dump() for c in (await store.get(invocation_id)).pending_calls] == [
        {"id": "c1", "name": "approve", "args": {"amount": 5}, "deadline": None, "answer": None}]
    record = await store.respond(invocation_id, [{"id": "c1", "name": "approve", "response": {"ok": True}}])
    assert (record.status, record.pending_calls) == ("queued", [])
    assert [r.model_dump(exclude_none=True) for r in record.responses] == [
        {"id": "c1", "name": "approve", "response": {"ok": True}}]
    assert store.dispatcher.app.sent == [invocation_id, invocation_id]
    with pytest.raises(CallNotPendingError, match="'c1'"):
        await store.respond(invocation_id, [{"id": "c1", "response": {"ok": True}}])


async def test_an_intermediate_response_keeps_the_call_pending(store):
    invocation_id = await _parked(store, [PendingCall(id="c1", name="job"), PendingCall(id="c2", name="job")])
    record = await store.respond(invocation_id, [{"id": "c1", "response": {"progress": 50}, "will_continue": True}])
    assert [c.id for c in record.pending_calls] == ["c1", "c2"]
    record = await store.respond(invocation_id, [{"id": "c1", "response": {"done": True}}])
    assert [c.id for c in record.pending_calls] == ["c2"] and len(record.responses) == 2


async def test_unknown_invocations_and_calls_are_refused_with_their_ids(store):
    with pytest.raises(InvocationNotFoundError, match="'e-nope'"):
        await store.respond("e-nope", [{"id": "c1", "response": {}}])
    invocation_id = await _parked(store, [PendingCall(id="c1", name="approve")])
    with pytest.raises(CallNotPendingError, match="'zzz'"):
        await store.respond(invocation_id, [{"id": "zzz", "response": {}}])
    assert (await store.get(invocation_id)).status == "parked"


async def _commit_under(store, fence: int, invocation_id: str) -> None:
    """Commit one event to session 's' as the holder of ``fence`` would."""
    session = await store.session_service.get_session(app_name="app", user_id="u", session_id="s")
    token = current_fence.set(fence)
    try:
        await store.session_service.append_event(session, Event(author="user", invocation_id=invocation_id))
    finally:
        current_fence.reset(token)


async def test_a_claim_keeps_the_fence_in_the_session_meta_hash_and_leaves_no_fence_key(store):
    invocation_id = await store.enqueue("app", "u", "s", "one", None, None)
    created = int(await store.redis.hget(keys.session_meta("app", "u", "s"), "fence"))
    claim = await lease.acquire(store, invocation_id, "w")
    assert claim.fence == created + 1
    assert int(await store.redis.hget(keys.session_meta("app", "u", "s"), "fence")) == claim.fence
    assert await store.redis.exists(keys.session_fence("app", "u", "s")) == 0
    await _commit_under(store, claim.fence, invocation_id)


async def test_a_session_stored_before_the_fence_field_is_claimed_above_its_old_fence_key_and_fences_its_holder(
        store):
    meta, old_key = keys.session_meta("app", "u", "s"), keys.session_fence("app", "u", "s")
    await store.redis.hdel(meta, "fence")  # as sessions were stored before the field
    ahead = int(float(await store.redis.hget(meta, "last_update_time")) * 1000) + 10**9  # above the clock
    await store.redis.set(old_key, ahead)  # an earlier claim's token, in the key it was kept in then
    invocation_id = await store.enqueue("app", "u", "s", "one", None, None)
    claim = await lease.acquire(store, invocation_id, "w")
    assert claim.fence == ahead + 1
    assert int(await store.redis.hget(meta, "fence")) == claim.fence
    assert await store.redis.exists(old_key) == 0
    with pytest.raises(FencedOutError):
        await _commit_under(store, ahead, invocation_id)
    await _commit_under(store, claim.fence, invocation_id)


async def test_cancelling_a_run_claimed_under_the_old_fence_key_fences_it_out(store):
    meta, old_key = keys.session_meta("app", "u", "s"), keys.session_fence("app", "u", "s")
    invocation_id = await store.enqueue("app", "u", "s", "one", None, None)
    claim = await lease.acquire(store, invocation_id, "w")
    await store.redis.hdel(meta, "fence")  # as if an earlier release had claimed it: the token in its own key
    await store.redis.set(old_key, claim.fence)
    await _commit_under(store, claim.fence, invocation_id)
    await store.cancel(invocation_id, "stop")
    assert int(await store.redis.hget(meta, "fence")) > claim.fence
    with pytest.raises(FencedOutError):
        await _commit_under(store, claim.fence, invocation_id)


async def test_a_claim_on_a_session_deleted_under_its_queue_makes_no_session_meta_hash(store):
    invocation_id = await store.enqueue("app", "u", "s", "one", None, None)
    await store.session_service.delete_session(app_name="app", user_id="u", session_id="s")
    claim = await lease.acquire(store, invocation_id, "w")
    assert await store.redis.exists(keys.session_meta("app", "u", "s")) == 0
    assert int(await store.redis.get(keys.session_fence("app", "u", "s"))) == claim.fence
    assert await store.session_service.get_session(app_name="app", user_id="u", session_id="s") is None


async def test_cancelling_a_running_invocation_fences_it_out_and_passes_the_session_on(store):
    first = await store.enqueue("app", "u", "s", "one", None, None)
    second = await store.enqueue("app", "u", "s", "two", None, None)
    claim = await lease.acquire(store, first, "w")
    record = await store.cancel(first, "user changed their mind")
    assert (record.status, record.cancel_reason, record.error.model_dump()) == (
        "cancelled", "user changed their mind",
        {"type": "InvocationCancelledError", "message": "user changed their mind"})
    assert await lease.heartbeat(store, [claim]) == [False]
    assert store.dispatcher.app.sent[-1] == second
    with pytest.raises(InvalidTransitionError, match="already cancelled"):
        await store.cancel(first, "again")


async def test_the_approval_inbox_lists_a_users_parked_invocations_newest_first(store):
    first = await _parked(store, [PendingCall(id="c1", name="approve")])
    await store.session_service.create_session(app_name="app", user_id="u", session_id="s2")
    queued = await store.enqueue("app", "u", "s2", "later", None, None)
    assert [r.id for r in await store.list_invocations("app", "u", "parked")] == [first]
    assert [r.id for r in await store.list_invocations("app", "u")] == [queued, first]
    assert [r.id for r in await store.list_invocations("app", "u", session_id="s2")] == [queued]
    assert await store.list_invocations("app", "someone-else") == []


async def test_waiting_on_an_invocation_that_does_not_settle_times_out(store):
    invocation_id = await store.enqueue("app", "u", "s", "one", None, None)
    with pytest.raises(TimeoutError, match=repr(invocation_id)):
        await wait(store, invocation_id, timeout=0.2)
    claim = await lease.acquire(store, invocation_id, "w")
    await lease.settle(store, claim, "completed")
    assert (await wait(store, invocation_id, timeout=5)).status == "completed"


async def test_a_reaper_resends_a_job_nobody_claimed_and_the_job_of_a_dead_lease(store):
    lost = await store.enqueue("app", "u", "s", "one", None, None)  # its job never reaches a worker
    await store.session_service.create_session(app_name="app", user_id="u", session_id="s2")
    orphaned = await store.enqueue("app", "u", "s2", "two", None, None)
    claim = await lease.acquire(store, orphaned, "w", ttl_s=0.05)
    await lease.heartbeat(store, [claim], ttl_s=0.05)  # tracked, then its worker dies
    store.dispatcher.app.sent.clear()
    await store.redis.zadd(keys.dispatch_due(), {lost: 0})  # as if the grace period had passed
    await asyncio.sleep(0.1)
    assert await reap_once(store) == 2
    assert sorted(store.dispatcher.app.sent) == sorted([lost, orphaned])
    again = await lease.acquire(store, orphaned, "w2")
    assert (again.record.attempts, again.interrupted) == (2, True)


class _Killed(BaseException):
    """A SIGKILL's stand-in: nothing in the pass catches it."""


@pytest.mark.parametrize("entry", ["lost run job", "dead lease"])
async def test_a_reaper_killed_between_taking_an_entry_and_acting_on_it_leaves_it_to_the_next_pass(
        store, monkeypatch, entry):
    # Seen in the kill storm: a pass that removed an entry and was SIGKILLed before re-sending the job lost
    # the invocation for good (claimed, its worker killed before its first heartbeat: no other entry names it).
    invocation_id = await store.enqueue("app", "u", "s", "one", None, None)
    if entry == "dead lease":
        claim = await lease.acquire(store, invocation_id, "w", ttl_s=0.05)
        await lease.heartbeat(store, [claim], ttl_s=0.05)
        due_set = keys.lease_expiries()
    else:
        await store.redis.zadd(keys.dispatch_due(), {invocation_id: 0})  # as if the grace period had passed
        due_set = keys.dispatch_due()
    await asyncio.sleep(0.1)
    store.dispatcher.app.sent.clear()
    monkeypatch.setattr(reaper, "HOLD_S", 0.3)

    async def killed(store, invocation_id):
        raise _Killed
    monkeypatch.setattr(reaper, "_resend", killed)
    with pytest.raises(_Killed):
        await reap_once(store)
    assert await store.redis.zscore(due_set, invocation_id) is not None  # taken, not removed
    monkeypatch.undo()
    assert await reap_once(store) == 0  # held for the taker a while: nobody else acts on it meanwhile
    await asyncio.sleep(0.4)
    assert await reap_once(store) >= 1
    assert store.dispatcher.app.sent == [invocation_id]
    if entry == "dead lease":  # sent again: the dispatch watchdog covers it now, and the lease entry is done
        assert await store.redis.zscore(due_set, invocation_id) is None
    assert await store.redis.zscore(keys.dispatch_due(), invocation_id) is not None


async def test_neither_enqueue_nor_the_claim_commits_the_user_message_the_runner_is_the_one_place(store):
    invocation_id = await store.enqueue("app", "u", "s", "hello", {"k": 1}, None)
    claim = await lease.acquire(store, invocation_id, "w1")
    session = await store.session_service.get_session(app_name="app", user_id="u", session_id="s")
    assert session.events == [] and session.state == {}
    assert claim.record.new_message.parts[0].text == "hello" and claim.record.state_delta == {"k": 1}
    entries = await streams.read_stream(store.redis, "app", "u", "s")
    assert [(e.kind, e.data["status"]) for e in entries] == [("status", "queued"), ("status", "running")]
