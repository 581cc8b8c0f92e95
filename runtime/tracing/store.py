"""BaseSpanStore: where finished runs' spans are kept, per session; InMemorySpanStore for in-process runners."""

from __future__ import annotations

import abc
from typing import Any

MAX_RUNS_PER_SESSION = 200
"""Only the spans of a session's latest runs are kept: a long session's trace view stays readable and bounded."""


class BaseSpanStore(abc.ABC):
    """Saves the spans of one finished run (one write) and lists a session's spans, oldest run first."""

    @abc.abstractmethod
    async def save(self, *, app_name: str, user_id: str, session_id: str, spans: list[dict[str, Any]]) -> None:
        """Keep the spans (``Span.to_json`` dicts) of one finished run of an invocation of the session."""

    @abc.abstractmethod
    async def list(self, *, app_name: str, user_id: str, session_id: str) -> list[dict[str, Any]]:
        """The session's spans, run by run in the order they finished; [] for an unknown session."""


class InMemorySpanStore(BaseSpanStore):
    """Spans in process memory (``InMemoryRunner`` and tests)."""

    def __init__(self) -> None:
        self._runs: dict[tuple[str, str, str], list[list[dict[str, Any]]]] = {}

    async def save(self, *, app_name, user_id, session_id, spans) -> None:
        runs = self._runs.setdefault((app_name, user_id, session_id), [])
        runs.append([dict(span) for span in spans])
        del runs[:-MAX_RUNS_PER_SESSION]

    async def list(self, *, app_name, user_id, session_id) -> list[dict[str, Any]]:
        return [dict(span) for run in self._runs.get((app_name, user_id, session_id), []) for span in run]
