"""Session streams: commits and worker entries in one ordered stream, resumable from any entry, trimmed safely."""

from __future__ import annotations

import asyncio

import pytest

from runtime.events import Event
from runtime.redis_store import keys
from runtime.redis_store.redis_url import redis_client_from_url
from runtime.redis_store.streams import (
    StreamEntry,
    last_entry_id,
    publish_event,
    read_page,
    read_stream,
)
from runtime.sessions import RedisSessionService
from tests.stream_writers import (
    follow_stream,
    mark_invocation_active,
    mark_invocation_settled,
    publish_status,
)

APP, USER, SID = "app", "ann", "s1"


@pytest.fixture(params=["redis", "redis-cluster"])
def store_url(request) -> str:
    """One redis-server, or a real three-master Redis Cluster."""
    return request.getfixturevalue("redis_cluster_url" if request.param == "redis-cluster" else "redis_url")


@pytest.fixture
async def client(store_url):
    client = redis_client_from_url(store_url, decode_responses=True)
    yield client
    await client.aclose()


async def _publish_mixed(client, count: int, invocations=("e-1", "e-2")) -> list[str]:
    ids = []
    for i in range(count):
        inv = invocations[i % len(invocations)]
        if i % 3 == 0:
            ids.append(await publish_status(client, APP, USER, SID, inv, "running", {"i": i}))
        else:
            event = Event(author="agent", invocation_id=inv, partial=True, id=f"ev{i}", timestamp=float(i))
            ids.append(await publish_event(client, APP, USER, SID, inv, event))
    return ids


async def test_committed_partial_and_status_entries_share_one_ordered_stream(store_url, client):
    service = RedisSessionService(store_url)
    session = await service.create_session(app_name=APP, user_id=USER, session_id=SID)
    status_id = await publish_status(client, APP, USER, SID, "e-1", "running", {"worker": "w1"})
    partial = Event(author="agent", invocation_id="e-1", partial=True, id="p1", timestamp=1.0)
    partial_id = await publish_event(client, APP, USER, SID, "e-1", partial)
    final = Event(author="agent", invocation_id="e-1", id="f1", timestamp=2.0)
    await service.append_event(session, final)
    entries = await read_stream(client, APP, USER, SID)
    assert entries == [
        StreamEntry(id=status_id, kind="status", invocation_id="e-1",
                    data={"status": "running", "detail": {"worker": "w1"}}),
        StreamEntry(id=partial_id, kind="event", invocation_id="e-1", data=partial.to_json_dict()),
        StreamEntry(id=entries[2].id, kind="event", invocation_id="e-1", data=final.to_json_dict()),
    ]
    await service.aclose()


async def test_reading_after_every_entry_returns_exactly_the_entries_after_it(client):
    ids = await _publish_mixed(client, 25)
    for position, after in enumerate(["0-0", *ids]):
        seen, cursor = [], after
        while True:
            page = await read_stream(client, APP, USER, SID, cursor, count=4)
            if not page:
                break
            seen += [entry.id for entry in page]
            cursor = page[-1].id
        assert seen == ids[position:]


async def test_reading_one_invocation_skips_the_others_without_loss_or_duplicates(client):
    ids = await _publish_mixed(client, 20)
    mine = [entry_id for i, entry_id in enumerate(ids) if i % 2 == 1]
    for after in ["0-0", *ids]:
        seen, cursor = [], after
        while True:
            page, cursor = await read_page(client, APP, USER, SID, cursor, invocation_id="e-2", count=3)
            if not page:
                break
            assert {entry.invocation_id for entry in page} == {"e-2"}
            seen += [entry.id for entry in page]
        assert seen == [entry_id for entry_id in mine if _after(entry_id, after)]


def _after(entry_id: str, after: str) -> bool:
    return tuple(map(int, entry_id.split("-"))) > tuple(map(int, after.split("-")))


async def test_blocking_read_wakes_for_an_entry_published_later(client):
    start = await last_entry_id(client, APP, USER, SID)
    reader = asyncio.create_task(read_stream(client, APP, USER, SID, start, invocation_id="e-1", block_ms=10_000))
    await asyncio.sleep(0.05)
    await publish_status(client, APP, USER, SID, "e-other", "running")
    entry_id = await publish_status(client, APP, USER, SID, "e-1", "completed", {"final": True})
    assert await reader == [
        StreamEntry(id=entry_id, kind="status", invocation_id="e-1",
                    data={"status": "completed", "detail": {"final": True}})
    ]


async def test_blocking_read_that_times_out_returns_nothing(client):
    assert await read_stream(client, APP, USER, SID, block_ms=50) == []


async def test_follow_stream_ends_after_the_invocation_settles(client):
    await publish_status(client, APP, USER, SID, "e-1", "running")
    await publish_status(client, APP, USER, SID, "e-2", "completed")
    await publish_event(client, APP, USER, SID, "e-1", Event(author="a", invocation_id="e-1", id="x", partial=True))
    await publish_status(client, APP, USER, SID, "e-1", "parked", {"pending": ["c1"]})
    await publish_status(client, APP, USER, SID, "e-1", "queued")
    followed = [
        (entry.kind, entry.data.get("status") or entry.data["id"])
        async for entry in follow_stream(client, APP, USER, SID, invocation_id="e-1", block_ms=1_000)
    ]
    assert followed == [("status", "running"), ("event", "x"), ("status", "parked")]


