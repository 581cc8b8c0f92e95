"""Which Celery queue carries an app's run jobs: one queue per app, or one per app group named in settings.

A queue per app is what keeps one app's flood from delaying another's jobs: a worker consumes the queues of the
apps it serves, and kombu's Redis transport takes them in turn (``queue_order_strategy`` ``round_robin``: the
queue that just gave a message moves to the back of the ``BRPOP``), so a job of a quiet app is the next one
taken however long the busy app's queue is. Apps that need no isolation from each other can share a queue
(``AGENTQ_APP_QUEUES=weather=interactive,maps=interactive``).

The shared ``agentq`` queue (``worker.queues.dispatch.QUEUE``) stays: every worker consumes it, and it carries the run
jobs whose app the sender did not know, so no job is ever sent where nobody listens.

Every process that sends run jobs (the API, the CLI, the workers' reapers) must be given the same
``AGENTQ_APP_QUEUES`` as the workers, as with the retention settings.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from runtime.errors import UsageError
from worker.config.env_values import per_app, set_variables

SHARED_QUEUE = "agentq"
"""Consumed by every worker: run jobs of an app not known to the sender (and those sent before queues were per app)."""
APP_QUEUE_PREFIX = f"{SHARED_QUEUE}.app."
GROUP_QUEUE_PREFIX = f"{SHARED_QUEUE}.group."
ENV_NAME = "AGENTQ_APP_QUEUES"
_GROUP_NAME = re.compile(r"[A-Za-z0-9_-]+")


@dataclass(frozen=True, kw_only=True)
class RunQueues:
    """The app -> queue map: ``groups`` names the apps that share a queue; every other app has its own."""

    groups: Mapping[str, str] = field(default_factory=dict)
    """App name -> group name (``AGENTQ_APP_QUEUES``)."""

    def queue_for(self, app: str | None) -> str:
        """The queue of ``app``'s run jobs (the shared queue when the app is not known)."""
        if app is None:
            return SHARED_QUEUE
        group = self.groups.get(app)
        return GROUP_QUEUE_PREFIX + group if group is not None else APP_QUEUE_PREFIX + app

    def queues_for(self, apps: Iterable[str]) -> dict[str, list[str]]:
        """The queues a worker serving ``apps`` consumes, each with the apps it carries; the shared queue first,
        listed with every app (it may carry a job of any of them)."""
        apps = sorted(apps)
        queues: dict[str, list[str]] = {SHARED_QUEUE: list(apps)}
        for app in apps:
            queues.setdefault(self.queue_for(app), []).append(app)
        return queues

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> RunQueues:
        """From ``AGENTQ_APP_QUEUES`` (``app=group`` pairs, commas between); UsageError naming a bad entry."""
        groups: dict[str, str] = {}
        for _, variable, raw in set_variables({"groups": ENV_NAME}, environ):
            groups = per_app(variable, raw, _group_name, example="weather=interactive,reports=bulk")
        return cls(groups=groups)


def _group_name(where: str, text: str) -> str:
    if not _GROUP_NAME.fullmatch(text):
        raise UsageError(f"{where} must be a group name of letters, digits, '_' or '-', got {text!r}")
    return text
