"""The fencing token a commit carries, shared by the worker (who sets it) and the session service (who checks it).

The worker acquires a session's lease by INCRing ``keys.session_fence(...)`` and sets ``current_fence`` to the
returned integer for the invocation's asyncio task. Every commit made while it is set compares it with the
integer stored at the fence key inside the commit script and is refused with ``FencedOutError`` (nothing
written) if they differ, so a worker that lost its lease can never write after the new holder started.
``None`` (the default) means "no fence check", which is what in-process runs and tests use.
"""

from __future__ import annotations

from contextvars import ContextVar

current_fence: ContextVar[int | None] = ContextVar("agentq_current_fence", default=None)
"""The fencing token of the lease the current task holds, or None to commit without a fence check."""
