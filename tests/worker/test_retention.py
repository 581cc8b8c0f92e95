"""Retention, session deletion and idle expiry in Redis, below the Runner (the store and sweeper in-process)."""

from __future__ import annotations

import asyncio
import time

import pytest
from google.genai import types

from runtime.artifacts import RedisArtifactService
from runtime.errors import FencedOutError, UsageError
from runtime.redis_store import keys, streams
from worker.fleet import lease
from worker.fleet.sweeper import sweep_once
from worker.records.follow import follow
from worker.records.record import PendingCall
from worker.records.retention import RetentionPolicy
from worker.records.store import InvocationStore
from worker.running.journal import RedisToolJournal

from .test_lifecycle import RecordingCelery

SHORT = RetentionPolicy(settled_s=0.2)


@pytest.fixture
async def store(redis_url):
    store = InvocationStore(redis_url, celery_app=RecordingCelery(), retention=SHORT)
    await store.create_session("app", "u", "s")
    yield store
    await store.aclose()


async def _keys(store, pattern: str = "*") -> list[str]:
    return sorted([key async for key in store.redis.scan_iter(match=pattern, count=1000)])


async def _sweep_until(store, done, *, within_s: float = 10.0) -> None:
    """Run sweeper passes until ``done()`` holds (polling: retention is a clock, but nothing here times it)."""
    deadline = time.monotonic() + within_s
    while not await done():
        assert time.monotonic() < deadline, "the sweeper did not get there"
        await sweep_once(store)
        await asyncio.sleep(0.05)


async def _run(store, invocation_id: str, status: str, calls: list[PendingCall] = ()):
    claim = await lease.acquire(store, invocation_id, "w")
    journal = RedisToolJournal(store)
    await journal.begin(invocation_id, "tool-call-1", "tool")
    await journal.complete(invocation_id, "tool-call-1", {"ok": True})
    if calls:
        assert await lease.add_pending(store, claim, list(calls))
    assert (await lease.settle(store, claim, status))[0] == "ok"
    return claim.where


def _own_keys(where, invocation_id: str) -> list[str]:
    return sorted([keys.invocation(where.app, where.user, invocation_id),
                   keys.invocation_settled(where.app, where.user, invocation_id),
                   keys.invocation_journal(where.app, where.user, invocation_id)])


async def _traces(store, invocation_id: str) -> dict:
    """Everything outside an invocation's own keys that can name it."""
    return {
        "index": await store.redis.hget(keys.invocation_index(), invocation_id),
        "listed": await store.redis.zscore(keys.user_invocations("app", "u"), invocation_id),
        "parked": await store.redis.zscore(keys.user_parked("app", "u"), invocation_id),
        "sweeper": await store.redis.zscore(keys.retention_due(), invocation_id),
        "keys": await _keys(store, f"*{invocation_id}*"),
    }


GONE = {"index": None, "listed": None, "parked": None, "sweeper": None, "keys": []}


async def test_a_completed_invocation_leaves_no_key_once_its_retention_has_passed(store):
    invocation_id = await store.enqueue("app", "u", "s", "hello", None, None)
    where = await _run(store, invocation_id, "completed")
    # none of its keys has a TTL: the sweeper removes the record together with its status count
    # (worker.status_counts), its settled stream and its tool journal, without a PEXPIRE of each at the settle
    ttls = {key: await store.redis.pttl(key) for key in _own_keys(where, invocation_id)}
    assert ttls == dict.fromkeys(_own_keys(where, invocation_id), -1)

    async def gone() -> bool:
        return await _traces(store, invocation_id) == GONE

    await _sweep_until(store, gone)
    assert await _traces(store, invocation_id) == GONE
    assert await store.list_invocations("app", "u") == []


async def test_a_parked_invocation_outlives_retention_with_its_tool_journal(store):
    invocation_id = await store.enqueue("app", "u", "s", "hello", None, None)
    await _run(store, invocation_id, "parked", [PendingCall(id="c1", name="approve")])
    await store.redis.zadd(keys.retention_due(), {invocation_id: 0})  # due now: the sweeper looks at it
    assert await sweep_once(store) == 1
    assert [await store.redis.pttl(keys.invocation("app", "u", invocation_id)),
            await store.redis.pttl(keys.invocation_journal("app", "u", invocation_id))] == [-1, -1]
    assert await store.redis.zscore(keys.retention_due(), invocation_id) > time.time() * 1000  # looked at later
    assert [r.id for r in await store.list_invocations("app", "u", "parked")] == [invocation_id]
    assert (await RedisToolJournal(store).get(invocation_id, "tool-call-1")).status == "completed"


