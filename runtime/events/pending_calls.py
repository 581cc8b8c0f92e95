"""Which long-running calls still wait for an answer: the one rule, read from committed events.

A call is pending from the event that issues it with its id in ``long_running_tool_ids`` until a client's
FunctionResponse (a user event) answers it without ``will_continue``. What the tool itself returned (a ticket,
"pending") and ``will_continue`` updates leave it pending.

The session's history is the source of truth. Everything else is this rule applied to it: the Runner keeps it
while it runs (``InvocationRun.pending``); the worker reads it back from the history when a run ends
(``runtime.routing.pending_long_running_calls``) and copies it onto the invocation record as the calls an
answer may name (``p:`` fields, checked and consumed by the respond script).
"""

from __future__ import annotations

from google.genai import types

from .event import Event


class PendingCalls(dict[str, tuple[types.FunctionCall, str | None]]):
    """Pending long-running calls by id, each with the branch that issued it, in call order."""

    def note(self, event: Event) -> None:
        """Take a committed event into account: the long-running calls it issues or answers for good."""
        if event.long_running_tool_ids:
            for call in event.get_function_calls():
                if call.id in event.long_running_tool_ids:
                    self[call.id] = (call, event.branch)
        if event.author == "user" and self:
            for response in event.get_function_responses():
                if not response.will_continue:
                    self.pop(response.id, None)
