"""How an ADK ``/run`` or ``/run_sse`` request becomes an invocation to follow.

- A text message starts a new invocation (queued behind the session's earlier ones, or as ``multitaskStrategy``
  says: ``worker.records.double_texting``).
- A message of FunctionResponses answers the invocation that issued those calls (``invocationId`` names it,
  else it is found among the session's parked invocations, else from the session's history); it resumes
  under its own id and the client is sent only what happens after. Answering calls that are not pending any
  more (the invocation was cancelled, or answered already) is the same 409 ``/function-responses`` gives,
  and nothing is written.
- No message, with ``invocationId``: follow that invocation if it is still queued or running; a parked or
  settled one has nothing more to run.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from api.views.schemas import AgentRunRequest
from runtime.errors import InvocationNotFoundError, UsageError

FOLLOWABLE = ("queued", "running")


@dataclass(frozen=True, kw_only=True)
class RunStart:
    """The invocation a run request follows: its id, the stream entry to read after, whether anything runs."""

    invocation_id: str
    after: str | None = None
    idle: bool = False
    """Nothing will run (a parked or settled invocation named without a message): answer at once, empty."""


Enqueue = Callable[[AgentRunRequest], Awaitable[str]]
"""Starts a new invocation for a run request (the enqueue door, ``api.doors.enqueue``); its id."""

Respond = Callable[[str, list[dict], dict | None], Awaitable[bool]]
"""Answers an invocation's calls (the answer door, ``api.doors.answer``): ``respond(owner, responses,
state_delta)``; True when the invocation resumed (False: an approval below its quorum was recorded)."""


async def start_run(body: AgentRunRequest, queue: Any, session_service: Any, *, enqueue: Enqueue | None = None,
                    respond: Respond | None = None) -> RunStart:
    """Enqueue, resume or follow, as the module docstring says: a new message goes through ``enqueue``, a
    message of FunctionResponses through ``respond`` (the doors apply every guard); following reads only."""
    if body.new_message is None:
        return await _follow(body, queue)
    if enqueue is None or respond is None:
        raise UsageError("a run request with a newMessage needs the enqueue and answer doors")
    parts = body.new_message.parts or []
    answers = [part.function_response for part in parts if part.function_response is not None]
    if answers and len(answers) == len(parts):
        owner = await _owner(body, queue, session_service, {answer.id for answer in answers})
        if owner is not None:
            after = await queue.stream_position(owner)
            responses = [answer.model_dump(mode="json", exclude_none=True) for answer in answers]
            if not await respond(owner, responses, body.state_delta):
                return RunStart(invocation_id=owner, after=after, idle=True)
            return RunStart(invocation_id=owner, after=after)
    if body.invocation_id is not None:
        raise UsageError("invocationId goes with a newMessage of FunctionResponses answering that invocation's "
                         "calls (or with no newMessage, to follow it); a new invocation gets its own id")
    return RunStart(invocation_id=await enqueue(body))


async def _record_in_session(body: AgentRunRequest, queue: Any, invocation_id: str):
    """The invocation's record; InvocationNotFoundError unless it belongs to the request's session."""
    try:
        record = await queue.get(invocation_id)
    except InvocationNotFoundError:
        record = None
    if record is None or (record.app_name, record.user_id, record.session_id) != (
            body.app_name, body.user_id, body.session_id):
        raise InvocationNotFoundError(f"invocation {invocation_id!r} not found in session {body.session_id!r}")
    return record


async def _follow(body: AgentRunRequest, queue: Any) -> RunStart:
    if body.invocation_id is None:
        raise UsageError("newMessage is required unless invocationId names an invocation to follow")
    # Position first, status second: an invocation that settles in between still ends the stream we follow.
    try:
        after = await queue.stream_position(body.invocation_id)
    except InvocationNotFoundError:
        after = None  # answered just below
    record = await _record_in_session(body, queue, body.invocation_id)
    return RunStart(invocation_id=record.id, after=after, idle=record.status not in FOLLOWABLE)


async def _exists(queue: Any, invocation_id: str) -> bool:
    try:
        await queue.get(invocation_id)
    except InvocationNotFoundError:
        return False
    return True


async def _owner(body: AgentRunRequest, queue: Any, session_service: Any, call_ids: set[str]) -> str | None:
    """The queue invocation the answered calls belong to; None when no queue invocation issued them."""
    if body.invocation_id is not None:
        return (await _record_in_session(body, queue, body.invocation_id)).id
    parked = await queue.list_invocations(body.app_name, body.user_id, "parked", session_id=body.session_id)
    for record in parked:
        if call_ids <= {call.id for call in record.pending_calls}:
            return record.id
    # Not parked any more (cancelled, answered, expired): the invocation that issued the calls answers 409.
    session = await session_service.get_session(app_name=body.app_name, user_id=body.user_id,
                                                session_id=body.session_id)
    for event in reversed(session.events if session is not None else []):
        if any(call.id in call_ids for call in event.get_function_calls()) and event.invocation_id:
            return event.invocation_id if await _exists(queue, event.invocation_id) else None
    return None
