"""One contract, two stores: every test runs on InMemorySessionService and on RedisSessionService."""

from __future__ import annotations

import pytest

from runtime.errors import InvalidStateValueError, SessionExistsError
from runtime.events import Event, EventActions
from runtime.sessions import GetSessionConfig, InMemorySessionService, Session


@pytest.fixture(params=["memory", "redis", "redis-cluster", "redis-given-bytes-client", "redis-history-cache"])
async def service(request):
    if request.param == "memory":
        yield InMemorySessionService()
        return
    import redis.asyncio as aioredis

    from runtime.sessions import RedisSessionService

    # redis-cluster: a real three-master Redis Cluster (app state on its own slot: its own round trip)
    url = request.getfixturevalue("redis_cluster_url" if request.param == "redis-cluster" else "redis_url")
    given = aioredis.Redis.from_url(url) if request.param == "redis-given-bytes-client" else None
    # A worker's service keeps parsed histories between reads: what every read returns must not change.
    cache_bytes = 1 << 20 if request.param == "redis-history-cache" else 0
    redis_service = RedisSessionService(None if given else url, client=given, history_cache_bytes=cache_bytes)
    yield redis_service
    await redis_service.aclose()
    if given is not None:
        await given.aclose()


def _event(author="agent", delta=None, timestamp=None, **fields) -> Event:
    extra = {"timestamp": timestamp} if timestamp is not None else {}
    return Event(author=author, invocation_id="e-1", actions=EventActions(state_delta=delta or {}), **extra, **fields)


def _dump(events: list[Event]) -> list[dict]:
    return [event.to_json_dict() for event in events]


async def test_created_session_is_returned_by_get_with_its_state_and_no_events(service):
    created = await service.create_session(app_name="app", user_id="ann", session_id="s1", state={"k": 1})
    fetched = await service.get_session(app_name="app", user_id="ann", session_id="s1")
    assert (created.id, created.app_name, created.user_id, created.state, created.events, created.version) == (
        "s1", "app", "ann", {"k": 1}, [], 0
    )
    assert fetched.model_dump() == created.model_dump()


async def test_session_id_is_generated_when_not_given(service):
    first = await service.create_session(app_name="app", user_id="ann")
    second = await service.create_session(app_name="app", user_id="ann")
    assert first.id != second.id and len(first.id) > 8


async def test_creating_a_taken_session_id_is_refused(service):
    await service.create_session(app_name="app", user_id="ann", session_id="s1", state={"k": 1})
    with pytest.raises(SessionExistsError, match="'s1'"):
        await service.create_session(app_name="app", user_id="ann", session_id="s1", state={"k": 2})
    fetched = await service.get_session(app_name="app", user_id="ann", session_id="s1")
    assert fetched.state == {"k": 1}


async def test_unknown_session_is_none(service):
    await service.create_session(app_name="app", user_id="ann", session_id="s1")
    assert await service.get_session(app_name="app", user_id="ann", session_id="nope") is None
    assert await service.get_session(app_name="app", user_id="bob", session_id="s1") is None
    assert await service.get_session(app_name="other", user_id="ann", session_id="s1") is None


async def test_appended_events_come_back_in_order_with_state_and_version(service):
    session = await service.create_session(app_name="app", user_id="ann", session_id="s1")
    events = [_event(delta={"n": i}, content=None) for i in range(3)]
    for event in events:
        await service.append_event(session, event)
    fetched = await service.get_session(app_name="app", user_id="ann", session_id="s1")
    assert _dump(fetched.events) == _dump(events)
    assert (fetched.state, fetched.version, session.version) == ({"n": 2}, 3, 3)
    assert fetched.last_update_time == events[-1].timestamp


