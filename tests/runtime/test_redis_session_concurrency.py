"""Writers racing on one Redis session: stale copies and old fencing tokens are refused, nothing half-written."""

from __future__ import annotations

import asyncio

import pytest

from runtime.errors import FencedOutError, StaleSessionError
from runtime.events import Event, EventActions
from runtime.redis_store import keys
from runtime.sessions import GetSessionConfig, RedisSessionService
from runtime.sessions.redis_session_service import current_fence

APP, USER, SID = "app", "ann", "s1"


def _event(delta: dict) -> Event:
    return Event(author="agent", invocation_id="e-1", actions=EventActions(state_delta=delta))


async def _stored(service, raw) -> tuple:
    session = await service.get_session(app_name=APP, user_id=USER, session_id=SID)
    stream_length = await raw.xlen(keys.session_stream(APP, USER, SID))
    return session.version, session.state, [e.actions.state_delta for e in session.events], stream_length


async def test_of_two_writers_holding_the_same_version_exactly_one_wins(service, redis_url, raw):
    await service.create_session(app_name=APP, user_id=USER, session_id=SID)
    others = [RedisSessionService(redis_url) for _ in range(8)]
    copies = [await other.get_session(app_name=APP, user_id=USER, session_id=SID) for other in others]
    results = await asyncio.gather(
        *(other.append_event(copy, _event({"winner": i, "user:w": i})) for i, (other, copy) in
          enumerate(zip(others, copies, strict=True))),
        return_exceptions=True,
    )
    winners = [i for i, result in enumerate(results) if isinstance(result, Event)]
    assert len(winners) == 1
    assert all(isinstance(r, StaleSessionError) for i, r in enumerate(results) if i != winners[0])
    w = winners[0]
    assert await _stored(service, raw) == (1, {"winner": w, "user:w": w}, [{"winner": w, "user:w": w}], 1)
    for other in others:
        await other.aclose()


async def test_stale_session_is_refused_with_both_versions_named_and_nothing_written(service, raw):
    session = await service.create_session(app_name=APP, user_id=USER, session_id=SID)
    stale = await service.get_session(app_name=APP, user_id=USER, session_id=SID)
    await service.append_event(session, _event({"a": 1}))
    with pytest.raises(StaleSessionError, match="'s1' is at version 1, but the writer holds version 0"):
        await service.append_event(stale, _event({"a": 2, "user:b": 2, "app:c": 3}))
    assert await _stored(service, raw) == (1, {"a": 1}, [{"a": 1}], 1)
    assert (stale.version, stale.events) == (0, [])


async def test_concurrent_appends_on_one_live_session_object_all_commit_in_order(service, raw):
    session = await service.create_session(app_name=APP, user_id=USER, session_id=SID)
    events = [_event({f"k{i}": i}) for i in range(20)]
    await asyncio.gather(*(service.append_event(session, event) for event in events))
    version, state, deltas, stream_length = await _stored(service, raw)
    assert (version, session.version, stream_length) == (20, 20, 20)
    assert state == {f"k{i}": i for i in range(20)}
    assert [e.id for e in session.events] == [
        e.id for e in (await service.get_session(app_name=APP, user_id=USER, session_id=SID)).events
    ]


async def _claim(raw) -> int:
    """Bump the session's fencing token as a worker's claim does (lua/lib/fence.lua)."""
    return await raw.hincrby(keys.session_meta(APP, USER, SID), "fence", 1)


async def test_writer_with_an_old_fencing_token_is_refused_and_writes_nothing(service, raw):
    session = await service.create_session(app_name=APP, user_id=USER, session_id=SID)
    old = await _claim(raw)
    token = current_fence.set(old)
    try:
        await service.append_event(session, _event({"by": "old"}))
        new = await _claim(raw)  # another worker takes the lease
        with pytest.raises(FencedOutError, match=f"fencing token {old!r} is not the current one \\('{new}'\\)"):
            await service.append_event(session, _event({"by": "old again", "app:x": 1}))
    finally:
        current_fence.reset(token)
    assert await _stored(service, raw) == (1, {"by": "old"}, [{"by": "old"}], 1)
    token = current_fence.set(new)
    try:
        await service.append_event(session, _event({"by": "new"}))
    finally:
        current_fence.reset(token)
    assert await _stored(service, raw) == (2, {"by": "new"}, [{"by": "old"}, {"by": "new"}], 2)


async def test_a_fence_set_when_no_lease_was_ever_taken_is_refused(service, raw):
    session = await service.create_session(app_name=APP, user_id=USER, session_id=SID)
    created = await raw.hget(keys.session_meta(APP, USER, SID), "fence")  # the server clock in ms at creation
    token = current_fence.set(1)
    try:
        with pytest.raises(FencedOutError, match=f"token 1 is not the current one \\('{created}'\\)"):
            await service.append_event(session, _event({"x": 1}))
    finally:
        current_fence.reset(token)
    assert await _stored(service, raw) == (0, {}, [], 0)


async def test_a_session_stored_before_the_fence_field_is_fenced_by_its_own_fence_key(service, raw):
    session = await service.create_session(app_name=APP, user_id=USER, session_id=SID)
    await raw.hdel(keys.session_meta(APP, USER, SID), "fence")  # as sessions were stored before the field
    old = await raw.incr(keys.session_fence(APP, USER, SID))  # an old claim
    token = current_fence.set(old)
    try:
        await service.append_event(session, _event({"by": "old"}))
        new = await raw.incr(keys.session_fence(APP, USER, SID))
        with pytest.raises(FencedOutError, match=f"fencing token {old!r} is not the current one \\('{new}'\\)"):
            await service.append_event(session, _event({"by": "old again"}))
    finally:
        current_fence.reset(token)
    assert await _stored(service, raw) == (1, {"by": "old"}, [{"by": "old"}], 1)


