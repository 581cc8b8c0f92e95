"""Crash attribution: a worker death is charged to an invocation only where the invocation plausibly caused it.

A run can end with its process gone: a segfault or ``os._exit`` in the agent's own code (a poison invocation),
but just as well the OOM killer choosing the fattest process, a node lost to a deploy or a spot reclaim. A
worker process runs hundreds of invocations at once, so one death says nothing about which of them, if any,
caused it. The rule:

- **suspected**: a claim that finds its invocation still ``running`` with the lease gone and no hand-back noted
  knows the run before it was cut off with its worker process. The claim script counts it (the record's
  ``suspected`` field) and logs the worker in the crash evidence. A suspicion never fails an invocation.
- **isolated**: an invocation suspected ``AGENTQ_QUARANTINE_AFTER`` times (default 1) runs alone from then on:
  its worker forks a quarantine process for it (``worker.running.quarantine``), so its next crash takes down nothing
  else and is attributable.
- **charged**: only a crash of that quarantine process (seen by the worker that forked it, which survives)
  charges an attempt (``crashes``, counted by the release script as it hands the invocation back). The next
  claim after ``AGENTQ_MAX_ATTEMPTS`` charged crashes fails the invocation with a ``PoisonInvocationError``
  naming the evidence: every crash, the workers it happened under and how the
  quarantine process ended.
- never charged: a graceful shutdown (SIGTERM: invocations are handed back), a lost Redis connection (handed
  back once Redis answers), parking and resuming, and the death of the worker that forked a quarantine process
  (the process notices and hands its invocation back).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from runtime.errors import PoisonInvocationError, UsageError

ENV = "AGENTQ_MAX_ATTEMPTS"
DEFAULT_MAX_ATTEMPTS = 3
"""Crashes of an invocation running alone before it fails; none of them costs a worker process."""

QUARANTINE_ENV = "AGENTQ_QUARANTINE_AFTER"
DEFAULT_QUARANTINE_AFTER = 1
"""Worker deaths an invocation may be suspected of before it runs alone: 1, so a poison invocation takes down at
most one shared worker process; the cost to an innocent one is a fork per run after that."""


def max_attempts_from_env(environ: Mapping[str, str] | None = None) -> int:
    """``AGENTQ_MAX_ATTEMPTS`` (a whole number, at least 1), else the default. Raises UsageError naming it."""
    return _whole_number(ENV, DEFAULT_MAX_ATTEMPTS, "attempts", environ)


def quarantine_after_from_env(environ: Mapping[str, str] | None = None) -> int:
    """``AGENTQ_QUARANTINE_AFTER`` (a whole number, at least 1), else the default. Raises UsageError naming it."""
    return _whole_number(QUARANTINE_ENV, DEFAULT_QUARANTINE_AFTER, "worker deaths", environ)


def _whole_number(name: str, default: int, unit: str, environ: Mapping[str, str] | None) -> int:
    env = os.environ if environ is None else environ
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise UsageError(f"{name}={raw!r} is not a whole number of {unit} of at least 1")
    return value


@dataclass(frozen=True, kw_only=True)
class Crash:
    """One run that ended with its process gone: under which worker, whether it ran alone, and how it ended."""

    worker: str
    isolated: bool
    exit: str = ""
    """How the quarantine process ended (``killed by SIGKILL``, ``exit code 3``); empty for a shared worker's
    death, which no surviving process saw."""

    def describe(self) -> str:
        """``worker 'w2': killed by SIGKILL`` or ``worker 'w1' died``."""
        return f"worker {self.worker!r}: {self.exit}" if self.isolated else f"worker {self.worker!r} died"

    def to_json_dict(self) -> dict:
        """As stored in the record's ``crash_log`` and shown in the failed status detail."""
        return {"worker": self.worker, "isolated": self.isolated, **({"exit": self.exit} if self.exit else {})}


@dataclass(frozen=True, kw_only=True)
class CrashEvidence:
    """What the record says about an invocation's runs that ended with their process gone."""

    suspected: int = 0
    """Runs cut off with a shared worker process (never charged)."""
    crashes: int = 0
    """Runs that crashed their quarantine process (charged against AGENTQ_MAX_ATTEMPTS)."""
    log: tuple[Crash, ...] = field(default_factory=tuple)
    """The latest of either kind, oldest first."""

    @classmethod
    def from_fields(cls, fields: Mapping[str, str]) -> CrashEvidence:
        """From the record hash (the claim script's HGETALL)."""
        if "crash_log" not in fields:  # nearly every claim: nothing ever crashed under it
            return NO_CRASHES
        import json

        entries = json.loads(fields.get("crash_log") or "[]")
        return cls(suspected=int(fields.get("suspected", 0)), crashes=int(fields.get("crashes", 0)),
                   log=tuple(Crash(worker=e.get("worker", ""), isolated=bool(e.get("isolated")),
                                   exit=e.get("exit", "")) for e in entries))


NO_CRASHES = CrashEvidence()


def should_isolate(evidence: CrashEvidence, quarantine_after: int) -> bool:
    """True when the invocation must run alone: it was on ``quarantine_after`` dead workers, or crashed alone."""
    return evidence.suspected >= quarantine_after or evidence.crashes > 0


def poison_failure(invocation_id: str, evidence: CrashEvidence, max_attempts: int) -> dict | None:
    """The failed status detail once ``max_attempts`` crashes were charged; None while it may run."""
    if evidence.crashes < max_attempts:
        return None
    alone = [crash.describe() for crash in evidence.log if crash.isolated]
    shared = [crash.worker for crash in evidence.log if not crash.isolated]
    before = (f", after {evidence.suspected} worker process{'es' if evidence.suspected != 1 else ''} running it "
              f"among others died ({', '.join(map(repr, shared))})" if evidence.suspected else "")
    error = PoisonInvocationError(
        f"invocation {invocation_id!r} failed: it crashed the quarantine process running it alone "
        f"{evidence.crashes} time{'s' if evidence.crashes != 1 else ''} ({'; '.join(alone)}){before}; "
        f"{ENV} is {max_attempts}")
    return {"error": {"type": type(error).__name__, "message": str(error)},
            "crashes": [crash.to_json_dict() for crash in evidence.log], "maxAttempts": max_attempts}
