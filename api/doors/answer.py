"""The answer door: function responses to a parked invocation's pending calls, confirmations included.

The approval rules are checked for every call first (a refusal writes nothing); a confirmation whose rule needs
``quorum`` > 1 approvals records each distinct approver on the record (``add_approval``, atomic) and stays parked
until the last one, whose answer resumes it; a duplicate approver is refused; a rejection answers at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from api.access.approval_policy import ApprovalRefusedError, check_answers, tool_of
from api.access.auth import Caller
from api.doors.guards import Guards, actor_of, check_scope, require_role, visible_record
from runtime.events.tool_confirmation import REQUEST_CONFIRMATION_FUNCTION_CALL_NAME
from worker.records.record import only_confirmation


@dataclass(frozen=True)
class AnswerOutcome:
    """The record as it stands after the answer, and whether anything was stored (False: only approvals below a
    quorum were recorded; the invocation stays parked)."""

    record: Any
    stored: bool


async def answer(caller: Caller, guards: Guards, queue: Any, invocation_id: str, responses: list[dict], *,
                 state_delta: dict | None = None, record: Any = None) -> AnswerOutcome:
    """Answer pending calls: scope (404), role ``answer`` (403), the approval rules (403 naming the rule), the
    quorum, then ``queue.respond`` recording the caller as who answered (the store's answer checks: 409 for a
    call that is not pending). ``record``: the invocation's record when the entry point just read it (its scope
    is checked all the same); ``state_delta`` is committed with the answer when the invocation resumes."""
    if record is None:
        record = await visible_record(queue, guards, caller, invocation_id)
    else:
        check_scope(guards, caller, record.app_name, record.user_id)
    require_role(caller, "answer", f"answering invocation {invocation_id!r}")
    check_answers(guards.approval, caller, record, [response.get("id") for response in responses])
    forwarded = await _past_quorum(caller, guards, queue, record, responses)
    if not forwarded:
        return AnswerOutcome(await queue.get(record.id), False)
    stored = await queue.respond(record.id, forwarded, actor=actor_of(caller), pending=record.pending_calls,
                                 state_delta=state_delta)
    return AnswerOutcome(stored, True)


async def confirm(caller: Caller, guards: Guards, queue: Any, invocation_id: str, call_id: str | None,
                  confirmed: bool, payload: Any = None) -> AnswerOutcome:
    """Approve or reject a pending tool confirmation (``call_id`` None: the only one pending), through ``answer``."""
    record = await visible_record(queue, guards, caller, invocation_id)
    if call_id is None:
        call_id = only_confirmation(record).id
    response = {"confirmed": confirmed} if payload is None else {"confirmed": confirmed, "payload": payload}
    return await answer(caller, guards, queue, invocation_id, [
        {"id": call_id, "name": REQUEST_CONFIRMATION_FUNCTION_CALL_NAME, "response": response}], record=record)


async def _past_quorum(caller: Caller, guards: Guards, queue: Any, record: Any, responses: list[dict]) -> list[dict]:
    """The responses to store now: all but approvals of confirmations still short of their quorum (recorded)."""
    calls = {call.id: call for call in record.pending_calls}
    forwarded: list[dict] = []
    for response in responses:
        call = calls.get(response.get("id"))
        if call is None or call.kind != "confirmation" or not _approves(response):
            forwarded.append(response)
            continue
        quorum = guards.approval.rule_for(record.app_name, tool_of(call)).quorum
        if quorum <= 1:
            forwarded.append(response)
            continue
        approvers = await queue.add_approval(record.id, call.id, caller.principal_id)
        if approvers is None:
            raise ApprovalRefusedError(
                f"approval rule 'quorum': principal {caller.principal_id!r} approved call {call.id!r} of "
                f"{tool_of(call)!r} already; it needs {quorum} distinct approvers")
        if len(approvers) >= quorum:
            forwarded.append(response)
    return forwarded


def _approves(response: dict) -> bool:
    given = response.get("response")
    return isinstance(given, dict) and given.get("confirmed") is True