async def test_no_fence_means_no_fence_check(service, raw):
    session = await service.create_session(app_name=APP, user_id=USER, session_id=SID)
    await raw.set(keys.session_fence(APP, USER, SID), 7)
    await service.append_event(session, _event({"x": 1}))
    assert await _stored(service, raw) == (1, {"x": 1}, [{"x": 1}], 1)


async def test_each_committed_event_costs_exactly_one_evalsha_and_a_read_one_more(service, raw):
    session = await service.create_session(app_name=APP, user_id=USER, session_id=SID)
    await service.append_event(session, _event({"warm": 1}))  # the scripts are cached from here on: the
    await service.get_session(app_name=APP, user_id=USER, session_id=SID, config=GetSessionConfig(  # commit's and
        num_recent_events=3))  # the read's (run alone, or first on its pytest process, the read's was not yet)
    sent = []
    for client in {service._clients.get(), service._clients.mux()}:  # the pool and the pipelined connection
        original = client.execute_command

        async def counting(*args, _original=original, **options):
            sent.append(args[0])
            return await _original(*args, **options)

        client.execute_command = counting
    await raw.config_resetstat()
    for i in range(10):
        await service.append_event(session, _event({"n": i, "user:u": i, "app:a": i, "temp:t": i}))
    await service.get_session(app_name=APP, user_id=USER, session_id=SID, config=GetSessionConfig(
        num_recent_events=3))
    stats = await raw.info("commandstats")
    assert sent == ["EVALSHA"] * 11
    assert stats["cmdstat_evalsha"]["calls"] == 11


async def test_append_to_a_deleted_session_changes_only_the_live_object(service, raw):
    session = await service.create_session(app_name=APP, user_id=USER, session_id=SID)
    await service.delete_session(app_name=APP, user_id=USER, session_id=SID)
    await service.append_event(session, _event({"x": 1}))
    assert (session.version, session.state) == (1, {"x": 1})
    assert await service.get_session(app_name=APP, user_id=USER, session_id=SID) is None
    assert await raw.keys("*") == ["agentq:{app}:users"]  # the user stays known to the app


def test_one_service_works_from_successive_event_loops(redis_url):
    service = RedisSessionService(redis_url)  # as Runner.run() uses it: a fresh loop per call

    async def create():
        return await service.create_session(app_name=APP, user_id=USER, session_id=SID)

    async def append(session):
        await service.append_event(session, _event({"x": 1}))
        return await service.get_session(app_name=APP, user_id=USER, session_id=SID)

    session = asyncio.run(create())
    fetched = asyncio.run(append(session))
    assert (fetched.version, fetched.state) == (1, {"x": 1})


async def test_a_retried_commit_of_the_same_event_is_not_doubled(service, raw):
    session = await service.create_session(app_name=APP, user_id=USER, session_id=SID)
    before_commit = await service.get_session(app_name=APP, user_id=USER, session_id=SID)
    event = _event({"x": 1})
    await service.append_event(session, event)
    await service.append_event(before_commit, event)  # what a client re-sending a lost reply's commit does
    assert await _stored(service, raw) == (1, {"x": 1}, [{"x": 1}], 1)
    assert before_commit.version == 1
    with pytest.raises(StaleSessionError):
        await service.append_event(before_commit.model_copy(update={"version": 0}), _event({"x": 1}))


async def test_hundreds_of_sessions_committing_at_once_all_succeed(service):
    sessions = [await service.create_session(app_name=APP, user_id=f"user{i}") for i in range(300)]
    await asyncio.gather(*(service.append_event(session, _event({"i": i})) for i, session in enumerate(sessions)))
    stored = [await service.get_session(app_name=APP, user_id=f"user{i}", session_id=s.id)
              for i, s in enumerate(sessions)]
    assert [(s.version, s.state) for s in stored] == [(1, {"i": i}) for i in range(300)]


async def test_a_delta_with_thousands_of_keys_is_committed_whole(service):
    session = await service.create_session(app_name=APP, user_id=USER, session_id=SID)
    delta = {f"k{i}": i for i in range(5000)} | {f"user:u{i}": i for i in range(5000)}
    await service.append_event(session, _event(delta))
    stored = await service.get_session(app_name=APP, user_id=USER, session_id=SID)
    assert stored.state == delta


async def test_a_claims_read_is_used_once_and_never_after_a_commit_made_it_stale(service, raw):
    from runtime.redis_store.scripts import READ_SESSION_SINCE
    from runtime.redis_store.session_layout import read_keys

    session = await service.create_session(app_name=APP, user_id=USER, session_id=SID)
    basis, args = service.claimed_read_args(APP, USER, SID)
    held = {name: value for name, value in args.items() if name.startswith("held_")}
    claimed = await READ_SESSION_SINCE(raw, **read_keys(APP, USER, SID, False), **held)
    await raw.hset(keys.session_state(APP, USER, SID), "written", '"after the claim"')  # shows which read served

    async def two_reads():
        service.adopt_claimed_read(APP, USER, SID, basis, claimed)
        return [(await service.get_session(app_name=APP, user_id=USER, session_id=SID)).state for _ in "12"]

    assert await asyncio.create_task(two_reads()) == [{}, {"written": "after the claim"}]  # the claim's, then Redis

    async def read_after_a_commit():
        service.adopt_claimed_read(APP, USER, SID, basis, claimed)
        await service.append_event(session, _event({"n": 1}))
        return await service.get_session(app_name=APP, user_id=USER, session_id=SID)

    fetched = await asyncio.create_task(read_after_a_commit())
    assert (fetched.version, fetched.state) == (1, {"written": "after the claim", "n": 1})
