"""The tool journal of an AgentTool's agent: its calls are journaled as calls of the caller's invocation.

The agent runs under an invocation of its own (``agent_tool_session``), which a durable journal knows nothing of:
the worker's journal keeps each invocation's calls beside its record, and an AgentTool's invocation has none.
The agent's run is part of the caller's invocation, so its calls go in the caller's journal, each under
``<agent's invocation id>/<call id>``: they expire with the caller's record, a call is not started once the
caller is cancelled, and a caller resumed after a crash finds them there. Nested AgentTools nest the prefix.
"""

from __future__ import annotations

from typing import Any

from .tool_journal import BaseToolJournal, ToolCallRecord


class AgentToolJournal(BaseToolJournal):
    """``journal`` (the caller's), seen from an AgentTool's agent run inside ``caller_invocation_id``."""

    def __init__(self, journal: BaseToolJournal, caller_invocation_id: str):
        self.journal = journal
        self.caller_invocation_id = caller_invocation_id

    async def begin(self, invocation_id: str, function_call_id: str, tool_name: str) -> ToolCallRecord | None:
        return await self.journal.begin(self.caller_invocation_id, _call_id(invocation_id, function_call_id),
                                        tool_name)

    async def complete(self, invocation_id: str, function_call_id: str, response: dict[str, Any]) -> None:
        await self.journal.complete(self.caller_invocation_id, _call_id(invocation_id, function_call_id), response)


def _call_id(invocation_id: str, function_call_id: str) -> str:
    return f"{invocation_id}/{function_call_id}"
