"""An agentq app behind the A2A SDK's request handler: an A2A task is an agentq invocation.

``message/send`` (and ``message/stream``) without a task starts an invocation whose id is the task's id, in the
session named by the A2A context id (made on first use), for the user the caller is (its principal). The executor
follows the invocation's stream and tells the SDK what happens: the agent's text as ``working`` updates, a parked
invocation as ``input-required`` (its pending calls in a data part), the final answer as the task's artifact,
then ``completed``, ``failed`` or ``canceled``. A message to an ``input-required`` task answers its pending call
(``answer_of``) and resumes the same invocation; ``tasks/cancel`` cancels it. The invocation runs on the workers,
so a task goes on if the API process that took it stops; the task itself is saved in Redis (``RedisTaskStore``).
Starting, answering and cancelling go through the doors (``api.doors``) as the authenticated caller, so A2A
applies the same scope, roles, approval rules, limits and audit as HTTP.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from a2a.helpers.proto_helpers import new_task
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.id_generator import IDGenerator, IDGeneratorContext
from a2a.server.tasks import TaskUpdater
from a2a.types import Part, TaskState
from a2a.utils.errors import InvalidParamsError, InvalidRequestError, TaskNotFoundError
from google.protobuf import json_format, struct_pb2

from api import doors
from api.access.approval_policy import ApprovalRefusedError, check_answers
from api.access.auth import Caller, ForbiddenError
from runtime.errors import InvalidTransitionError, NotFoundError, UsageError
from runtime.ids import new_invocation_id

log = logging.getLogger("agentq.a2a")

CONFIRMATION = "adk_request_confirmation"
CALLER = "agentq_caller"
"""ServerCallContext.state key: the authenticated api.access.auth.Caller of the request (set by api.a2a.server)."""
OWNER = "agentqUser"
"""Task metadata key: the agentq user the task's invocation runs for (what scopes who may see the task)."""
YES = {"yes", "y", "approve", "approved", "confirm", "confirmed", "ok", "true"}
NO = {"no", "n", "reject", "rejected", "deny", "denied", "false"}


def caller_of(context: Any) -> Caller | None:
    """The authenticated caller of a request context or server call context (None: an internal call)."""
    call_context = getattr(context, "call_context", context)
    state = getattr(call_context, "state", None) or {}
    return state.get(CALLER)


@contextmanager
def as_a2a_errors() -> Iterator[None]:
    """A door's refusal as the A2A error a client expects: not found (404 over HTTP) is TaskNotFoundError, a
    missing role or an approval rule (403 over HTTP) an InvalidRequestError saying the permission is denied."""
    try:
        yield
    except NotFoundError as exc:
        raise TaskNotFoundError(message=f"Task not found: {exc}") from exc
    except ForbiddenError as exc:
        raise InvalidRequestError(message=f"Permission denied: {exc}") from exc
    except UsageError as exc:
        raise InvalidParamsError(message=str(exc)) from exc


class InvocationIds(IDGenerator):
    """Task ids are agentq invocation ids, so a task and its invocation are one thing under one name."""

    def generate(self, context: IDGeneratorContext) -> str:
        return new_invocation_id()


def text_of(message: Any) -> str:
    """The text parts of an A2A message, joined."""
    return "\n".join(part.text for part in message.parts if part.WhichOneof("content") == "text")


def data_of(message: Any) -> dict | None:
    """The first data part of an A2A message as a dict (None without one)."""
    for part in message.parts:
        if part.WhichOneof("content") == "data":
            value = json_format.MessageToDict(part.data)
            return value if isinstance(value, dict) else {"value": value}
    return None


