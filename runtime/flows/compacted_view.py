"""CompactedView: a compacted history as an agent is shown it, kept up to date as events are appended.

``replace_compacted`` and ``recover_compacted_calls`` over the whole history cost a pass over every event. With
a token threshold a summary comes at nearly every model call, so the contents cache would pay that pass each
time. The view keeps the kept ranges, the shown events with their sort keys, and which call each shown answer
belongs to, so an appended event or compaction costs in proportion to what is shown, not to the history. It
says when it cannot take one in (an event that sorts before shown ones, a call that must be put back): the
caller then builds it afresh from the whole history.
"""

from __future__ import annotations

import math
from bisect import insort

from ..events import Event
from .compacted_history import (
    Coverage,
    compaction_ranges,
    is_compaction,
    recover_compacted_calls,
    summary_event,
)


class CompactedView:
    """``recover_compacted_calls(replace_compacted(kept, agent_name), kept)`` as ``shown``, extended in place.

    ``kept`` are the events (compactions included) the agent is shown something of, in history order.
    """

    def __init__(self, kept: list[Event], agent_name: str):
        self._agent_name = agent_name
        self._ranges = compaction_ranges(kept)  # (position, start, end) of the kept ranges
        self._coverage = Coverage([(start, end) for _, start, end in self._ranges])
        # (sort key, position in kept, event): summaries at their range's end, then the events they leave
        self._items = [(end, index, summary_event(kept[index], agent_name)) for index, _, end in self._ranges]
        self._latest_call: dict[str, int] = {}  # call id -> id() of the latest kept event making that call
        self._present: set[int] = set()  # id() of the kept events shown as they are
        self._owners: dict[int, list[int]] = {}  # id() of a shown answer -> id() of the events making its calls
        for index, event in enumerate(kept):
            if is_compaction(event):
                continue
            owners = self._note(event)
            if not self._coverage.covers(event.timestamp):
                self._show(event, index, owners)
        if self._ranges:  # with no summary nothing is reordered, as without compaction
            self._items.sort(key=lambda item: item[:2])
        self._next = len(kept)
        compacted = [event for _, _, event in self._items]
        self.shown = recover_compacted_calls(compacted, kept)
        self.recovered = self.shown is not compacted
        """Calls were put back: a later answer may change which, so answers are no longer taken in."""

    @property
    def compacted(self) -> bool:
        """True when a summary is shown (else the view is the kept events as they are)."""
        return bool(self._ranges)

    def place(self, event: Event) -> bool | None:
        """Take in an appended kept event (not a compaction): True when it is shown at the end, False when a
        summary stands for it, None when the view must be built again."""
        index = self._next
        self._next += 1
        owners = self._note(event)
        if self.recovered and event.get_function_responses():
            return None
        if self._coverage.covers(event.timestamp):
            return False
        if self._items and event.timestamp < self._items[-1][0]:
            return None  # it sorts before events already shown
        if any(owner != id(event) and owner not in self._present for owner in owners):
            return None  # its call was compacted away: it must be put back
        self._show(event, index, owners)
        self.shown.append(event)
        return True

    def add_compaction(self, event: Event) -> bool:
        """Take in an appended compaction event of this agent's branch; False when the view must be built again."""
        index = self._next
        self._next += 1
        start, end = event.actions.compaction.start_timestamp, event.actions.compaction.end_timestamp
        if self.recovered or math.isnan(start) or math.isnan(end):
            return False
        for _, kept_start, kept_end in self._ranges:
            if (kept_start < start and kept_end >= end) or (kept_start == start and kept_end > end):
                return True  # a kept range contains it: it changes nothing (a NaN bound compares False)
        dropped = {position for position, kept_start, kept_end in self._ranges
                   if start <= kept_start and kept_end <= end}  # ranges it contains, an identical one included
        self._ranges = [r for r in self._ranges if r[0] not in dropped] + [(index, start, end)]
        self._coverage.add(start, end)
        items = []
        for item in self._items:
            key, position, shown = item
            if position in dropped:
                continue  # the summary of a range the new one contains
            if not is_compaction(shown) and self._coverage.covers(key):
                self._present.discard(id(shown))
                self._owners.pop(id(shown), None)
                continue
            items.append(item)
        insort(items, (end, index, summary_event(event, self._agent_name)), key=lambda item: item[:2])
        self._items = items
        if any(owner not in self._present for owners in self._owners.values() for owner in owners):
            return False  # an answer still shown lost its call to the summary: it must be put back
        self.shown = [shown for _, _, shown in items]
        return True

    def _note(self, event: Event) -> list[int]:
        """Record the calls ``event`` makes; the events making the calls its answers belong to."""
        for call in event.get_function_calls():
            if call.id:
                self._latest_call[call.id] = id(event)
        owners = []
        for response in event.get_function_responses():
            owner = self._latest_call.get(response.id) if response.id else None
            if owner is not None:
                owners.append(owner)
        return owners

    def _show(self, event: Event, index: int, owners: list[int]) -> None:
        self._items.append((event.timestamp, index, event))
        self._present.add(id(event))
        if owners:
            self._owners[id(event)] = owners
