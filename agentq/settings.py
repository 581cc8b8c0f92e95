"""Settings from flags or ``AGENTQ_*`` environment variables, read only at process edges (the CLI, worker start).

Embedded default: with no ``AGENTQ_REDIS_URL`` the CLI uses a real redis-server it starts itself under
``<data dir>/redis`` with AOF on, shared by the user's agentq processes whatever folder they run from
(``agentq.embedded``; clients find it through ``worker.config.local_redis``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from worker.config.local_redis import data_dir as resolve_data_dir
from worker.config.run_queues import RunQueues
from worker.queues.app_limits import app_caps_from_env
from worker.records.retention import RetentionPolicy


@dataclass(kw_only=True)
class Settings:
    """What the agentq processes are configured with."""

    redis_url: str | None = None
    apps: list[str] = field(default_factory=list)
    data_dir: str = field(default_factory=lambda: str(resolve_data_dir()))
    """The embedded redis-server's parent folder: AGENTQ_DATA_DIR, else the user's data directory (one server per
    user, whatever folder a command runs from; worker.config.local_redis.data_dir)."""
    concurrency: int = 1000
    """Invocations one worker process keeps in flight."""
    threads: int = 4
    """Celery pool threads per worker process, with ``pool='threads'``."""
    pool: str = "solo"
    """Celery pool: ``solo`` runs the (microsecond) run task on the consumer thread itself."""
    handoff: str = "loop"
    """When a run job is acknowledged: once its invocation is claimed, or once the event loop has it."""
    log_level: str = "INFO"
    history_cache_mb: int | None = None
    """Budget of a worker process's parsed session histories (None: the worker's default, see ExecutorConfig)."""
    retention: RetentionPolicy = field(default_factory=RetentionPolicy)
    """``AGENTQ_RETENTION_*`` and ``AGENTQ_PARK_TIMEOUT`` (see worker.records.retention); every process needs the same."""
    run_queues: RunQueues = field(default_factory=RunQueues)
    """``AGENTQ_APP_QUEUES``: apps that share a run queue (see worker.config.run_queues); every process needs the same."""
    app_concurrency: dict[str, int] = field(default_factory=dict)
    """``AGENTQ_APP_CONCURRENCY``: the most invocations of an app one worker process runs at once (see
    worker.queues.app_limits); an app not named is held only by ``concurrency``."""

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Settings:
        """Settings from ``AGENTQ_*`` variables (missing ones keep their defaults); UsageError naming a variable
        whose value makes no sense."""
        env = os.environ if environ is None else environ
        return cls(
            redis_url=env.get("AGENTQ_REDIS_URL") or None,
            apps=[s.strip() for s in env.get("AGENTQ_APPS", "").split(",") if s.strip()],
            data_dir=str(resolve_data_dir(env)),
            concurrency=int(env.get("AGENTQ_CONCURRENCY", "1000")),
            threads=int(env.get("AGENTQ_THREADS", "4")),
            pool=env.get("AGENTQ_POOL", "solo"),
            handoff=env.get("AGENTQ_HANDOFF", "loop"),
            log_level=env.get("AGENTQ_LOG_LEVEL", "INFO").upper(),
            history_cache_mb=int(env["AGENTQ_HISTORY_CACHE_MB"]) if env.get("AGENTQ_HISTORY_CACHE_MB") else None,
            retention=RetentionPolicy.from_env(env),
            run_queues=RunQueues.from_env(env),
            app_concurrency=app_caps_from_env(env),
        )
