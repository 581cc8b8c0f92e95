"""The conversation sent to the model, rebuilt from the session's committed events.

Rules (as the reference runtime applies them): events of other branches are left out; another agent's
words become a user-role "For context:" message; function responses are moved right after their call
(several answers to one call collapse into the latest); client-made call ids (``adk-...``) are not sent;
tool-confirmation traffic and an AgentTool's calls re-issued to the client (proxy events) are not shown.
Compacted events are shown as their summaries (see ``compacted_history``); rewound events are not shown
(see ``events.rewinds``).
"""

from __future__ import annotations

from google.genai import types

from ..auth.requests import REQUEST_CREDENTIAL_FUNCTION_CALL_NAME
from ..events import Event
from ..events.rewinds import live_events
from ..events.tool_confirmation import REQUEST_CONFIRMATION_FUNCTION_CALL_NAME
from ..ids import CLIENT_CALL_ID_PREFIX
from . import _fast
from .agent_modes import scope_of
from .agent_tool_pause import is_proxy_event
from .compacted_history import is_compaction, recover_compacted_calls, replace_compacted


def _belongs_to_branch(branch: str | None, event: Event) -> bool:
    # a delegated task's events are its own: neither its caller nor other tasks see them, nor it theirs
    if scope_of(branch) != scope_of(event.branch):
        return False
    if not branch or not event.branch:
        return True
    return branch == event.branch or branch.startswith(event.branch + ".")


def _is_empty(event: Event) -> bool:
    content = event.content
    if content is not None and event.actions.compaction is not None:
        return not content.parts  # a summary is shown whatever its text (a compaction event has no content)
    return not content or not content.role or not content.parts or content.parts[0].text == ""


def _foreign(event: Event) -> Event | None:
    """Another agent's event, retold to this agent as user-role context (None when only thoughts remain)."""
    parts = [types.Part(text="For context:")]
    for part in event.content.parts:
        if part.thought:
            continue
        if part.text:
            parts.append(types.Part(text=f"[{event.author}] said: {part.text}"))
        elif part.function_call:
            call = part.function_call
            parts.append(types.Part(text=f"[{event.author}] called tool `{call.name}` with parameters: {call.args}"))
        elif part.function_response:
            response = part.function_response
            parts.append(
                types.Part(text=f"[{event.author}] `{response.name}` tool returned result: {response.response}")
            )
        else:
            parts.append(part)
    if len(parts) == 1:
        return None
    return _fast.event(
        author="user", content=_fast.content("user", parts), branch=event.branch, timestamp=event.timestamp,
        id=event.id, invocation_id=event.invocation_id,
    )


def merge_response_events(events: list[Event]) -> Event:
    """Several function-response events as one; a later answer to the same call id replaces the earlier."""
    parts = list(events[0].content.parts)
    index = {p.function_response.id: i for i, p in enumerate(parts) if p.function_response}
    for event in events[1:]:
        for part in event.content.parts:
            if part.function_response and part.function_response.id in index:
                parts[index[part.function_response.id]] = part
            else:
                if part.function_response:
                    index[part.function_response.id] = len(parts)
                parts.append(part)
    first = events[0]
    return first.model_copy(update={"content": types.Content(role=first.content.role, parts=parts)})


def _latest_response_next_to_call(events: list[Event]) -> list[Event]:
    if len(events) < 2:
        return events
    responses = events[-1].get_function_responses()
    if not responses:
        return events
    ids = {r.id for r in responses}
    if any(call.id in ids for call in events[-2].get_function_calls()):
        return events
    for index in range(len(events) - 2, -1, -1):
        calls = events[index].get_function_calls()
        if any(call.id in ids for call in calls):
            call_ids = {call.id for call in calls}
            answers = [
                e for e in events[index + 1 : -1] if any(r.id in call_ids for r in e.get_function_responses())
            ]
            return [*events[: index + 1], merge_response_events([*answers, events[-1]])]
    return events


