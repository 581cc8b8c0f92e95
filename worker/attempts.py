"""Poison invocations: a run that kills its worker process (segfault, OOM kill, ``os._exit``) is not handed out
forever.

Without a cap the reaper hands such an invocation to the next worker, which dies too, until none is left. A
claim that finds its invocation still ``running``, with the lease gone and no hand-back noted, knows the run
before it was cut off; the claim script counts those runs (the record's ``interrupted`` field). Parking and
resuming, a graceful hand-back, or one after a lost Redis connection do not count. Once ``max_attempts`` runs
were cut off, the next claim fails the invocation instead of running it: its status entry and error say why,
and a failed invocation is never claimed again.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from runtime.errors import PoisonInvocationError, UsageError

ENV = "AGENTQ_MAX_ATTEMPTS"
DEFAULT_MAX_ATTEMPTS = 3
"""Runs of one invocation that may end with their worker gone; at most this many worker processes die of it."""


def max_attempts_from_env(environ: Mapping[str, str] | None = None) -> int:
    """``AGENTQ_MAX_ATTEMPTS`` (a whole number, at least 1), else the default. Raises UsageError naming it."""
    env = os.environ if environ is None else environ
    raw = env.get(ENV, "").strip()
    if not raw:
        return DEFAULT_MAX_ATTEMPTS
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise UsageError(f"{ENV}={raw!r} is not a whole number of attempts of at least 1")
    return value


def poison_failure(invocation_id: str, cut_off_runs: int, max_attempts: int) -> dict | None:
    """The failed status detail for an invocation whose runs were cut off too often; None while it may run."""
    if cut_off_runs < max_attempts:
        return None
    error = PoisonInvocationError(
        f"invocation {invocation_id!r} was not run again: its last {cut_off_runs} runs each ended with their "
        f"worker process gone (killed, crashed or out of memory) before it settled; {ENV} is {max_attempts}")
    return {"error": {"type": type(error).__name__, "message": str(error)}, "cutOffRuns": cut_off_runs,
            "maxAttempts": max_attempts}
