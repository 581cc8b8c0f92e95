"""InvocationSpans: where each invocation's events lie in a history, kept up to date as the history grows.

The sliding window asks after every invocation whether ``compaction_interval`` invocations ended since the last
summary. Answered from the whole history, that question costs a pass over every event, so a long session would
pay more for each invocation than for the one before. The spans read only the events appended since it last
looked (it starts over when the history is not an extension of what it saw), and the Runner keeps it with the
model contents it derives from the history (``InvocationRun.contents``, from ``BaseSessionService.history_scratch``).
"""

from __future__ import annotations

from ..events import Event

SCRATCH_KEY = ("", "invocation-spans")
"""Its key among the contents caches, whose keys are (agent name, branch) pairs: no agent is named ''."""


class InvocationSpans:
    """Per invocation: its first and last position and its latest event's timestamp (compactions aside), in
    order of first event; and the end of the latest summary."""

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._count = 0  # events taken in
        self._last: Event | None = None  # the last of them
        self.latest: dict[str, float] = {}
        self.first: dict[str, int] = {}
        self.last: dict[str, int] = {}
        self.since = 0.0
        """The end timestamp of the last compaction event (in history order) that has one; 0.0 when none."""

    @classmethod
    def of(cls, scratch: dict) -> InvocationSpans:
        """The spans kept in ``scratch`` (made on first use)."""
        spans = scratch.get(SCRATCH_KEY)
        if spans is None:
            spans = scratch[SCRATCH_KEY] = cls()
        return spans

    def update(self, events: list[Event]) -> None:
        """Take in the events appended since the last update (all of them when ``events`` is another history)."""
        seen = self._count
        # The same event object where the last one taken in was means the same history, grown (a history
        # read afresh has other objects there): as sessions.invocation_index decides it.
        if seen and (len(events) < seen or events[seen - 1] is not self._last):
            self._reset()
            seen = 0
        for position in range(seen, len(events)):
            event = events[position]
            invocation = event.invocation_id
            if invocation:
                self.first.setdefault(invocation, position)
                self.last[invocation] = position
            compaction = event.actions.compaction
            if compaction is not None:
                if compaction.end_timestamp:
                    self.since = compaction.end_timestamp
            elif invocation and event.timestamp > self.latest.setdefault(invocation, 0.0):
                self.latest[invocation] = event.timestamp
        if len(events) > seen:
            self._count, self._last = len(events), events[-1]

    def ended_since_last_summary(self) -> list[str]:
        """The invocations with an event after the last summary's end, in order of first event."""
        since = self.since
        return [invocation for invocation, latest in self.latest.items() if latest > since]
