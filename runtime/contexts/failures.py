"""How a failure inside an agent run becomes an error event (``error_code``/``error_message``).

A crashing tool, callback, model or instruction template is reported to the caller as an event authored by
the agent that was running, so the session history shows why the invocation stopped. Infrastructure errors
(a lost lease, a transient backend error, a bad transfer target) are not the agent's outcome: they propagate
untouched so the caller can retry or fix the request.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from ..errors import AgentqError, AgentRunFailedError, LlmCallsLimitExceededError, ModelError
from ..events import Event

if TYPE_CHECKING:
    from .invocation_context import InvocationContext

FAILED_TOOL_KEY = "agentq:failed_tool"
"""The ``custom_metadata`` key of the error event of a tool that raised: the tool's name, so whoever reads the
outcome (the worker's record) can say which tool failed rather than blame the model."""


def is_reportable(exc: BaseException) -> bool:
    """True for failures of the agent's own code or budget; False for infrastructure and usage errors."""
    if not isinstance(exc, Exception):
        return False
    if not isinstance(exc, AgentqError):
        # a store that is away for a moment is the worker's business (it hands the invocation back), not the agent's
        return not _is_store_unavailable(exc)
    return isinstance(exc, LlmCallsLimitExceededError | ModelError | AgentRunFailedError)


def error_event(ctx: InvocationContext, author: str, exc: BaseException, *, tool: str | None = None) -> Event:
    """The event reporting ``exc``: its code is the exception's own code if it has one, else its class name.

    ``tool``: the name of the tool that raised it, kept in ``custom_metadata`` (see ``failed_tool``)."""
    code = getattr(exc, "code", None) if isinstance(exc, AgentqError) else None
    return Event(
        invocation_id=ctx.invocation_id, author=author, branch=ctx.branch,
        error_code=code or type(exc).__name__, error_message=str(exc),
        custom_metadata={FAILED_TOOL_KEY: tool} if tool is not None else None,
    )


def failed_tool(event: Event) -> str | None:
    """The name of the tool whose exception ``event`` reports; None for any other event."""
    return (event.custom_metadata or {}).get(FAILED_TOOL_KEY) if event.error_code else None


def _is_store_unavailable(exc: BaseException) -> bool:
    # The runtime runs without Redis (in memory); redis is imported only by the Redis store, so an error can be
    # one of its connection errors only when the module was loaded. This keeps `import runtime.agents` Redis-free.
    if "redis" not in sys.modules:
        return False
    from ..redis_store.availability import is_store_unavailable

    return is_store_unavailable(exc)