async def test_deleting_a_session_cancels_its_invocations_and_leaves_no_key_of_it(store):
    await store.session_service.create_session(app_name="app", user_id="u", session_id="other")
    parked = await store.enqueue("app", "u", "s", "needs approval", None, None)
    await _run(store, parked, "parked", [PendingCall(id="c1", name="approve", deadline=time.time() + 3600)])
    running = await store.enqueue("app", "u", "s", "working", None, None)
    claim = await lease.acquire(store, running, "w")
    queued = await store.enqueue("app", "u", "s", "waiting", None, None)
    artifacts = RedisArtifactService(store.redis_url)
    await artifacts.save_artifact(app_name="app", user_id="u", session_id="s", filename="a.txt",
                                  artifact=types.Part(text="x"))
    await artifacts.aclose()

    cancelled = await store.delete_session("app", "u", "s")

    assert sorted(cancelled) == sorted([parked, running, queued])
    records = [await store.get(i) for i in (parked, running, queued)]
    assert [(r.status, r.cancel_reason, r.pending_calls) for r in records] == [
        ("cancelled", "session 's' was deleted", [])] * 3
    assert await store.list_invocations("app", "u", "parked") == []
    assert await store.redis.zcard(keys.call_deadlines()) == 0
    assert await _keys(store, "*:s:s:*") + await _keys(store, "*:a:s:*") == []  # not one key of the session
    assert await store.redis.sismember(keys.user_sessions("app", "u"), "s") == 0
    assert await lease.heartbeat(store, [claim]) == [False]  # its worker stops at the next beat
    with pytest.raises(FencedOutError):  # or at its next tool call, whichever comes first
        await RedisToolJournal(store).begin(running, "late-call", "tool")
    assert await lease.settle(store, claim, "completed") == ("lost", "")

    async def gone() -> bool:
        return all([await _traces(store, i) == GONE for i in (parked, running, queued)])

    await _sweep_until(store, gone)  # then retention takes the cancelled records too
    assert [key for key in await _keys(store, "agentq:{app/u}*") if ":s:other:" not in key] == [
        keys.user_session_ids("app", "u"), keys.user_sessions("app", "u")]


async def test_a_follower_of_an_invocation_in_a_deleted_session_ends_with_the_cancelled_status(store):
    store.retention = RetentionPolicy(settled_s=60)  # the record is still there when the follower looks
    invocation_id = await store.enqueue("app", "u", "s", "needs approval", None, None)
    await _run(store, invocation_id, "parked", [PendingCall(id="c1", name="approve")])
    await store.delete_session("app", "u", "s", reason="the user closed the chat")
    entries = [entry async for entry in follow(store, invocation_id)]
    assert [(e.kind, e.data) for e in entries] == [
        ("status", {"status": "cancelled", "detail": {"reason": "the user closed the chat"}})]


async def test_an_idle_session_is_deleted_once_its_ttl_has_passed_and_a_busy_one_is_kept(redis_url):
    store = InvocationStore(redis_url, celery_app=RecordingCelery(),
                            retention=RetentionPolicy(settled_s=60, session_idle_s=0.2))
    try:
        await store.create_session("app", "u", "idle")
        await store.create_session("app", "u", "busy")
        done = await store.enqueue("app", "u", "idle", "hello", None, None)
        await _run(store, done, "completed")
        waiting = await store.enqueue("app", "u", "busy", "queued for ever", None, None)

        async def idle_gone() -> bool:
            return not await store.redis.exists(keys.session_meta("app", "u", "idle"))

        await _sweep_until(store, idle_gone)
        await store.redis.zadd(keys.session_expiries(), {'["app","u","busy"]': 0})  # due: looked at now
        await sweep_once(store)
        assert await _keys(store, "*:s:idle:*") == []
        assert (await store.get(done)).status == "completed"  # a final record keeps its own retention
        assert await store.redis.exists(keys.session_meta("app", "u", "busy")) == 1  # something is queued
        assert (await store.get(waiting)).status == "queued"
        assert await store.redis.zscore(keys.session_expiries(), '["app","u","busy"]') > time.time() * 1000
    finally:
        await store.aclose()