async def test_prefix_scopes_are_shared_by_user_and_by_app(service):
    ann1 = await service.create_session(app_name="app", user_id="ann", session_id="a1")
    await service.append_event(ann1, _event(delta={"s": 1, "user:u": "ann", "app:a": "shared"}))
    ann2 = await service.create_session(app_name="app", user_id="ann", session_id="a2")
    bob = await service.create_session(app_name="app", user_id="bob", session_id="b1")
    elsewhere = await service.create_session(app_name="other", user_id="ann", session_id="o1")
    assert ann2.state == {"user:u": "ann", "app:a": "shared"}
    assert bob.state == {"app:a": "shared"}
    assert elsewhere.state == {}
    await service.append_event(bob, _event(delta={"app:a": "by bob", "user:u": "bob"}))
    fetched = await service.get_session(app_name="app", user_id="ann", session_id="a1")
    assert fetched.state == {"s": 1, "user:u": "ann", "app:a": "by bob"}


async def test_create_session_state_is_stored_by_prefix_and_temp_is_dropped(service):
    await service.create_session(
        app_name="app", user_id="ann", session_id="a1", state={"s": 1, "user:u": 2, "app:a": 3, "temp:t": 4}
    )
    other = await service.create_session(app_name="app", user_id="ann", session_id="a2")
    assert other.state == {"user:u": 2, "app:a": 3}
    fetched = await service.get_session(app_name="app", user_id="ann", session_id="a1")
    assert fetched.state == {"s": 1, "user:u": 2, "app:a": 3}


async def test_temp_keys_are_never_stored(service):
    session = await service.create_session(app_name="app", user_id="ann", session_id="s1")
    await service.append_event(session, _event(delta={"temp:scratch": [1], "kept": True}))
    fetched = await service.get_session(app_name="app", user_id="ann", session_id="s1")
    assert fetched.state == {"kept": True}
    assert fetched.events[0].actions.state_delta == {"kept": True}


async def test_partial_events_are_not_stored(service):
    session = await service.create_session(app_name="app", user_id="ann", session_id="s1")
    partial = _event(delta={"x": 1}, partial=True)
    returned = await service.append_event(session, partial)
    fetched = await service.get_session(app_name="app", user_id="ann", session_id="s1")
    assert returned is partial
    assert (fetched.events, fetched.state, fetched.version, session.version) == ([], {}, 0, 0)


async def test_value_that_is_not_json_is_refused_naming_the_key_and_nothing_is_written(service):
    session = await service.create_session(app_name="app", user_id="ann", session_id="s1")
    with pytest.raises(InvalidStateValueError, match="'user:when'"):
        await service.append_event(session, _event(delta={"ok": 1, "user:when": object()}))
    with pytest.raises(InvalidStateValueError, match="'bad'"):
        await service.create_session(app_name="app", user_id="ann", session_id="s2", state={"bad": {1, 2}})
    fetched = await service.get_session(app_name="app", user_id="ann", session_id="s1")
    assert (fetched.events, fetched.state, fetched.version) == ([], {}, 0)
    assert await service.get_session(app_name="app", user_id="ann", session_id="s2") is None


async def test_num_recent_events_returns_the_last_n(service):
    session = await service.create_session(app_name="app", user_id="ann", session_id="s1")
    events = [_event(delta={"n": i}) for i in range(6)]
    for event in events:
        await service.append_event(session, event)
    recent = await service.get_session(
        app_name="app", user_id="ann", session_id="s1", config=GetSessionConfig(num_recent_events=2)
    )
    everything = await service.get_session(
        app_name="app", user_id="ann", session_id="s1", config=GetSessionConfig(num_recent_events=0)
    )
    assert _dump(recent.events) == _dump(events[-2:])
    assert _dump(everything.events) == _dump(events)
    assert (recent.state, recent.version) == ({"n": 5}, 6)


