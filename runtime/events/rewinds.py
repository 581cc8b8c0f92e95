"""Which events of a history are still live once its rewinds are taken into account.

A rewind (``Runner.rewind_async``) never edits the stored history: it appends an event whose
``actions.rewind_before_invocation_id`` names an invocation X. From then on, the events from X's first
event up to that rewind event (both included) are as if they had never happened: the model is not shown
them and the next turn is routed as if they were not there. Rewinds can stack: a later rewind may undo a
range that holds an earlier one. The rule is ADK 2.13's, so a history moved between the two reads the same.

Every view derived from the history (the model's contents, the agent for the next turn, the calls a
function response may answer) must use this one rule, or rewound words leak back in through one of them.
"""

from __future__ import annotations

from collections.abc import Iterator

from .event import Event


def is_rewind(event: Event) -> bool:
    """True for the event a rewind committed."""
    return bool(event.actions.rewind_before_invocation_id)


def live_events_newest_first(events: list[Event]) -> Iterator[Event]:
    """The live events of ``events`` (a history, oldest first), newest first.

    Lazy, so a caller that stops at the first event it wants (routing a new turn) pays for the events it
    walks, plus one pass over the history only if it meets a rewind on the way.
    """
    first_index: dict[str, int] | None = None
    index = len(events) - 1
    while index >= 0:
        event = events[index]
        if is_rewind(event):
            if first_index is None:
                first_index = _first_index_of_each_invocation(events)
            start = first_index.get(event.actions.rewind_before_invocation_id)
            # A rewind to an invocation that only starts after it (or is unknown) undoes nothing but itself.
            if start is not None and start < index:
                index = start
        else:
            yield event
        index -= 1


def live_events(events: list[Event]) -> list[Event]:
    """The live events of ``events``, oldest first; ``events`` itself when it holds no rewind."""
    if not any(map(is_rewind, events)):
        return events
    live = list(live_events_newest_first(events))
    live.reverse()
    return live


def _first_index_of_each_invocation(events: list[Event]) -> dict[str, int]:
    first: dict[str, int] = {}
    for index, event in enumerate(events):
        if event.invocation_id and event.invocation_id not in first:
            first[event.invocation_id] = index
    return first
