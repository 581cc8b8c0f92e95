"""Fencing: the lease an asyncio task writes under, and the fence key and token each of its writes presents.

A worker's claim INCRs its session's fence key and runs the invocation in a task that carries the token
(``current_fence``) and the session whose lease it holds (``current_lease_session``). Every write of that task
that must not outlive the lease (an event commit, an artifact save) checks the token against the fence key in
the same script as the write, so a cancelled, rewound or superseded run writes nothing more.

A run writes to more than its own session: an AgentTool runs its agent in a child session of the same app and
user (``runtime.tools.agent_tool_session``). A child has no lease of its own: it is part of its parent's
invocation, so its writes are fenced by the *parent's* lease. Cancelling the parent, or a worker taking it over,
then fences out the child at once, and the child needs no claim, heartbeat or reaper entry of its own. The
fence key and the child's keys share the user's hash tag, so the check stays in one script on a Redis Cluster.
"""

from __future__ import annotations

from contextvars import ContextVar

from . import keys

current_fence: ContextVar[int | None] = ContextVar("agentq_current_fence", default=None)
"""The fencing token of the session lease the current asyncio task holds; None: write without a fence check
(in-process runs, the API, tests). A write that presents a token that is not the fence key's current value is
refused (``FencedOutError``) and writes nothing."""

current_lease_session: ContextVar[tuple[str, str, str] | None] = ContextVar("agentq_lease_session", default=None)
"""``(app, user, session id)`` whose lease ``current_fence`` belongs to (set by the worker's executor). None:
the token belongs to the session being written (a rewind holds that session's own lease)."""


def hold(token: int, app_name: str, user_id: str, session_id: str) -> None:
    """Make the current task write under the lease of this session with this token (for the rest of the task)."""
    current_fence.set(token)
    current_lease_session.set((app_name, user_id, session_id))


def fence_for(app_name: str, user_id: str, session_id: str) -> tuple[str, str]:
    """The fence key and the token (``''``: unchecked) a write to this session presents.

    A session of the same app and user as the held lease (the lease's own, or an AgentTool's child session) is
    fenced by that lease; any other by its own fence key, which a token of another session never matches.
    """
    token = current_fence.get()
    if token is None:
        return keys.session_fence(app_name, user_id, session_id), ""
    holder = current_lease_session.get()
    if holder is not None and holder[:2] == (app_name, user_id):
        return keys.session_fence(*holder), str(token)
    return keys.session_fence(app_name, user_id, session_id), str(token)