async def test_stream_is_trimmed_to_its_length_once_nothing_active_needs_it(client):
    for i in range(40):
        await publish_status(client, APP, USER, SID, "e-1", "running", {"i": i}, maxlen=10)
    assert await client.xlen(keys.session_stream(APP, USER, SID)) <= 11
    last = await read_stream(client, APP, USER, SID, count=100)
    assert last[-1].data == {"status": "running", "detail": {"i": 39}}


async def test_trimming_never_drops_entries_of_an_active_invocation(client):
    await _publish_mixed(client, 30, invocations=("e-old",))
    await asyncio.sleep(0.005)  # the floor has millisecond grain: start the live invocation in a later one
    first = await publish_status(client, APP, USER, SID, "e-live", "running")
    await mark_invocation_active(client, APP, USER, SID, "e-live", first)
    live = [first] + [
        await publish_status(client, APP, USER, SID, "e-live", "running", {"i": i}, maxlen=5) for i in range(30)
    ]
    kept = [entry.id for entry in await read_stream(client, APP, USER, SID, invocation_id="e-live", count=1000)]
    assert kept == live
    oldest = (await read_stream(client, APP, USER, SID, count=1))[0]
    assert oldest.invocation_id == "e-live"  # everything before the live invocation was trimmed
    await mark_invocation_settled(client, APP, USER, SID, "e-live")
    await publish_status(client, APP, USER, SID, "e-next", "running", maxlen=5)
    assert await client.xlen(keys.session_stream(APP, USER, SID)) == 5


async def test_marking_an_active_invocation_again_keeps_its_earliest_floor(client):
    ids = await _publish_mixed(client, 3, invocations=("e-1",))
    await mark_invocation_active(client, APP, USER, SID, "e-1", ids[0])
    await mark_invocation_active(client, APP, USER, SID, "e-1")
    floor = await client.zscore(keys.session_active_invocations(APP, USER, SID), "e-1")
    assert floor == int(ids[0].split("-")[0])


async def test_stream_entries_older_than_max_age_are_trimmed_unless_an_active_invocation_needs_them(client):
    stream = keys.session_stream(APP, USER, SID)
    await client.xadd(stream, {"kind": "status", "inv": "e-0", "data": "{}"}, id="1000-0")  # from long ago
    await mark_invocation_active(client, APP, USER, SID, "e-0", "1000-0")
    recent = await publish_status(client, APP, USER, SID, "e-1", "running", max_age_s=60)
    assert [e.id for e in await read_stream(client, APP, USER, SID)] == ["1000-0", recent]
    await mark_invocation_settled(client, APP, USER, SID, "e-0")
    newest = await publish_status(client, APP, USER, SID, "e-1", "completed", max_age_s=60)
    assert [e.id for e in await read_stream(client, APP, USER, SID)] == [recent, newest]


async def test_commits_trim_the_stream_but_never_the_history(store_url, client):
    service = RedisSessionService(store_url, stream_maxlen=5)
    session = await service.create_session(app_name=APP, user_id=USER, session_id=SID)
    events = [Event(author="agent", invocation_id="e-1", id=f"ev{i}") for i in range(30)]
    for event in events:
        await service.append_event(session, event)
    streamed = [entry.data["id"] for entry in await read_stream(client, APP, USER, SID)]
    stored = await service.get_session(app_name=APP, user_id=USER, session_id=SID)
    assert streamed == [f"ev{i}" for i in range(30 - len(streamed), 30)] and 5 <= len(streamed) <= 6
    assert [event.id for event in stored.events] == [event.id for event in events]
    await service.aclose()


@pytest.mark.parametrize("bad", ["", "abc", "12", "1-2-3", "$", "-1-0"])
async def test_a_malformed_entry_id_is_refused_with_a_usage_error(client, bad):
    from runtime.errors import UsageError

    with pytest.raises(UsageError, match="is not of the form"):
        await read_stream(client, APP, USER, SID, bad)


async def test_a_follower_sees_every_entry_once_while_writers_race(store_url, client):
    service = RedisSessionService(store_url)
    session = await service.create_session(app_name=APP, user_id=USER, session_id=SID)

    async def committer():
        for i in range(40):
            await service.append_event(session, Event(author="agent", invocation_id="e-1", id=f"c{i}"))

    async def streamer():
        for i in range(40):
            await publish_event(client, APP, USER, SID, "e-1", Event(author="agent", invocation_id="e-1",
                                                                     id=f"p{i}", partial=True))

    async def follower():
        return [entry async for entry in follow_stream(client, APP, USER, SID, invocation_id="e-1", block_ms=200)]

    following = asyncio.ensure_future(follower())
    await asyncio.gather(committer(), streamer())
    await publish_status(client, APP, USER, SID, "e-1", "completed")
    followed = await following
    everything = await read_stream(client, APP, USER, SID, count=1000)
    assert followed == everything and len(everything) == 81
    assert [e.data["id"] for e in everything if e.kind == "event" and e.data["id"].startswith("c")] == [
        f"c{i}" for i in range(40)
    ]
    await service.aclose()
