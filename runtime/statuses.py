"""The invocation lifecycle's vocabulary, in one place for the runtime, the worker, the API and the CLI.

queued -> running -> parked | completed | failed | cancelled; parked -> queued again when an answer resumes it.
The Lua scripts under ``runtime/redis_store/lua/`` spell the same words; ``tests/worker/test_statuses.py``
checks that every status they compare or write is one of these.
"""

from __future__ import annotations

from typing import Literal, get_args

InvocationStatus = Literal["queued", "running", "parked", "completed", "failed", "cancelled"]
"""Where an invocation stands."""

STATUSES: tuple[str, ...] = get_args(InvocationStatus)
"""Every status, in lifecycle order (for counts and listings)."""

SETTLED: frozenset[str] = frozenset({"parked", "completed", "failed", "cancelled"})
"""Statuses at which an invocation's event stream ends (parked may later continue under the same id)."""

FINAL: frozenset[str] = frozenset({"completed", "failed", "cancelled"})
"""Statuses an invocation never leaves."""
