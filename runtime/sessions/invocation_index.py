"""InvocationIndex: a history's events by invocation id, indexed as the history grows.

The Runner starts every run by taking the committed events of the invocation it runs (to resume it, and to
not commit a redelivered message twice). Finding them by scanning the history costs about 0.2 ms per thousand
events (a pydantic attribute read each), which grew with the session. The index lives in the session
service's history scratch (``BaseSessionService.history_scratch``), so with a service that keeps parsed
histories a session's events are indexed once, not once per invocation.
"""

from __future__ import annotations

from ..events import Event


class InvocationIndex:
    """The events of each invocation in a history that only grows; rebuilt when given another history."""

    def __init__(self) -> None:
        self._count = 0
        self._last: Event | None = None
        self._by_invocation: dict[str, list[Event]] = {}

    def events_of(self, events: list[Event], invocation_id: str) -> list[Event]:
        """The events of ``events`` (a history) that belong to ``invocation_id``, in order; a new list."""
        if not self._extends(events):
            self.__init__()
        for event in events[self._count:]:
            self._by_invocation.setdefault(event.invocation_id, []).append(event)
        if len(events) > self._count:
            self._count, self._last = len(events), events[-1]
        return list(self._by_invocation.get(invocation_id, ()))

    def _extends(self, events: list[Event]) -> bool:
        # The Runner asks right after reading the session: the service built that list as the cached history
        # plus what was appended since, so the event it last saw in the same place means the same prefix (a
        # history read afresh, or from another service, has other objects there).
        count = self._count
        return count == 0 or (len(events) >= count and events[count - 1] is self._last)


def invocation_events(scratch: dict, events: list[Event], invocation_id: str) -> list[Event]:
    """``invocation_id``'s events in the history ``events``, through the index kept in ``scratch``."""
    index = scratch.get("invocations")
    if index is None:
        index = scratch["invocations"] = InvocationIndex()
    return index.events_of(events, invocation_id)