def answer_of(message: Any, pending: list[Any]) -> dict:
    """The function response an A2A message gives to a parked invocation's pending call.

    A data part ``{"callId"?: ..., "response": {...}}`` (or just the response object) answers the call it names,
    or the only one pending; text answers the only pending call: yes/no for a confirmation, else
    ``{"answer": text}``. UsageError when the message does not say which call or what answer."""
    data = data_of(message)
    call_id = (data or {}).get("callId")
    calls = [call for call in pending if call_id in (None, call.id)]
    if len(calls) != 1:
        names = ", ".join(f"{call.id} ({call.name})" for call in pending) or "none"
        raise UsageError(f"say which pending call this answers with a data part {{'callId': ..., 'response': ...}}; "
                         f"pending: {names}")
    call = calls[0]
    if data is not None:
        response = data.get("response", {k: v for k, v in data.items() if k != "callId"})
    else:
        words = text_of(message).strip()
        if call.name == CONFIRMATION:
            if words.lower() not in YES | NO:
                raise UsageError(f"answer the confirmation {call.id} with yes or no (or a data part "
                                 "{'confirmed': true|false})")
            response = {"confirmed": words.lower() in YES}
        else:
            response = {"answer": words}
    if not isinstance(response, dict):
        raise UsageError("a response must be a JSON object")
    return {"id": call.id, "name": call.name, "response": response}


def push_url(context: RequestContext) -> str | None:
    """The push notification URL a SendMessage request gave for its task: agentq's webhooks deliver to it
    (signed, retried, dead-lettered) when the invocation parks, completes, fails or is cancelled."""
    configuration = context.configuration
    if configuration is None or not configuration.HasField("task_push_notification_config"):
        return None
    return configuration.task_push_notification_config.url or None


def data_part(value: dict) -> Part:
    data = struct_pb2.Value()
    json_format.ParseDict(value, data)
    return Part(data=data)


