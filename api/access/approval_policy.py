"""Who may answer a parked call: per app and per tool, from settings (``AGENTQ_APPROVAL_POLICY``).

A rule names the roles that may answer (any of; default ``answer``), optionally the only principals that may,
whether the principal that enqueued the invocation is kept from answering it (separation of duties; on by
default for confirmations), and how many distinct approvers a confirmation needs before its tool runs
(``quorum``). Rules are looked up by app then tool name, ``"*"`` matching any; the tool of a confirmation is
the held call's, not ``adk_request_confirmation``. A refused answer is ApprovalRefusedError (403) naming the
rule, raised before anything is written.

    {"transfers": {"transfer_money": {"quorum": 2, "roles": ["answer"]}}, "*": {"*": {}}}
"""

from __future__ import annotations

import json
import logging
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from api.access.auth import WILDCARD, Caller, ForbiddenError, Role
from runtime.errors import UsageError

log = logging.getLogger("agentq.api")


class ApprovalRefusedError(ForbiddenError):
    """Raised when an approval rule keeps the caller from answering a call (403 naming the rule)."""


class ApprovalRule(BaseModel):
    """Who may answer one tool's calls."""

    model_config = ConfigDict(extra="forbid")

    roles: list[Role] = Field(default_factory=lambda: ["answer"], min_length=1)
    principals: list[str] | None = None
    """When set, only these principal ids may answer (besides holding one of ``roles``)."""
    separation_of_duties: bool | None = None
    """The enqueuing principal may not answer. None (default): on for confirmations, for principals with an
    identity (named keys, tokens); True: for every caller, unnamed keys too; False: off."""
    quorum: int = Field(default=1, ge=1, le=20)
    """Distinct approvals a confirmation needs before its tool runs (a rejection ends it at once)."""


DEFAULT_RULE = ApprovalRule()


class ApprovalPolicies(BaseModel):
    """``{app: {tool: rule}}``, ``"*"`` for any app or tool."""

    model_config = ConfigDict(extra="forbid")

    rules: dict[str, dict[str, ApprovalRule]] = Field(default_factory=dict)

    @classmethod
    def parse(cls, text: str, where: str = "AGENTQ_APPROVAL_POLICY") -> ApprovalPolicies:
        """From JSON; UsageError naming what is wrong."""
        try:
            return cls(rules=json.loads(text))
        except json.JSONDecodeError as exc:
            raise UsageError(f"{where} is not valid JSON: {exc}") from exc
        except ValidationError as exc:
            error = exc.errors()[0]
            place = ".".join(str(part) for part in error["loc"][1:])
            raise UsageError(f"{where}: {place}: {error['msg']}") from exc

    def rule_for(self, app_name: str, tool_name: str) -> ApprovalRule:
        """The most specific rule: app+tool, app+*, *+tool, *+*, else the default."""
        for app in (app_name, WILDCARD):
            tools = self.rules.get(app)
            if tools is not None:
                for tool in (tool_name, WILDCARD):
                    if tool in tools:
                        return tools[tool]
        return DEFAULT_RULE


def tool_of(call: Any) -> str:
    """The tool a pending call is about: a confirmation's held call, otherwise the call itself."""
    if call.kind == "confirmation":
        original = call.args.get("originalFunctionCall") or {}
        return str(original.get("name") or call.name)
    return call.name


def refusal(rule: ApprovalRule, caller: Caller, record: Any, call: Any) -> str | None:
    """Why ``caller`` may not answer ``call`` of ``record`` under ``rule`` (None: they may)."""
    if not caller.has_any(frozenset(rule.roles)):
        return (f"approval rule 'roles': answering {tool_of(call)!r} needs role "
                f"{' or '.join(repr(r) for r in rule.roles)}; principal {caller.principal_id!r} has "
                f"{list(caller.roles)!r}")
    if rule.principals is not None and caller.grant is not None and caller.principal_id not in rule.principals:
        return (f"approval rule 'principals': principal {caller.principal_id!r} is not one of those who may "
                f"answer {tool_of(call)!r}")
    enqueued_by = getattr(record, "enqueued_by", None)
    applies = rule.separation_of_duties
    if applies is None:
        applies = call.kind == "confirmation" and caller.named
    if applies and enqueued_by is not None and caller.grant is not None and enqueued_by == caller.principal_id:
        return (f"approval rule 'separation_of_duties': principal {caller.principal_id!r} enqueued invocation "
                f"{record.id!r} and may not answer its {tool_of(call)!r} call")
    return None


def check_answers(policies: ApprovalPolicies, caller: Caller, record: Any, call_ids: list[str]) -> None:
    """ApprovalRefusedError for the first answered call the caller may not answer (unknown ids pass: the
    store refuses them with its own 409)."""
    calls = {call.id: call for call in record.pending_calls}
    for call_id in call_ids:
        call = calls.get(call_id)
        if call is None:
            continue
        reason = refusal(policies.rule_for(record.app_name, tool_of(call)), caller, record, call)
        if reason is not None:
            raise ApprovalRefusedError(reason)


def may_answer(policies: ApprovalPolicies, caller: Caller, record: Any, call: Any) -> bool:
    """True when the caller may answer ``call`` (what the inbox and /ui show)."""
    rule = policies.rule_for(record.app_name, tool_of(call))
    if refusal(rule, caller, record, call) is not None:
        return False
    return caller.principal_id not in (getattr(record, "approvals", None) or {}).get(call.id, [])


def mark_answerable(view: Any, record: Any, caller: Caller, policies: ApprovalPolicies) -> Any:
    """Set ``answerable`` on each pending call of ``view`` (an InvocationOut of ``record``) for ``caller``."""
    calls = {call.id: call for call in record.pending_calls}
    for out in view.pending_calls:
        call = calls.get(out.id)
        out.answerable = call is not None and caller.has_any(frozenset({"answer"})) and may_answer(
            policies, caller, record, call)
    return view


def declared_rules(apps: list[Any]) -> dict[str, dict[str, ApprovalRule]]:
    """``{app: {tool: rule}}`` from the ``approval=`` of each FunctionTool in the apps' agent trees."""
    from worker.fleet.app_catalog import declared_approvals

    return {app.name: rules for app in apps if (rules := parse_declared(declared_approvals(app)))}


def parse_declared(declared: dict[str, Any]) -> dict[str, ApprovalRule]:
    """``{tool: rule}`` of one app's declared approvals as a worker describes them (``worker.fleet.app_catalog``);
    an entry that is not a valid rule closes the tool to every keyed caller (no principal may answer it) rather
    than falling back to the defaults, which may be weaker than what its code meant."""
    rules = {}
    for tool, fields in (declared or {}).items():
        try:
            rules[str(tool)] = ApprovalRule.model_validate(fields)
        except ValidationError as exc:
            log.warning("the approval rule declared for tool %r is not valid, so no keyed caller may answer it: %s",
                        tool, exc.errors()[0]["msg"])
            rules[str(tool)] = ApprovalRule(principals=[])
    return rules


def with_declared(policies: ApprovalPolicies, apps: list[Any]) -> ApprovalPolicies:
    """``policies`` over the apps' code declarations: a setting for an app and tool replaces its declaration."""
    rules = declared_rules(apps)
    for app, tools in policies.rules.items():
        rules.setdefault(app, {}).update(tools)
    return ApprovalPolicies(rules=rules)
