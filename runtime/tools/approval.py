"""Approval: who may answer a tool's confirmation, declared beside ``require_confirmation``.

    FunctionTool(transfer_money, require_confirmation=True, approval=Approval(quorum=2, roles=("answer",)))

The runtime only carries it: the API reads it from the loaded App (``api.access.approval_policy``) and applies it
to every answer; ``AGENTQ_APPROVAL_POLICY`` entries for the same app and tool take precedence.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class Approval:
    """``roles``: any of them may answer; ``principals``: only these (None: anyone with a role);
    ``separation_of_duties``: the enqueuing principal may not answer (None: on for confirmations, for
    principals with an identity; True: for every caller); ``quorum``: distinct approvals before the tool runs."""

    roles: tuple[str, ...] = ("answer",)
    principals: tuple[str, ...] | None = None
    separation_of_duties: bool | None = None
    quorum: int = 1