async def test_after_timestamp_returns_events_at_or_after_it(service):
    session = await service.create_session(app_name="app", user_id="ann", session_id="s1")
    events = [_event(timestamp=1000.0 + i) for i in range(6)]
    for event in events:
        await service.append_event(session, event)

    async def after(ts, recent=None):
        config = GetSessionConfig(after_timestamp=ts, num_recent_events=recent)
        fetched = await service.get_session(app_name="app", user_id="ann", session_id="s1", config=config)
        return _dump(fetched.events)

    assert await after(1003.0) == _dump(events[3:])
    assert await after(1002.5) == _dump(events[3:])
    assert await after(1003.0, recent=2) == _dump(events[4:])
    assert await after(999.0) == _dump(events)
    assert await after(2000.0) == []


async def test_list_sessions_returns_sessions_without_events_per_user_or_per_app(service):
    ann = await service.create_session(app_name="app", user_id="ann", session_id="a1", state={"k": "v"})
    await service.append_event(ann, _event(delta={"user:name": "Ann"}))
    await service.create_session(app_name="app", user_id="bob", session_id="b1")
    await service.create_session(app_name="other", user_id="ann", session_id="o1")
    by_ann = (await service.list_sessions(app_name="app", user_id="ann")).sessions
    by_app = (await service.list_sessions(app_name="app")).sessions
    assert [(s.id, s.user_id, s.state, s.events, s.version) for s in by_ann] == [
        ("a1", "ann", {"k": "v", "user:name": "Ann"}, [], 1)
    ]
    assert sorted((s.id, s.user_id) for s in by_app) == [("a1", "ann"), ("b1", "bob")]
    assert (await service.list_sessions(app_name="app", user_id="carl")).sessions == []


async def test_deleted_session_is_gone_and_deleting_twice_is_fine(service):
    session = await service.create_session(app_name="app", user_id="ann", session_id="s1")
    await service.append_event(session, _event(delta={"x": 1}))
    await service.create_session(app_name="app", user_id="ann", session_id="s2")
    await service.delete_session(app_name="app", user_id="ann", session_id="s1")
    await service.delete_session(app_name="app", user_id="ann", session_id="s1")
    assert await service.get_session(app_name="app", user_id="ann", session_id="s1") is None
    assert [s.id for s in (await service.list_sessions(app_name="app", user_id="ann")).sessions] == ["s2"]
    recreated = await service.create_session(app_name="app", user_id="ann", session_id="s1")
    assert (recreated.events, recreated.state, recreated.version) == ([], {}, 0)


async def test_returned_session_is_a_copy_the_caller_may_mutate(service):
    await service.create_session(app_name="app", user_id="ann", session_id="s1", state={"k": [1]})
    fetched = await service.get_session(app_name="app", user_id="ann", session_id="s1")
    fetched.state["k"].append(2)
    again = await service.get_session(app_name="app", user_id="ann", session_id="s1")
    assert again.state == {"k": [1]}


async def test_events_with_content_and_actions_round_trip_whole(service):
    from google.genai import types

    session = await service.create_session(app_name="app", user_id="ann", session_id="s1")
    call = Event(
        author="agent", invocation_id="e-9", branch="root.child",
        content=types.Content(role="model", parts=[types.Part(function_call=types.FunctionCall(
            id="c1", name="approve", args={"amount": 12.5}))]),
        long_running_tool_ids={"c1"},
        actions=EventActions(artifact_delta={"f.txt": 0}, transfer_to_agent="other", agent_state={"i": 2}),
    )
    await service.append_event(session, call)
    fetched = await service.get_session(app_name="app", user_id="ann", session_id="s1")
    assert fetched.events[0].model_dump() == call.model_dump()
    assert isinstance(fetched, Session)


async def test_after_timestamp_filters_exactly_when_timestamps_go_back(service):
    session = await service.create_session(app_name="app", user_id="ann", session_id="s1")
    events = [_event(timestamp=ts) for ts in (1000.0, 1005.0, 1002.0, 1006.0, 1003.0)]
    for event in events:
        await service.append_event(session, event)
    fetched = await service.get_session(
        app_name="app", user_id="ann", session_id="s1", config=GetSessionConfig(after_timestamp=1003.0)
    )
    assert [event.timestamp for event in fetched.events] == [1005.0, 1006.0, 1003.0]
