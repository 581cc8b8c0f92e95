"""Settings from flags or ``AGENTQ_*`` environment variables, read only at process edges (the CLI, worker start).

Embedded default: with no ``AGENTQ_REDIS_URL`` the CLI uses a real redis-server it starts itself under
``<data dir>/redis`` with AOF on. Its URL is written to ``<data dir>/redis/url`` so the other agentq processes
started from the same directory (api, workers, enqueue) share it instead of each starting their own.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

from worker.retention import RetentionPolicy


@dataclass(kw_only=True)
class Settings:
    """What the agentq processes are configured with."""

    redis_url: str | None = None
    apps: list[str] = field(default_factory=list)
    data_dir: str = ".agentq"
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
    """``AGENTQ_RETENTION_*`` and ``AGENTQ_PARK_TIMEOUT`` (see worker.retention); every process needs the same."""

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Settings:
        """Settings from ``AGENTQ_*`` variables (missing ones keep their defaults); UsageError naming a variable
        whose value makes no sense."""
        env = os.environ if environ is None else environ
        return cls(
            redis_url=env.get("AGENTQ_REDIS_URL") or None,
            apps=[s.strip() for s in env.get("AGENTQ_APPS", "").split(",") if s.strip()],
            data_dir=env.get("AGENTQ_DATA_DIR", ".agentq"),
            concurrency=int(env.get("AGENTQ_CONCURRENCY", "1000")),
            threads=int(env.get("AGENTQ_THREADS", "4")),
            pool=env.get("AGENTQ_POOL", "solo"),
            handoff=env.get("AGENTQ_HANDOFF", "loop"),
            log_level=env.get("AGENTQ_LOG_LEVEL", "INFO").upper(),
            history_cache_mb=int(env["AGENTQ_HISTORY_CACHE_MB"]) if env.get("AGENTQ_HISTORY_CACHE_MB") else None,
            retention=RetentionPolicy.from_env(env),
        )


def ensure_redis(redis_url: str | None, data_dir: str):
    """``(url, embedded)``: the configured URL, else a running embedded server's (``embedded`` is the one started
    here, which the caller stops on exit, or None)."""
    if redis_url:
        return redis_url, None
    from runtime.redis_store.launcher import EmbeddedRedis

    data = Path(data_dir).resolve()  # redis-server chdirs into --dir, so relative paths would break
    url_file = data / "redis" / "url"
    if url_file.is_file():
        url = url_file.read_text().strip()
        if _answers(url):
            return url, None
    embedded = EmbeddedRedis(data / "redis").start()
    url_file.write_text(embedded.url + "\n")
    return embedded.url, embedded


def _answers(url: str) -> bool:
    parsed = urlparse(url)
    try:
        with socket.create_connection((parsed.hostname or "127.0.0.1", parsed.port or 6379), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False
