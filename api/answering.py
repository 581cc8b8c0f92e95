"""Answering parked calls under the approval rules: refuse what a rule forbids, hold approvals below a quorum.

Every route that answers (``/function-responses``, and ``/run``/``/run_sse`` with a message of
FunctionResponses) goes through ``answer``: the rules are checked for every call first (a refusal writes
nothing); a confirmation whose rule needs ``quorum`` > 1 approvals records each distinct approver on the
record (``client.add_approval``, atomic) and stays parked until the last one, whose answer resumes it; a
duplicate approver is refused; a rejection answers at once.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from .approval_policy import ApprovalPolicies, ApprovalRefusedError, check_answers, tool_of
from .auth import Caller


async def answer(queue: Any, policies: ApprovalPolicies, caller: Caller, record: Any, responses: list[dict],
                 respond: Callable[[list[dict]], Awaitable[Any]]) -> tuple[Any, bool]:
    """Apply the rules to ``responses`` for ``record``; ``respond`` stores those that go through. The record
    as it stands after, and whether anything was stored (False: only approvals below a quorum, recorded)."""
    check_answers(policies, caller, record, [response.get("id") for response in responses])
    calls = {call.id: call for call in record.pending_calls}
    forwarded: list[dict] = []
    for response in responses:
        call = calls.get(response.get("id"))
        if call is None or call.kind != "confirmation" or not _approves(response):
            forwarded.append(response)
            continue
        quorum = policies.rule_for(record.app_name, tool_of(call)).quorum
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
    if not forwarded:
        return await queue.get(record.id), False
    return await respond(forwarded), True


def _approves(response: dict) -> bool:
    answer = response.get("response")
    return isinstance(answer, dict) and answer.get("confirmed") is True
