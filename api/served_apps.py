"""Which apps the API serves: those it was started with, and every app an alive worker announces.

``agentq api`` follows the workers: an app is served once some worker has announced it (``worker.fleet.
workers_alive``) and wrote it in the app catalog, so a worker started with a new ``--app`` is served at once and
an API restart is never needed; ``--app`` on the API is optional (its apps are served even before any worker runs
them). An app stays served while none of its workers is alive (a deploy restarting them all, a crash): this is a
queue, so its jobs and answers wait for the next worker, and the enqueue reply carries the no-worker notice;
reading its invocations never depends on a worker either. Only a name no worker ever announced is refused. What the API needs from an app's code, it reads from the catalog the workers write
(``worker.fleet.app_catalog``): the AppInfo and the approval rules the tools declare. The API never imports it.

The set is read through the client at most once per ``FRESH_S`` while requests come (an idle API reads
nothing), sharing the read the worker-presence notices make; a request naming an app outside the set reads again
if the set is older than ``MISS_S``, so a worker that just announced itself is served on the next request.

An API built in-process with only a list of names (tests, ``ApiSettings(app_names=[...])``) serves those names,
or any app when the list is empty, as before.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from api.access.approval_policy import ApprovalPolicies, ApprovalRule, parse_declared
from runtime.errors import AppNotFoundError

log = logging.getLogger("agentq.api")

FRESH_S = 1.0
"""How long one read of the announced apps answers (workers beat once a second)."""
MISS_S = 0.1
"""A request for an app outside the set reads again when the set is at least this old."""


class ServedApps:
    """The apps served now: ``configured`` (``--app``) and, with ``follow_workers``, the apps alive workers
    announce. Neither (no names, not following): any app is served."""

    def __init__(self, configured: list[str] | tuple[str, ...] = (), *, follow_workers: bool = False):
        self.configured = tuple(configured)
        self.follow_workers = follow_workers
        self._announced: frozenset[str] = frozenset()
        self._known: frozenset[str] = frozenset()  # every app in the catalog: some worker announced it once
        self._workers: frozenset[str] = frozenset()
        self._catalog: dict[str, dict[str, Any]] = {}
        self._declared: dict[str, dict[str, ApprovalRule]] = {}
        self._merged: tuple[int, ApprovalPolicies, ApprovalPolicies] | None = None
        self._read_at: float | None = None
        self._lock: asyncio.Lock | None = None

    @property
    def serves_any(self) -> bool:
        """True when every app name is accepted (an in-process API given no names)."""
        return not self.configured and not self.follow_workers

    def names(self) -> list[str]:
        """The apps served now, sorted (empty when ``serves_any``: no list to show)."""
        return sorted({*self.configured, *self._announced, *self._known})

    def serves(self, app_name: str) -> bool:
        """True when ``app_name`` is served now."""
        return (self.serves_any or app_name in self.configured or app_name in self._announced
                or app_name in self._known)

    def check(self, app_name: str) -> None:
        """AppNotFoundError (404) naming ``app_name`` and why, when it is not served now."""
        if not self.serves(app_name):
            raise AppNotFoundError(self.why_not(app_name))

    def why_not(self, app_name: str) -> str:
        """Why ``app_name`` is not served, for an error message."""
        if not self.follow_workers:
            return f"app {app_name!r} is not served here"
        return (f"app {app_name!r} is not served here: no worker has announced it (start one: agentq worker --app "
                f"MODULE:ATTR, for an App named {app_name!r})")

    def info(self, app_name: str) -> dict[str, Any] | None:
        """The AppInfo a worker wrote for ``app_name`` (``worker.fleet.app_catalog``), or None."""
        info = self._catalog.get(app_name, {}).get("info")
        return info if isinstance(info, dict) else None

    def policies(self, base: ApprovalPolicies) -> ApprovalPolicies:
        """``base`` (the settings' rules, with those of ``--app`` apps) over the rules the announced apps'
        tools declare: a setting for an app and tool replaces its declaration, as for ``--app`` apps."""
        if not self._declared:
            return base
        if self._merged is not None and self._merged[0] == id(base) and self._merged[1] is base:
            return self._merged[2]
        rules = {app: dict(tools) for app, tools in self._declared.items()}
        for app, tools in base.rules.items():
            rules.setdefault(app, {}).update(tools)
        merged = ApprovalPolicies(rules=rules)
        self._merged = (id(base), base, merged)
        return merged

    async def refresh(self, queue: Any, app_name: str | None = None) -> None:
        """Read the announced apps again when the set is older than ``FRESH_S`` (or than ``MISS_S`` when
        ``app_name`` is not in it); ``queue``: the services' AgentqClient (None: nothing to read)."""
        if not self.follow_workers or queue is None:
            return
        missing = app_name is not None and not self.serves(app_name)
        if not self._stale(missing):
            return
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if not self._stale(missing):  # another request read while this one waited
                return
            try:
                await self._read(queue, now=missing)
            except Exception as exc:  # Redis not answering: keep the set read last; the route says what failed
                log.debug("announced apps not read: %r", exc)
                self._read_at = time.monotonic()

    def _stale(self, missing: bool) -> bool:
        if self._read_at is None:
            return True
        return time.monotonic() - self._read_at >= (MISS_S if missing else FRESH_S)

    async def _read(self, queue: Any, *, now: bool) -> None:
        # the shared read (at most a second old) serves the periodic refresh; a miss reads the beats now
        workers = await (queue.ops.alive_workers() if now else queue.ops.alive_recently())
        announced = frozenset(app for worker in workers for app in worker.apps)
        names = frozenset(worker.name for worker in workers)
        if now or announced != self._announced or names != self._workers:
            # a worker started or stopped: it may have written a newer description of its apps (the whole
            # catalog is read: an app whose workers are all down stays served, see the module's docstring)
            self._catalog = await queue.ops.app_catalog(None)
            self._known = frozenset(self._catalog)
            self._declared = {app: rules for app, entry in self._catalog.items()
                              if (rules := parse_declared(entry.get("approval") or {}))}
            self._merged = None
        self._announced, self._workers = announced, names
        self._read_at = time.monotonic()
