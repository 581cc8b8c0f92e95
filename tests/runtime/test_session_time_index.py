"""The session's sparse time index (``lua/lib/time_index.lua``) on a real redis-server: a commit adds a checkpoint
once every 16 events, and a read after a time still starts at exactly the first event whose running maximum of
timestamps is at or after it, on sessions stored with a checkpoint per event (before) too."""

from __future__ import annotations

import random

import pytest

from runtime.events import Event
from runtime.redis_store import keys
from runtime.redis_store.scripts import READ_SESSION
from runtime.redis_store.session_layout import read_keys
from runtime.sessions import GetSessionConfig

APP, USER, SID = "app", "ann", "s1"


def _timestamps(count: int) -> list[float]:
    """Timestamps that mostly rise but sometimes go back (clocks of several writers), some equal."""
    rng = random.Random(26)
    now, out = 1000.0, []
    for _ in range(count):
        now += rng.choice([0.0, 0.5, 1.0, 1.0, 2.0, -3.0])
        out.append(now)
    return out


async def _stored_with(service, timestamps: list[float]) -> None:
    session = await service.create_session(app_name=APP, user_id=USER, session_id=SID)
    for ts in timestamps:
        await service.append_event(session, Event(author="agent", invocation_id="e-1", timestamp=ts))


def _first_index(timestamps: list[float], after: float) -> int:
    """The first index whose running maximum is at or after ``after`` (len when none): where a read starts."""
    running = float("-inf")
    for index, ts in enumerate(timestamps):
        running = max(running, ts)
        if running >= after:
            return index
    return len(timestamps)


async def _sent_from(raw, after: float, recent: int = 0) -> int:
    """The index of the first event the read script sends for a read after ``after``."""
    reply = await READ_SESSION(raw, **read_keys(APP, USER, SID, False), recent=recent, after=repr(after))
    return len(await raw.lrange(keys.session_events(APP, USER, SID), 0, -1)) - len(reply[4])


async def test_a_commit_adds_a_time_index_checkpoint_once_every_16_events(service, raw):
    await _stored_with(service, _timestamps(40))
    assert await raw.zrange(keys.session_event_times(APP, USER, SID), 0, -1) == [
        "000000000000", "000000000016", "000000000032"]


@pytest.mark.parametrize("layout", ["sparse", "a checkpoint per event, as stored before"])
async def test_a_read_after_a_time_starts_at_exactly_the_first_event_at_or_after_it(service, raw, layout):
    timestamps = _timestamps(53)
    await _stored_with(service, timestamps)
    if layout != "sparse":
        times, running = keys.session_event_times(APP, USER, SID), float("-inf")
        for index, ts in enumerate(timestamps):
            running = max(running, ts)
            await raw.zadd(times, {f"{index:012d}": running})
    for after in sorted({*timestamps, *(ts - 0.25 for ts in timestamps), 0.0, max(timestamps) + 1}):
        assert await _sent_from(raw, after) == _first_index(timestamps, after), after
    assert await _sent_from(raw, timestamps[30], recent=5) == 48
    fetched = await service.get_session(app_name=APP, user_id=USER, session_id=SID,
                                        config=GetSessionConfig(after_timestamp=timestamps[20]))
    assert [e.timestamp for e in fetched.events] == [ts for ts in timestamps if ts >= timestamps[20]]
