"""Which events a summary may replace: never half of a call and its answer (as the reference runtime decides).

A summary replaces every event in its time range, so a range must not end between a function call (or a
tool-confirmation / credential request) and its answer: the answer would be left without its call, or the
call without its answer, and the model would see a call still waiting. A call that can never be answered
(its process died; it is neither long-running nor a request to the client) does not hold a range back.
"""

from __future__ import annotations

from ..events import Event

CLIENT_FUNCTION_CALL_NAMES = frozenset({"adk_request_credential", "adk_request_confirmation", "adk_request_input"})
"""The calls the framework makes to the client (credentials, confirmations, input): answered by a person."""


def call_ids(event: Event) -> set[str]:
    """The ids of the function calls in ``event``."""
    return {call.id for call in event.get_function_calls() if call.id}


def response_ids(event: Event) -> set[str]:
    """The ids of the function responses in ``event``."""
    return {response.id for response in event.get_function_responses() if response.id}


def _requested_ids(event: Event) -> set[str]:
    """Call ids for which ``event`` asks the client for a confirmation or credentials."""
    actions = event.actions
    return {*actions.requested_tool_confirmations, *actions.requested_auth_configs}


def longest_self_contained_prefix(events: list[Event], *, all_events: list[Event] | None = None) -> list[Event]:
    """The longest prefix of ``events`` that leaves no call or request open.

    When a call that can never be answered blocks it, and ``all_events`` (the whole session) is given, calls
    proven dead are ignored, so one orphaned call does not stop every later compaction.
    """
    safe = _balanced_length(events, set())
    if safe == len(events) or all_events is None:
        return events[:safe]
    if safe > 0 and events[safe - 1].invocation_id != events[safe].invocation_id:
        return events[:safe]  # it stops at an invocation's end: a natural boundary
    newest = next((e.invocation_id for e in reversed(all_events)
                   if e.invocation_id and e.actions.compaction is None), None)
    dead = provably_dead_call_ids(events, all_events=all_events, newest_invocation_id=newest)
    if not dead:
        return events[:safe]
    return events[:max(safe, _balanced_length(events, dead))]


def _balanced_length(events: list[Event], ignored: set[str]) -> int:
    """Length of the longest prefix after which no call or request is open (``ignored`` ids never open)."""
    open_ids: set[str] = set()
    safe = 0
    for index, event in enumerate(events):
        open_ids -= response_ids(event)  # an answer closes only what an earlier event opened
        open_ids |= (call_ids(event) | _requested_ids(event)) - ignored
        if not open_ids:
            safe = index + 1
    return safe


def provably_dead_call_ids(events: list[Event], *, all_events: list[Event], newest_invocation_id: str | None
                           ) -> set[str]:
    """Calls made in ``events`` that nothing will ever answer.

    Not dead: a long-running call (except the framework's client requests of an older invocation, which
    nobody will answer now), a client request of the newest invocation, a call answered anywhere in the
    session, and any call of the newest invocation (it may still be running).
    """
    protected: set[str] = set()
    answered: set[str] = set()
    for event in all_events:
        current = not event.invocation_id or event.invocation_id == newest_invocation_id
        if event.long_running_tool_ids:
            if current:
                protected |= event.long_running_tool_ids
            else:
                client = {c.id for c in event.get_function_calls() if c.id and c.name in CLIENT_FUNCTION_CALL_NAMES}
                protected |= event.long_running_tool_ids - client
        if current:
            protected |= _requested_ids(event)
        answered |= response_ids(event) - _requested_ids(event)  # an answer that asks again answers nothing
    dead: set[str] = set()
    for event in events:
        if newest_invocation_id and event.invocation_id == newest_invocation_id:
            continue
        dead |= call_ids(event) - protected - answered
    return dead


def safe_split_index(candidates: list[Event], retention: int) -> int:
    """Where to split ``candidates`` to keep at least the last ``retention`` events, moved earlier until no
    kept answer's call is on the summarised side (0: nothing can be summarised)."""
    split = len(candidates) - retention
    if split <= 0:
        return 0
    unmatched: set[str] = set()
    for index in range(len(candidates) - 1, -1, -1):
        unmatched |= response_ids(candidates[index])
        unmatched -= call_ids(candidates[index])
        if not unmatched and index <= split:
            return index
    return 0
