"""The write side of the inbox change feed and the app-wide parked index: the status scripts keep both in the
same step as each change (a real redis-server; the store and lease calls a worker makes, in-process)."""

from __future__ import annotations

import json
import re

from runtime.redis_store import keys, scripts
from worker.fleet import lease
from worker.records.record import PendingCall
from worker.records.store import InvocationStore

from .test_lifecycle import RecordingCelery

USER = "ann/é e"  # escaped in key names, raw in the feed and the members


async def _store(redis_url) -> InvocationStore:
    store = InvocationStore(redis_url, celery_app=RecordingCelery())
    for session in ("s", "t"):
        await store.create_session("app", USER, session)
    return store


async def _park(store: InvocationStore, session: str = "s") -> str:
    invocation_id = await store.enqueue("app", USER, session, "needs approval", None, None)
    claim = await lease.acquire(store, invocation_id, "w")
    assert await lease.add_pending(store, claim, [PendingCall(id="c1", name="approve")])
    assert (await lease.settle(store, claim, "parked"))[0] == "ok"
    return invocation_id


async def _feed(store: InvocationStore) -> list[tuple[str, str, str, str]]:
    entries = await store.redis.xrange(keys.inbox_changes())
    return [(f["app"], f["user"], f["inv"], f["change"]) for _, f in entries]


async def _app_parked(store: InvocationStore) -> list[tuple[list[str], float]]:
    return [(json.loads(member), score) for member, score in
            await store.redis.zrange(keys.app_parked("app"), 0, -1, withscores=True)]


async def test_parking_adds_the_invocation_to_the_app_wide_index_and_the_feed_then_an_answer_and_the_end_follow(
        redis_url):
    store = await _store(redis_url)
    try:
        invocation_id = await _park(store)
        record = await store.get(invocation_id)
        assert await _app_parked(store) == [([USER, invocation_id], float(int(record.created_at * 1000)))]
        await store.respond(invocation_id, [{"id": "c1", "name": "approve", "response": {"ok": True}}])
        assert await _app_parked(store) == []
        claim = await lease.acquire(store, invocation_id, "w")
        assert (await lease.settle(store, claim, "completed"))[0] == "ok"
        assert await _feed(store) == [("app", USER, invocation_id, change)
                                      for change in ("parked", "answered", "settled")]
    finally:
        await store.aclose()


async def test_an_invocation_that_never_parked_leaves_the_feed_alone(redis_url):
    store = await _store(redis_url)
    try:
        invocation_id = await store.enqueue("app", USER, "s", "hello", None, None)
        claim = await lease.acquire(store, invocation_id, "w")
        assert (await lease.settle(store, claim, "completed"))[0] == "ok"
        assert await _feed(store) == []
    finally:
        await store.aclose()


async def test_an_expired_call_a_cancel_and_a_deleted_session_each_leave_the_index_and_say_so(redis_url):
    store = await _store(redis_url)
    try:
        expired = await _park(store, "s")
        # what the reaper sends for a call past its deadline (worker.reaper._expire_call)
        await store.respond(expired, [{"id": "c1", "response": {"error": "expired"}}], detail={"expired": ["c1"]})
        claim = await lease.acquire(store, expired, "w")
        assert await lease.consume_responses(store, claim, claim.response_fields)  # the Runner committed them
        assert await lease.add_pending(store, claim, [PendingCall(id="c2", name="approve")])
        assert (await lease.settle(store, claim, "parked"))[0] == "ok"
        await store.cancel(expired, "no longer needed")
        deleted = await _park(store, "t")
        assert [member for member, _ in await _app_parked(store)] == [[USER, deleted]]
        assert await store.delete_session("app", USER, "t") == [deleted]
        assert await _app_parked(store) == []
        assert await _feed(store) == [("app", USER, expired, "parked"), ("app", USER, expired, "expired"),
                                      ("app", USER, expired, "parked"), ("app", USER, expired, "cancelled"),
                                      ("app", USER, deleted, "parked"), ("app", USER, deleted, "cancelled")]
    finally:
        await store.aclose()


def test_the_feed_is_trimmed_to_the_length_the_key_names_promise():
    [maxlen] = re.findall(r"^local INBOX_CHANGES_MAXLEN = (\d+)$", scripts.SETTLE.source, re.MULTILINE)
    assert int(maxlen) == keys.INBOX_CHANGES_MAXLEN
