"""AppLimits: which run jobs a worker process starts now, and which wait their turn.

Two caps hold: at most ``max_in_flight`` invocations in the process (``AGENTQ_CONCURRENCY``) and at most
``caps[app]`` of one app (``AGENTQ_APP_CONCURRENCY``). A job over either cap is not refused and does not block
Celery's consumer: it waits in its app's line, and when a slot frees the apps with waiting jobs take turns. A
blocked consumer would stop every queue at once, which is how one app's flood used to hold up the others.

A line is short (``line_limit``): once an app's line is full, ``worker.running.queue_flow`` stops taking messages from
that app's queue until the line has drained to half, so the flood stays in the broker, where other workers can
take it, rather than in this process. A waiting job's message is acknowledged (the job is in memory only): a
worker that dies loses it, and the dispatch watchdog sends it again, as for any job handed to the event loop.

Caps are per worker process, not fleet-wide: a fleet runs at most ``cap x workers serving the app`` of an app.
"""

from __future__ import annotations

import threading
from collections import Counter, deque
from collections.abc import Iterable, Mapping

from runtime.errors import UsageError
from worker.config.env_values import per_app, set_variables

Job = tuple[str, list[str] | None]
"""A run job as the run task gets it: the invocation id and its ``[app, user, session]`` when the sender knew it."""

LINE_LIMIT = 16
"""Most jobs of one app waiting in a process: enough to keep the app's slots busy while its queue is resumed (a
tick of ``worker.running.queue_flow`` and a broker round trip), few enough that a flood stays in the broker."""
ENV_NAME = "AGENTQ_APP_CONCURRENCY"


class AppLimits:
    """The process's and each app's cap on invocations in flight, and the jobs waiting for a slot (thread-safe:
    jobs are offered on Celery's threads and finish on the event loop)."""

    def __init__(self, max_in_flight: int, caps: Mapping[str, int] | None = None):
        self.max_in_flight = max_in_flight
        self.caps: dict[str, int] = dict(caps or {})
        self._lock = threading.Lock()
        self._running: Counter[str | None] = Counter()
        """Jobs begun and not finished, by app (None: a job whose app the sender did not say)."""
        self._total = 0
        self._lines: dict[str | None, deque[Job]] = {}
        self._waiting: set[str] = set()
        self._turns: deque[str | None] = deque()
        """The apps with a waiting line, in the order they take the next free slot."""

    def limit_apps(self, caps: Mapping[str, int]) -> None:
        """Set per-app caps (``Settings.app_concurrency``); call it before the worker takes jobs."""
        with self._lock:
            self.caps = dict(caps)

    def cap(self, app: str | None) -> int:
        """The most invocations of ``app`` this process runs at once."""
        return min(self.caps.get(app, self.max_in_flight), self.max_in_flight) if app is not None \
            else self.max_in_flight

    def line_limit(self, app: str | None) -> int:
        """How many of ``app``'s jobs may wait here before its queue is paused."""
        return max(1, min(LINE_LIMIT, self.cap(app)))

    def offer(self, invocation_id: str, where: list[str] | None) -> bool:
        """True: a slot is taken for the job, begin it now. False: it waits in its app's line (a second job for an
        invocation already waiting, such as the watchdog's re-send, is dropped: one is enough)."""
        app = where[0] if where else None
        with self._lock:
            if app not in self._lines and self._has_slot(app):
                self._take(app)
                return True
            if invocation_id not in self._waiting:
                line = self._lines.get(app)
                if line is None:
                    line = self._lines[app] = deque()
                    self._turns.append(app)
                line.append((invocation_id, where))
                self._waiting.add(invocation_id)
            return False

    def finished(self, app: str | None) -> list[Job]:
        """A job of ``app`` is over (its invocation stopped running, or the job was dropped). Its slot goes to the
        waiting jobs, the apps taking turns; returns the jobs to begin now (their slots taken)."""
        with self._lock:
            self._running[app] -= 1
            if self._running[app] <= 0:
                del self._running[app]
            self._total -= 1
            return self._admit_waiting()

    def take_waiting(self) -> list[Job]:
        """Empty every line (the worker stops consuming): the jobs that were waiting, to send again."""
        with self._lock:
            jobs = [job for line in self._lines.values() for job in line]
            self._lines.clear()
            self._turns.clear()
            self._waiting.clear()
            return jobs

    def running(self, app: str | None) -> int:
        """Jobs of ``app`` begun and not finished."""
        return self._running[app]

    def waiting(self, app: str | None) -> int:
        """Jobs of ``app`` waiting for a slot."""
        line = self._lines.get(app)
        return len(line) if line else 0

    def line_full(self, apps: Iterable[str | None]) -> bool:
        """Whether any of ``apps`` has a full line (its queue should stop giving this process messages)."""
        return any(self.waiting(app) >= self.line_limit(app) for app in apps)

    def lines_drained(self, apps: Iterable[str | None]) -> bool:
        """Whether every one of ``apps`` is down to half its line (its queue may give messages again). Half, not
        empty, so the jobs left keep the app's slots busy while its queue comes back."""
        return all(self.waiting(app) <= self.line_limit(app) // 2 for app in apps)

    def _has_slot(self, app: str | None) -> bool:
        return self._total < self.max_in_flight and self._running[app] < self.cap(app)

    def _take(self, app: str | None) -> None:
        self._running[app] += 1
        self._total += 1

    def _admit_waiting(self) -> list[Job]:
        admitted: list[Job] = []
        passed = 0  # apps in a row that were at their cap: once every app passed, nothing more can begin
        while self._turns and passed < len(self._turns) and self._total < self.max_in_flight:
            app = self._turns.popleft()
            if self._running[app] >= self.cap(app):
                self._turns.append(app)
                passed += 1
                continue
            line = self._lines[app]
            job = line.popleft()
            self._waiting.discard(job[0])
            self._take(app)
            admitted.append(job)
            passed = 0
            if line:
                self._turns.append(app)  # to the back: the next slot goes to another app first
            else:
                del self._lines[app]
        return admitted


def app_caps_from_env(environ: Mapping[str, str] | None = None) -> dict[str, int]:
    """``AGENTQ_APP_CONCURRENCY`` (``app=N`` pairs, commas between, N at least 1); UsageError naming a bad entry."""
    caps: dict[str, int] = {}
    for _, variable, raw in set_variables({"caps": ENV_NAME}, environ):
        caps = per_app(variable, raw, _cap, example="reports=50,weather=200")
    return caps


def require_loop_handoff(caps: Mapping[str, int], handoff: str) -> None:
    """Per-app caps need ``--handoff loop``: with ``claim`` Celery's thread waits for every claim, so a job of an
    app at its cap would hold up the jobs of every other app behind it."""
    if caps and handoff == "claim":
        raise UsageError(f"{ENV_NAME} ({', '.join(sorted(caps))}) needs --handoff loop (AGENTQ_HANDOFF=loop): with "
                         "claim, a run job of an app at its cap would hold up every other app's jobs")


def _cap(where: str, text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise UsageError(f"{where} must be a whole number of invocations, at least 1; got {text!r}")
    return value