def _responses_after_calls(events: list[Event]) -> list[Event]:
    last_answer: dict[str | None, int] = {}
    for index, event in enumerate(events):
        for response in event.get_function_responses():
            last_answer[response.id] = index
    if not last_answer:
        return events
    result = []
    for event in events:
        if event.get_function_responses():
            continue
        result.append(event)
        calls = event.get_function_calls()
        if calls:
            indices = sorted({last_answer[c.id] for c in calls if c.id in last_answer})
            if len(indices) == 1:
                result.append(events[indices[0]])
            elif indices:
                result.append(merge_response_events([events[i] for i in indices]))
    return result


def strip_client_ids(content: types.Content) -> types.Content:
    """``content`` without client-made call ids (the same object when it has none)."""
    changed = False
    parts = []
    for part in content.parts:
        if part.function_call and (part.function_call.id or "").startswith(CLIENT_CALL_ID_PREFIX):
            part = _fast.replace(part, {"function_call": _fast.replace(part.function_call, {"id": None})})
            changed = True
        elif part.function_response and (part.function_response.id or "").startswith(CLIENT_CALL_ID_PREFIX):
            response = _fast.replace(part.function_response, {"id": None})
            part = _fast.replace(part, {"function_response": response})
            changed = True
        parts.append(part)
    return _fast.replace(content, {"parts": parts}) if changed else content


def is_confirmation_part(part: types.Part) -> bool:
    """A tool-confirmation request or answer: framework traffic the model is not shown."""
    named = part.function_call or part.function_response
    # credential requests and their answers too (google-adk leaves them out of the model's view as well)
    return named is not None and named.name in (REQUEST_CONFIRMATION_FUNCTION_CALL_NAME, REQUEST_CREDENTIAL_FUNCTION_CALL_NAME)


def _without_confirmations(event: Event) -> Event | None:
    """``event`` without tool-confirmation requests and answers (None when nothing else is left)."""
    parts = event.content.parts
    if not any(part.function_call or part.function_response for part in parts):
        return event
    kept = [part for part in parts if not is_confirmation_part(part)]
    if len(kept) == len(parts):
        return event
    if not kept:
        return None
    return _fast.replace(event, {"content": _fast.content(event.content.role, kept)})


def retold(event: Event, agent_name: str, branch: str | None) -> Event | None:
    """``event`` as ``agent_name`` on ``branch`` is shown it, or None when it is left out."""
    if _is_empty(event) or not _belongs_to_branch(branch, event) or is_proxy_event(event):
        return None  # a proxy event's answers are left out with it (an answer is shown after its call)
    event = _without_confirmations(event)
    if event is None:
        return None
    if agent_name and event.author not in ("user", agent_name):  # no agent name: nobody's words are retold
        return _foreign(event)
    return event


def arrange(selected: list[Event]) -> list[Event]:
    """The shown events with every function response moved right after its call."""
    return _responses_after_calls(_latest_response_next_to_call(selected))


def shown_history(events: list[Event], agent_name: str, branch: str | None) -> list[Event]:
    """The events ``agent_name`` on ``branch`` may be shown, with compacted ranges replaced by their summaries
    (``events`` itself when it holds no compaction)."""
    if not any(map(is_compaction, events)):
        return events
    kept = kept_events(events, agent_name, branch)
    return recover_compacted_calls(replace_compacted(kept, agent_name), kept)


def kept_events(events: list[Event], agent_name: str, branch: str | None) -> list[Event]:
    """The events (compaction events included) ``agent_name`` on ``branch`` is shown something of, as stored."""
    return [event for event in events if (_belongs_to_branch(branch, event) if is_compaction(event)
                                          else retold(event, agent_name, branch) is not None)]


def build_contents(events: list[Event], agent_name: str, branch: str | None, current_turn_only: bool = False
                   ) -> list[types.Content]:
    """The model's view of ``events`` for ``agent_name`` running on ``branch``."""
    events = live_events(events)
    if current_turn_only:
        for index in range(len(events) - 1, -1, -1):
            event = events[index]  # a compaction event is the user's (ADK): it can start the turn
            if (is_compaction(event) or not _is_empty(event)) and event.author != agent_name:
                events = events[index:]
                break
        else:
            events = []
    events = shown_history(events, agent_name, branch)
    selected = [shown for event in events if (shown := retold(event, agent_name, branch)) is not None]
    return [strip_client_ids(event.content) for event in arrange(selected)]
