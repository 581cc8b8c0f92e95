"""Which invocation and which agent a message goes to, and which long-running calls still wait."""

from __future__ import annotations

from typing import TYPE_CHECKING

from google.genai import types

from .agents.llm_agent import LlmAgent
from .errors import FunctionCallNotFoundError, InvalidMessageError
from .events import Event, EventActions
from .events.event_actions import empty_actions
from .events.pending_calls import PendingCalls
from .events.rewinds import live_events_newest_first
from .flows.agent_modes import delegator_of

if TYPE_CHECKING:
    from .agents.base_agent import BaseAgent
    from .sessions import Session


def function_call_event(session: Session, call_id: str | None) -> Event:
    """The committed event that issued call ``call_id``; FunctionCallNotFoundError when none did (or when a
    rewind took it back)."""
    for event in live_events_newest_first(session.events):
        for call in event.get_function_calls():
            if call.id == call_id:
                return event
    raise FunctionCallNotFoundError(f"no function call with id {call_id!r} in session {session.id!r}")


def find_invocation_for_function_responses(session: Session, message: types.Content) -> str:
    """The id of the invocation whose calls ``message``'s FunctionResponses answer.

    Only responses that carry an id take part: as in ADK 2.13, a response without one resumes nothing
    (``check_message`` leaves it out, so a message of only such responses starts a new turn).
    Raises FunctionCallNotFoundError naming the ids no committed call has, and InvalidMessageError when
    the message carries no response with an id or its responses answer calls of different invocations.
    """
    wanted = {part.function_response.id for part in message.parts or []
              if part.function_response and part.function_response.id}
    if not wanted:
        raise InvalidMessageError("the message carries no function response with an id")
    owners: dict[str, str] = {}
    for event in live_events_newest_first(session.events):  # a rewound call cannot be answered any more
        for call in event.get_function_calls():
            if call.id in wanted and call.id not in owners:
                owners[call.id] = event.invocation_id
        if len(owners) == len(wanted):
            break
    unknown = wanted - owners.keys()
    if unknown:
        raise FunctionCallNotFoundError(
            f"Function call not found for function response ids: {unknown!r}. Ensure each function "
            "response ID matches an existing function call in the session history."
        )
    invocations = sorted(set(owners.values()))
    if len(invocations) > 1:
        raise InvalidMessageError(f"the function responses answer calls of several invocations: {invocations!r}")
    return invocations[0]


def pending_long_running_calls(session: Session, invocation_id: str) -> list[types.FunctionCall]:
    """The long-running calls of ``invocation_id`` still waiting for a final answer, in call order
    (the rule: ``runtime.events.pending_calls``)."""
    return list(_pending_calls(session, invocation_id).values())


def _pending_calls(session: Session, invocation_id: str | None) -> dict[str, types.FunctionCall]:
    """Pending long-running calls by id, of one invocation or (``None``) of the whole session."""
    pending = PendingCalls()
    for event in session.events:
        if invocation_id is None or event.invocation_id == invocation_id:
            pending.note(event)
    return {call_id: call for call_id, (call, _branch) in pending.items()}


def _can_transfer_back(agent: BaseAgent) -> bool:
    """True when every agent from ``agent`` up is an LlmAgent allowed to transfer to its parent."""
    while agent is not None:
        if not isinstance(agent, LlmAgent) or agent.disallow_transfer_to_parent:
            return False
        agent = agent.parent_agent
    return True


def agent_for_new_turn(session: Session, root: BaseAgent, agents: dict[str, BaseAgent]) -> BaseAgent:
    """The agent a new user turn goes to: the one that last answered, if it can transfer back; else root.
    Rewound events do not count: the turn goes where it would have gone before them. A task or single_turn
    agent's turn goes to the agent that delegated to it (which resumes a task still open)."""
    for event in live_events_newest_first(session.events):
        if event.author == "user":
            continue
        if event.author == root.name:
            return root
        agent = agents.get(event.author)
        if agent is None:
            continue
        if agent.parent_agent is not None and _can_transfer_back(agent):
            return delegator_of(agent)  # an open task is resumed by the agent that delegated it
    return root


def check_message(message: types.Content | None) -> list[types.FunctionResponse]:
    """Refuse messages a user may not send; return the function responses that resume an invocation.

    Those are the responses with an id. ADK 2.13 matches a response to its call by id only: one without an
    id is committed with the message but answers nothing (the model is not shown it), so a message of only
    such responses is a new turn, and the long-running call it meant stays pending.
    """
    if message is None:
        return []
    if not message.parts:
        raise InvalidMessageError("new_message has no parts; send at least one text or function response part")
    if any(part.function_call for part in message.parts):
        raise InvalidMessageError("User message cannot contain function calls.")
    return [part.function_response for part in message.parts if part.function_response and part.function_response.id]


def user_message_event(
    invocation_id: str, message: types.Content, state_delta: dict | None, branch: str | None = None,
    custom_metadata: dict | None = None,
) -> Event:
    """The event that records a user's message (with the state delta sent along), as the Runner commits it."""
    actions = EventActions(state_delta=dict(state_delta)) if state_delta else empty_actions()
    return Event(invocation_id=invocation_id, author="user", content=message, branch=branch, actions=actions,
                 custom_metadata=dict(custom_metadata) if custom_metadata else None)


def already_committed(message: types.Content, prior: list[Event], is_response: bool) -> bool:
    """A redelivered request must not add its message twice."""
    if not prior:
        return False
    if is_response:
        return prior[-1].author == "user" and prior[-1].content == message
    return any(e.author == "user" and e.content == message for e in prior)


def first_user_content(prior: list[Event]) -> types.Content | None:
    return next((e.content for e in prior if e.author == "user" and e.content is not None), None)


def branch_of(agent: BaseAgent, prior: list[Event]) -> str | None:
    return next((e.branch for e in reversed(prior) if e.author == agent.name), None)
