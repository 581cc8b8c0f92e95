"""Which events a summary may replace, and when one is worth making (decided as google-adk 2.13 decides).

These rules were also checked against google-adk 2.13's own functions on random histories, side by side.
"""

from __future__ import annotations

import random

from google.genai import types

from runtime.apps.compaction_ranges import longest_self_contained_prefix, safe_split_index
from runtime.apps.invocation_spans import InvocationSpans
from runtime.apps.prompt_size import _chars_an_empty_summary_saves, is_range_worth_compacting
from runtime.events import Event, EventActions
from runtime.events.event_actions import EventCompaction
from runtime.flows.compacted_history import compaction_ranges, replace_compacted


def said(text: str, invocation: str = "i1", author: str = "a", at: float = 0.0) -> Event:
    return Event(author=author, invocation_id=invocation, timestamp=at,
                 content=types.Content(role="model", parts=[types.Part(text=text)]))


def calls(call_id: str, invocation: str = "i1", long_running: bool = False, at: float = 0.0) -> Event:
    return Event(author="a", invocation_id=invocation, timestamp=at,
                 long_running_tool_ids={call_id} if long_running else None,
                 content=types.Content(role="model", parts=[types.Part(
                     function_call=types.FunctionCall(id=call_id, name="f", args={}))]))


def answers(call_id: str, invocation: str = "i1", at: float = 0.0) -> Event:
    return Event(author="a", invocation_id=invocation, timestamp=at,
                 content=types.Content(role="user", parts=[types.Part(
                     function_response=types.FunctionResponse(id=call_id, name="f", response={"ok": True}))]))


def summary(start: float, end: float, text: str, at: float) -> Event:
    return Event(author="user", invocation_id=f"s{at}", timestamp=at, actions=EventActions(compaction=EventCompaction(
        start_timestamp=start, end_timestamp=end, compacted_content=types.Content(role="model", parts=[
            types.Part(text=text)]))))


def names(events: list[Event]) -> list[str]:
    """Each event's text, or the id of the call it makes or answers."""
    parts = [event.content.parts[0] for event in events]
    return [part.text or (part.function_call or part.function_response).id for part in parts]


def test_a_window_never_ends_between_a_call_and_its_answer():
    events = [said("q"), calls("c1"), answers("c1"), said("x"), calls("c2")]
    assert names(longest_self_contained_prefix(events)) == ["q", "c1", "c1", "x"]


def test_a_call_of_an_older_invocation_nobody_answered_does_not_block_later_summaries():
    dead, waiting = calls("c1", "i1"), calls("c2", "i1", long_running=True)
    events = [said("q", "i1"), dead, said("later", "i1"), said("newest", "i2")]
    assert names(longest_self_contained_prefix(events[:3], all_events=events)) == ["q", "c1", "later"]
    blocked = [said("q", "i1"), waiting, said("later", "i1"), said("newest", "i2")]
    assert names(longest_self_contained_prefix(blocked[:3], all_events=blocked)) == ["q"]


def test_the_kept_events_keep_the_calls_their_answers_belong_to():
    candidates = [said("q"), calls("c1"), said("x"), answers("c1"), said("y")]
    assert (safe_split_index(candidates, 2), safe_split_index(candidates, 1), safe_split_index(candidates, 5)) == (
        1, 4, 0)


def test_a_summary_is_worth_making_only_when_it_can_take_off_more_than_the_last_summary_weighs():
    events = [said("a" * 10, at=1), said("b" * 10, at=2), said("c" * 10, at=3)]
    assert is_range_worth_compacting(events, events[:2])
    heavy = [*events, summary(0, 0.5, "s" * 200, at=3.5)]
    assert not is_range_worth_compacting(heavy, heavy[:2])


def _history(rng: random.Random) -> list[Event]:
    events: list[Event] = []
    for index in range(rng.randrange(1, 25)):
        at = index + (rng.random() * 3 if rng.random() < 0.2 else 0)
        events.append(said("w" * rng.randrange(1, 40), f"i{index // 3}", at=at))
        if rng.random() < 0.2:
            start = rng.uniform(-1, at)
            events.append(summary(start, rng.uniform(start - 0.5, at + 1), "s" * rng.randrange(1, 60), at + 0.5))
    return events


def test_the_saving_of_an_empty_summary_is_what_replacing_the_history_with_it_would_save():
    def request_size(events):
        return sum(len((e.actions.compaction.compacted_content if e.actions.compaction else e.content)
                       .model_dump_json(exclude_none=True)) for e in events)

    rng = random.Random(4)
    for _ in range(300):
        events = _history(rng)
        raw = [e for e in events if not e.actions.compaction]
        to_compact = raw[rng.randrange(len(raw)):][: rng.randrange(1, 6)]
        times = [e.timestamp for e in to_compact]
        empty = summary(min(times), max(times), "", at=99)
        empty.actions.compaction.compacted_content.parts = []
        expected = request_size(replace_compacted(events)) - request_size(replace_compacted([*events, empty]))
        assert _chars_an_empty_summary_saves(events, compaction_ranges(events), to_compact) == expected


def test_the_invocation_spans_read_as_the_history_grows_equals_one_read_at_once():
    def state(index):
        return (index.latest, index.first, index.last, index.since, index.ended_since_last_summary())

    rng = random.Random(6)
    for _ in range(100):
        events = _history(rng)
        growing = InvocationSpans()
        for end in range(1, len(events) + 1):
            growing.update(events[:end])
        fresh = InvocationSpans()
        fresh.update(events)
        assert state(growing) == state(fresh)
        rewound = events[: len(events) // 2] + [said("other", "i99", at=50)]
        growing.update(rewound)
        fresh = InvocationSpans()
        fresh.update(rewound)
        assert state(growing) == state(fresh)
