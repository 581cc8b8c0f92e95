"""BaseEventsSummarizer: what turns a range of events into one compaction event (``google.adk.apps``)."""

from __future__ import annotations

import abc

from ..events import Event


class BaseEventsSummarizer(abc.ABC):
    """Summarises events for events compaction; subclass it to summarise your own way."""

    @abc.abstractmethod
    async def maybe_summarize_events(self, *, events: list[Event]) -> Event | None:
        """One event whose ``actions.compaction`` summarises ``events`` (its range: the first event's timestamp
        to the last one's), or None when there is no summary to make."""