class AgentqExecutor(AgentExecutor):
    """Runs A2A requests for one app as agentq invocations (see the module docstring)."""

    def __init__(self, client: Any, session_service: Any, app: str, guards: doors.Guards):
        self.client = client
        self.session_service = session_service
        self.app = app
        self.guards = guards

    async def admit(self, caller: Caller | None, message: Any) -> None:
        """Refuse a message the doors would refuse, before the SDK takes it (the A2A error, nothing written).

        The SDK marks a task ``failed`` when ``execute`` raises, and a refused start leaves a ``failed`` task
        behind: a read-only key's, or eve's, refused answer would end the requester's parked task, and nobody
        could answer it any more. So the doors' checks that write nothing run here first: a new task needs scope
        and role ``enqueue``; a message on a parked invocation's task needs scope, role ``answer``, an answer the
        message names, and the approval rules (a repeated approval of a quorum included). ``execute`` goes
        through the doors all the same (this only moves the refusal ahead of the SDK)."""
        if caller is None:
            return
        with as_a2a_errors():
            if not message.task_id:
                doors.check_scope(self.guards, caller, self.app, caller.principal_id)
                doors.require_role(caller, "enqueue", f"starting an invocation in app {self.app!r}")
                return
            record = await doors.visible_record(self.client, self.guards, caller, message.task_id)
            if record.status != "parked":
                raise UsageError(f"task {message.task_id} is not waiting for input ({record.status}): it takes no "
                                 "message")
            doors.require_role(caller, "answer", f"answering invocation {message.task_id!r}")
            response = answer_of(message, record.pending_calls)
            check_answers(self.guards.approval, caller, record, [response["id"]])
            if caller.principal_id in (getattr(record, "approvals", None) or {}).get(response["id"], []):
                raise ApprovalRefusedError(f"approval rule 'quorum': principal {caller.principal_id!r} approved "
                                           f"call {response['id']!r} already")

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        caller = caller_of(context)
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        task = context.current_task
        if task is not None and task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED:
            await self._answer(caller, context, updater)
            return
        if task is not None:
            raise UsageError(f"task {context.task_id} is {TaskState.Name(task.status.state)}: it takes no message")
        user = caller.principal_id  # an A2A caller acts as its own user
        text = text_of(context.message)
        data = data_of(context.message)
        message = text if data is None else f"{text}\n{json.dumps(data)}".strip()
        if not message:
            raise UsageError("the message has no text or data part")

        async def submitted() -> None:  # written only once the door's guards have passed
            submitted_task = new_task(context.task_id, context.context_id, TaskState.TASK_STATE_SUBMITTED,
                                      history=[context.message])
            submitted_task.metadata.update({OWNER: user})
            await event_queue.enqueue_event(submitted_task)
            await self._session(user, context.context_id)

        with as_a2a_errors():
            await doors.enqueue(caller, self.guards, self.client, app_name=self.app, user_id=user,
                                session_id=context.context_id, new_message=message, invocation_id=context.task_id,
                                webhook=push_url(context), prepare=submitted)
        await updater.start_work()
        await self._follow(updater, context.task_id, None)

    async def _answer(self, caller: Caller, context: RequestContext, updater: TaskUpdater) -> None:
        """A message to an ``input-required`` task: the answer door, then follow the resumed invocation."""
        with as_a2a_errors():
            record = await doors.visible_record(self.client, self.guards, caller, context.task_id)
            after = await self.client.stream_position(context.task_id)
            response = answer_of(context.message, record.pending_calls)
            outcome = await doors.answer(caller, self.guards, self.client, context.task_id, [response],
                                         record=record)
        if not outcome.stored:  # an approval below its quorum: recorded, the task still waits
            await updater.requires_input(updater.new_agent_message(
                [Part(text="Approval recorded; the call needs more approvers.")]))
            return
        await updater.start_work()
        await self._follow(updater, context.task_id, after)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        with as_a2a_errors():
            try:
                await doors.cancel(caller_of(context), self.guards, self.client, context.task_id,
                                   "cancelled over A2A")
            except InvalidTransitionError:
                pass  # it settled meanwhile: the task keeps the state it reached
        await updater.cancel()

    async def _session(self, user: str, session_id: str) -> None:
        """The A2A context's session, made on its first task."""
        found = await self.session_service.get_session(app_name=self.app, user_id=user, session_id=session_id)
        if found is None:
            await self.session_service.create_session(app_name=self.app, user_id=user, session_id=session_id)

    async def _follow(self, updater: TaskUpdater, invocation_id: str, after: str | None) -> None:
        """Tell the SDK what the invocation does until it parks or settles."""
        last_text = ""
        async for entry in self.client.events(invocation_id, after=after):
            if entry.kind == "event":
                said = _model_text(entry.data)
                if said and not entry.data.get("partial"):
                    last_text = said
                    await updater.update_status(TaskState.TASK_STATE_WORKING, updater.new_agent_message(
                        [Part(text=said)]))
                continue
            status = entry.data.get("status")
            if status == "parked":
                calls = entry.data.get("detail", {}).get("pendingCalls") or []
                await updater.requires_input(updater.new_agent_message(
                    [Part(text=_asks(calls)), data_part({"pendingCalls": calls})]))
                return
            if status == "completed":
                if last_text:
                    await updater.add_artifact([Part(text=last_text)], name="answer")
                await updater.complete()
                return
            if status == "failed":
                error = entry.data.get("detail", {}).get("error") or entry.data.get("error") or "failed"
                await updater.failed(updater.new_agent_message([Part(text=str(error))]))
                return
            if status == "cancelled":
                await updater.cancel()
                return


def _model_text(event: dict) -> str:
    content = event.get("content") or {}
    if content.get("role") != "model":
        return ""
    return "".join(part.get("text") or "" for part in content.get("parts") or [] if not part.get("thought"))


def _asks(calls: list[dict]) -> str:
    """What a parked invocation waits for, in a sentence per pending call."""
    lines = []
    for call in calls:
        if call.get("name") == CONFIRMATION:
            original = (call.get("args") or {}).get("originalFunctionCall") or {}
            lines.append(f"Confirm {original.get('name', 'the call')}({json.dumps(original.get('args', {}))})? "
                         "Answer yes or no.")
        else:
            message = (call.get("args") or {}).get("message")
            lines.append(message or f"{call.get('name')} waits for an answer (call {call.get('id')}).")
    return "\n".join(lines) or "Input required."