async def test_pages_of_invocations_neither_lose_nor_repeat_items_while_new_ones_arrive(store):
    before = [await store.enqueue("app", "u", "s", f"m{i}", None, None) for i in range(23)]
    seen: list[str] = []
    token = None
    while True:
        page = await store_page(store, page_size=5, page_token=token)
        seen += [record.id for record in page.items]
        await store.enqueue("app", "u", "s", "arrived meanwhile", None, None)
        token = page.next_page_token
        if token is None:
            break
    assert seen == list(reversed(before))  # newest first; those that arrived later are before the first page


async def test_pages_of_the_parked_inbox_neither_lose_nor_repeat_items_while_more_park(store):
    parked = []
    for i in range(11):
        invocation_id = await store.enqueue("app", "u", "s", f"m{i}", None, None)
        await _run(store, invocation_id, "parked", [PendingCall(id=f"c{i}", name="approve")])
        parked.append(invocation_id)
    await store.create_session("app", "u", "s2")
    await store.enqueue("app", "u", "s2", "not parked", None, None)
    seen: list[str] = []
    token = None
    while True:
        page = await store_page(store, status="parked", page_size=4, page_token=token)
        seen += [record.id for record in page.items]
        newcomer = await store.enqueue("app", "u", "s", "parks meanwhile", None, None)
        await _run(store, newcomer, "parked", [PendingCall(id="late", name="approve")])
        token = page.next_page_token
        if token is None:
            break
    assert seen == list(reversed(parked))


async def test_pages_of_sessions_neither_lose_nor_repeat_items_while_new_ones_are_created(store):
    for i in range(13):
        await store.create_session("app", "u", f"s{i:02d}")
    before = sorted(["s", *[f"s{i:02d}" for i in range(13)]])
    from worker.records.listing import sessions_page

    seen: list[str] = []
    token = None
    n = 0
    while True:
        page = await sessions_page(store, "app", "u", page_size=4, page_token=token)
        seen += [session.id for session in page.items]
        n += 1
        await store.create_session("app", "u", f"a-{n}")  # sorts before every page read so far
        token = page.next_page_token
        if token is None:
            break
    assert seen == before


async def test_a_page_token_this_listing_did_not_hand_out_is_refused(store):
    with pytest.raises(UsageError, match="page token 'bogus'"):
        await store_page(store, page_token="bogus")
    with pytest.raises(UsageError, match="page size must be an integer from 1 to 1000, got 0"):
        await store_page(store, page_size=0)


async def store_page(store, **kwargs):
    from worker.records.listing import invocations_page

    return await invocations_page(store, "app", "u", **kwargs)


@pytest.mark.parametrize(("variable", "value", "message"), [
    ("AGENTQ_RETENTION_SETTLED", "0", "AGENTQ_RETENTION_SETTLED must be a duration above 0 seconds, got '0'"),
    ("AGENTQ_RETENTION_SETTLED", "-5", "AGENTQ_RETENTION_SETTLED must be a duration such as 90 (seconds), 30s, "
                                       "15m, 12h or 7d; got '-5'"),
    ("AGENTQ_RETENTION_SETTLED", "off", "AGENTQ_RETENTION_SETTLED must be a duration such as"),
    ("AGENTQ_RETENTION_SESSION_IDLE", "0d", "AGENTQ_RETENTION_SESSION_IDLE must be a duration above 0 seconds"),
    ("AGENTQ_RETENTION_STREAM_LENGTH", "0", "AGENTQ_RETENTION_STREAM_LENGTH must be an integer above 0, got '0'"),
    ("AGENTQ_PARK_TIMEOUT", "soon", "AGENTQ_PARK_TIMEOUT must be a duration such as 90 (seconds), 30s, 15m, "
                                    "12h or 7d, or off; got 'soon'"),
])
def test_retention_settings_that_make_no_sense_are_refused_naming_the_setting(variable, value, message):
    with pytest.raises(UsageError) as refused:
        RetentionPolicy.from_env({variable: value})
    assert str(refused.value).startswith(message)


def test_retention_settings_are_read_with_units_and_off(monkeypatch):
    assert RetentionPolicy.from_env({
        "AGENTQ_RETENTION_SETTLED": "12h", "AGENTQ_RETENTION_STREAM_AGE": "off",
        "AGENTQ_RETENTION_STREAM_LENGTH": "500", "AGENTQ_RETENTION_SESSION_IDLE": "30d",
        "AGENTQ_PARK_TIMEOUT": "90",
    }) == RetentionPolicy(settled_s=43200.0, stream_max_age_s=None, stream_maxlen=500,
                          session_idle_s=2592000.0, park_timeout_s=90.0)
    with pytest.raises(UsageError, match=r"AGENTQ_RETENTION_SETTLED \(settled_s\) must be a duration above 0"):
        RetentionPolicy(settled_s=-1)


