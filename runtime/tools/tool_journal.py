"""Tool journal: remembers which tool calls started and finished, so a resumed run never repeats a side effect.

The flow calls ``begin`` before running a tool and ``complete`` after. A previous 'completed' record means the
stored response is reused and the tool is not run again; a previous 'started' record means the outcome is in
doubt (the process running it died): the tool is re-run only if it is declared idempotent.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Any, Literal

NO_RESPONSE: dict[str, Any] = {"agentq:no_response": True}
"""Stored for a long-running tool that returned None (no function response is sent)."""


@dataclass(kw_only=True)
class ToolCallRecord:
    """What the journal knows about one call: started, or completed with its response."""

    status: Literal["started", "completed"]
    response: dict[str, Any] | None = None


class BaseToolJournal(abc.ABC):
    """Records tool calls by (invocation_id, function_call_id)."""

    @abc.abstractmethod
    async def begin(self, invocation_id: str, function_call_id: str, tool_name: str) -> ToolCallRecord | None:
        """Atomically record the call as 'started'; return the record there was before, or None."""

    @abc.abstractmethod
    async def complete(self, invocation_id: str, function_call_id: str, response: dict[str, Any]) -> None:
        """Record the call as 'completed' with the response sent to the model.

        It must be recorded before the event carrying the response is committed; a journal that writes on the
        session service's own ordered connection may return once the write is queued ahead of that commit."""

    async def get(self, invocation_id: str, function_call_id: str) -> ToolCallRecord | None:
        """What the journal holds for one entry, or None (a resumed run reads its workflow agents' progress
        with it: ``runtime.agents.progress``)."""
        raise NotImplementedError(f"{type(self).__name__} cannot read its entries back")


class InMemoryToolJournal(BaseToolJournal):
    """A journal in process memory (tests, single-process use)."""

    def __init__(self) -> None:
        self.records: dict[tuple[str, str], ToolCallRecord] = {}

    async def begin(self, invocation_id, function_call_id, tool_name):
        key = (invocation_id, function_call_id)
        previous = self.records.get(key)
        if previous is None or previous.status == "started":
            self.records[key] = ToolCallRecord(status="started")
        return previous

    async def complete(self, invocation_id, function_call_id, response):
        self.records[(invocation_id, function_call_id)] = ToolCallRecord(status="completed", response=response)

    async def get(self, invocation_id, function_call_id):
        return self.records.get((invocation_id, function_call_id))


def in_doubt_error(tool_name: str) -> dict[str, str]:
    """The answer to a call whose previous attempt started but never finished, for a non-idempotent tool."""
    return {
        "error": f"The outcome of tool `{tool_name}` is unknown: a previous attempt started but did not finish "
        "(the worker running it stopped). It was not retried because it is not declared idempotent."
    }
