"""What the model is shown once events were compacted: summaries in place of their ranges (as google-adk 2.13)."""

from __future__ import annotations

import random

from google.genai import types

from runtime.events import Event, EventActions
from runtime.events.event_actions import EventCompaction
from runtime.flows.contents import build_contents
from runtime.flows.contents_cache import ContentsCache

from .test_contents import _random_history, dump, ev, fcall, fresp, text


def at(timestamp: float, event: Event) -> Event:
    event.timestamp = timestamp
    return event


def compaction(start: float, end: float, summary: str, timestamp: float, branch: str | None = None) -> Event:
    return Event(author="user", timestamp=timestamp, branch=branch, actions=EventActions(compaction=EventCompaction(
        start_timestamp=start, end_timestamp=end, compacted_content=types.Content(role="model", parts=[text(summary)]))))


def test_a_summary_replaces_the_events_of_its_range_as_the_agents_own_earlier_turn():
    events = [at(1, ev("user", text("q1"))), at(2, ev("other", text("a1"))), at(3, ev("user", text("q2"))),
              compaction(1, 2, "S", 4), at(5, ev("me", text("a2")))]
    assert dump(build_contents(events, "me", None)) == [
        {"role": "model", "parts": [{"text": "S"}]},
        {"role": "user", "parts": [{"text": "q2"}]},
        {"role": "model", "parts": [{"text": "a2"}]},
    ]
    assert [e.content.parts[0].text if e.content else None for e in events] == ["q1", "a1", "q2", None, "a2"]


def test_a_range_inside_a_wider_one_is_superseded_and_partly_overlapping_ones_both_stay():
    events = [at(t, ev("user", text(f"q{t}"))) for t in range(1, 7)]
    events += [compaction(1, 2, "inner", 7), compaction(1, 3, "wider", 8), compaction(3, 5, "overlapping", 9)]
    assert [c.parts[0].text for c in build_contents(events, "me", None)] == ["wider", "overlapping", "q6"]


def test_once_compacted_the_shown_events_are_ordered_by_timestamp():
    events = [at(1, ev("user", text("q1"))), at(5, ev("me", text("late"))), at(3, ev("user", text("early"))),
              compaction(1, 1, "S", 6)]
    assert [c.parts[0].text for c in build_contents(events, "me", None)] == ["S", "early", "late"]
    assert [c.parts[0].text for c in build_contents(events[:3], "me", None)] == ["q1", "late", "early"]


def test_a_summary_of_another_branch_is_not_shown_and_reorders_nothing():
    events = [at(1, ev("user", text("q"))), at(5, ev("me", text("a"))), at(2, ev("me", text("b"))),
              compaction(1, 2, "S", 6, branch="par.sib")]
    cache = ContentsCache("me", "par.me")
    cache.build(events[:1])
    assert [[c.parts[0].text for c in contents] for contents in (
        build_contents(events, "me", "par.me"), cache.build(events))] == [["q", "a", "b"]] * 2


def test_an_answer_whose_call_was_compacted_gets_the_call_back_right_before_it():
    events = [at(1, ev("user", text("q"))), at(2, ev("me", fcall("slow", "c1"), fcall("quick", "c2"))),
              at(3, ev("me", fresp("slow", "c1", {"status": "pending"}), fresp("quick", "c2", {"ok": 1}), role="user")),
              compaction(1, 3, "S", 4), at(5, ev("user", fresp("slow", "c1", {"status": "done"})))]
    assert dump(build_contents(events, "me", None)) == [
        {"role": "model", "parts": [{"text": "S"}]},
        {"role": "model", "parts": [{"function_call": {"id": "c1", "name": "slow", "args": {"x": 1}}},
                                    {"function_call": {"id": "c2", "name": "quick", "args": {"x": 1}}}]},
        {"role": "user", "parts": [{"function_response": {"id": "c1", "name": "slow", "response": {"status": "done"}}},
                                   {"function_response": {"id": "c2", "name": "quick", "response": {"ok": 1}}}]},
    ]


def test_with_include_contents_none_a_compaction_can_start_the_current_turn():
    events = [at(1, ev("user", text("q1"))), at(2, ev("me", text("a1"))), compaction(1, 2, "S", 3),
              at(4, ev("me", text("a2")))]
    assert [c.parts[0].text for c in build_contents(events, "me", None, current_turn_only=True)] == ["S", "a2"]


def _with_compactions(rng: random.Random, events: list[Event]) -> list[Event]:
    """``events`` timestamped mostly in order, with compactions of random ranges (some on a branch) mixed in."""
    result: list[Event] = []
    clock = 0.0
    for event in events:
        clock += 1
        result.append(at(clock - 3 if rng.random() < 0.1 else clock, event))
        if rng.random() < 0.2:
            start = rng.uniform(0, clock)
            end = rng.uniform(start, clock + 1)
            branch = rng.choice([None, None, None, "par", "par.sib"])
            result.append(compaction(start, end, f"S{len(result)}", clock + 0.5, branch))
    return result


def test_incrementally_built_contents_equal_contents_built_from_scratch_once_compacted():
    rng = random.Random(11)
    for _ in range(400):
        events = _with_compactions(rng, _random_history(rng, rng.randrange(1, 16)))
        agent, branch = rng.choice([("me", None), ("me", "par.me"), ("other", "par")])
        cache = ContentsCache(agent, branch)
        history: list[Event] = []
        for event in events:
            if rng.random() < 0.05:  # a rewind or a reload: the history is no longer an extension
                history = history[: rng.randrange(len(history) + 1)] if rng.random() < 0.5 else list(history)
            history.append(event)
            assert dump(cache.build(history)) == dump(build_contents(history, agent, branch))
