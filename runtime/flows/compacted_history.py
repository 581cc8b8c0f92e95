"""The history with its compacted ranges replaced by their summaries, as the reference runtime shows it.

A compaction event (``actions.compaction``) stands for the events whose timestamps fall in its range. The
model is shown the summary, placed at the range's end timestamp and authored by the agent being served
(so it reads as its own earlier turn), instead of those events; the events stay in the history. A range
inside another range is superseded by it, so a summary that re-summarises an earlier one (token-threshold
compaction seeds each summary with the previous one) replaces it. Partly overlapping ranges both stay.

Once any compaction exists, the shown events are ordered by timestamp (summaries by their end), ties kept in
history order. A function response left after its call was compacted away gets the call back, right before it.
"""

from __future__ import annotations

import math
from bisect import bisect_right

from ..events import Event
from . import _fast


def is_compaction(event: Event) -> bool:
    """True for an event that summarises earlier events."""
    return event.actions.compaction is not None


def compaction_ranges(events: list[Event]) -> list[tuple[int, float, float]]:
    """(index, start, end) of each compaction in ``events`` that no other range contains, in history order.

    Of two identical ranges the later event wins. A range with a NaN bound neither contains nor is contained.
    """
    found = [(index, event.actions.compaction) for index, event in enumerate(events)
             if event.actions.compaction is not None]
    ranges = [(index, compaction.start_timestamp, compaction.end_timestamp) for index, compaction in found]
    kept = {index for index, start, end in ranges if math.isnan(start) or math.isnan(end)}
    # Sorted by start, then widest first, then latest first: a range survives when it reaches past every
    # range sorted before it (those start no later, so one of them would contain it otherwise).
    comparable = sorted((r for r in ranges if r[0] not in kept), key=lambda r: (r[1], -r[2], -r[0]))
    reach = -math.inf
    for index, _, end in comparable:
        if end > reach:
            kept.add(index)
            reach = end
    return [r for r in ranges if r[0] in kept]


class Coverage:
    """The union of the kept compaction ranges: which timestamps a summary stands for."""

    def __init__(self, ranges: list[tuple[float, float]]):
        self._ranges = [(start, end) for start, end in ranges if start <= end]  # NaN or reversed: covers nothing
        self._merge()

    def add(self, start: float, end: float) -> None:
        """Cover ``[start, end]`` too."""
        if start <= end:
            self._ranges.append((start, end))
            self._merge()

    def _merge(self) -> None:
        merged: list[list[float]] = []
        for start, end in sorted(self._ranges):
            if merged and start <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        self._starts = [start for start, _ in merged]
        self._ends = [end for _, end in merged]

    def covers(self, timestamp: float) -> bool:
        """True when ``timestamp`` lies in a compacted range."""
        at = bisect_right(self._starts, timestamp) - 1
        return at >= 0 and timestamp <= self._ends[at]


def summary_event(event: Event, agent_name: str) -> Event:
    """The compaction ``event`` as the model is shown it: its summary, said by ``agent_name`` at the range's end."""
    compaction = event.actions.compaction
    return _fast.event(timestamp=compaction.end_timestamp, author=agent_name or "model",
                       content=compaction.compacted_content, branch=event.branch,
                       invocation_id=event.invocation_id, actions=event.actions)


def replace_compacted(events: list[Event], agent_name: str = "") -> list[Event]:
    """``events`` with every compacted event dropped and each kept summary in its place, ordered by timestamp
    (``events`` itself, unsorted, when it holds no compaction)."""
    ranges = compaction_ranges(events)
    if not ranges:
        return events
    covers = Coverage([(start, end) for _, start, end in ranges]).covers
    items = [(end, index, summary_event(events[index], agent_name)) for index, _, end in ranges]
    items.extend([(event.timestamp, index, event) for index, event in enumerate(events)
                  if event.actions.compaction is None and not covers(event.timestamp)])
    items.sort(key=lambda item: (item[0], item[1]))
    return [event for _, _, event in items]


def recover_compacted_calls(shown: list[Event], source: list[Event]) -> list[Event]:
    """``shown`` with each call event that compaction removed put back right before the first shown response
    to it (with the latest answers to its other calls, when those were removed too).

    A response belongs to the latest call with its id before it in ``source`` (the history before compaction,
    holding the same Event objects as ``shown``). Returns ``shown`` itself when nothing was put back.
    """
    if not any(event.get_function_responses() for event in shown):
        return shown
    present = {id(event) for event in shown}
    latest_call: dict[str, Event] = {}
    owner: dict[tuple[int, str], Event] = {}  # (response event, call id) -> call event
    latest_answer: dict[tuple[int, str], Event] = {}  # (call event, call id) -> latest response event
    answered_in_view: set[tuple[int, str]] = set()
    for event in source:
        for call in event.get_function_calls():
            if call.id:
                latest_call[call.id] = event
        for response in event.get_function_responses():
            call_event = latest_call.get(response.id) if response.id else None
            if call_event is None:
                continue
            owner[id(event), response.id] = call_event
            key = (id(call_event), response.id)
            if id(event) in present:
                answered_in_view.add(key)
            earlier = latest_answer.get(key)
            if earlier is None or event.timestamp >= earlier.timestamp:
                latest_answer[key] = event
    result: list[Event] = []
    restored_calls: set[int] = set()
    restored_answers: set[int] = set()
    for event in shown:
        for response in event.get_function_responses():
            call_event = owner.get((id(event), response.id)) if response.id else None
            if call_event is None or id(call_event) in present or id(call_event) in restored_calls:
                continue
            result.append(call_event)
            restored_calls.add(id(call_event))
            for call in call_event.get_function_calls():
                sibling = latest_answer.get((id(call_event), call.id)) if call.id else None
                # a sibling answer that is not shown would leave its call looking pending
                if (sibling is not None and (id(call_event), call.id) not in answered_in_view
                        and id(sibling) not in restored_answers):
                    result.append(sibling)
                    restored_answers.add(id(sibling))
        result.append(event)
    return result if restored_calls else shown