def test_a_per_app_park_timeout_is_read_and_refused_naming_the_app():
    policy = RetentionPolicy.from_env({"AGENTQ_PARK_TIMEOUT": "1h",
                                       "AGENTQ_PARK_TIMEOUT_BY_APP": "transfers=15m, claims=off"})
    assert policy.park_timeout_by_app == {"transfers": 900.0, "claims": None}
    assert (policy.park_timeout_for("transfers"), policy.park_timeout_for("claims"),
            policy.park_timeout_for("weather")) == (900.0, None, 3600.0)
    for raw, message in [
        ("transfers", "AGENTQ_PARK_TIMEOUT_BY_APP must be app=value pairs separated by commas, such as "
                      "transfers=1h,claims=off; got 'transfers'"),
        ("transfers=soon", "AGENTQ_PARK_TIMEOUT_BY_APP entry for app 'transfers' must be a duration such as 90 "
                           "(seconds)"),
        ("a=1h,a=2h", "AGENTQ_PARK_TIMEOUT_BY_APP names app 'a' twice"),
    ]:
        with pytest.raises(UsageError) as refused:
            RetentionPolicy.from_env({"AGENTQ_PARK_TIMEOUT_BY_APP": raw})
        assert str(refused.value).startswith(message)


async def test_an_invocation_enqueued_without_a_deadline_gets_its_apps_default_one(redis_url):
    policy = RetentionPolicy(park_timeout_s=3600, park_timeout_by_app={"transfers": 900.0, "claims": None})
    store = InvocationStore(redis_url, celery_app=RecordingCelery(), retention=policy)
    try:
        stamped = {}
        for app in ("transfers", "claims", "weather"):
            await store.create_session(app, "u", "s")
            invocation_id = await store.enqueue(app, "u", "s", "hello", None, None)
            stamped[app] = (await store.get(invocation_id)).park_timeout
        given = await store.enqueue("transfers", "u", "s", "again", None, None, park_timeout=5)
        assert stamped == {"transfers": 900.0, "claims": None, "weather": 3600.0}
        assert (await store.get(given)).park_timeout == 5
    finally:
        await store.aclose()


def test_the_cli_refuses_to_start_with_a_retention_setting_that_makes_no_sense(monkeypatch, capsys):
    from agentq.cli import main

    monkeypatch.setenv("AGENTQ_RETENTION_SETTLED", "-1d")
    assert main(["worker", "--app", "tests.worker.apps:weather_app"]) == 2
    assert capsys.readouterr().err == ("agentq worker: AGENTQ_RETENTION_SETTLED must be a duration such as 90 "
                                       "(seconds), 30s, 15m, 12h or 7d; got '-1d'\n")


async def test_the_stream_is_trimmed_by_age_with_the_policys_max_age(redis_url):
    store = InvocationStore(redis_url, celery_app=RecordingCelery(),
                            retention=RetentionPolicy(stream_max_age_s=0.05))
    try:
        await store.create_session("app", "u", "s")
        first = await store.enqueue("app", "u", "s", "one", None, None)
        await _run(store, first, "completed")
        await asyncio.sleep(0.1)  # the entries above are now older than the max age
        second = await store.enqueue("app", "u", "s", "two", None, None)
        await _run(store, second, "completed")
        entries = await streams.read_stream(store.redis, "app", "u", "s", count=1000)
        assert {entry.invocation_id for entry in entries} == {second}
    finally:
        await store.aclose()


async def test_a_stream_no_invocation_needs_expires_after_the_max_age_and_a_parked_one_keeps_it(redis_url):
    store = InvocationStore(redis_url, celery_app=RecordingCelery(), retention=RetentionPolicy(stream_max_age_s=60))
    try:
        await store.create_session("app", "u", "s")
        await store.create_session("app", "u", "p")
        done = await store.enqueue("app", "u", "s", "one", None, None)
        await _run(store, done, "completed")
        parked = await store.enqueue("app", "u", "p", "two", None, None)
        await _run(store, parked, "parked", [PendingCall(id="c1", name="approve")])
        ttls = [await store.redis.pttl(keys.session_stream("app", "u", sid)) for sid in ("s", "p")]
        assert 0 < ttls[0] <= 60_000 and ttls[1] == -1
        await store.enqueue("app", "u", "s", "three", None, None)  # queued: needed again
        assert await store.redis.pttl(keys.session_stream("app", "u", "s")) == -1
    finally:
        await store.aclose()
