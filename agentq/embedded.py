"""The user's embedded redis-server (one per data directory, ``worker.config.local_redis.data_dir``): started by the
first agentq process that needs one, shared by the others whatever folder they run from, ended by the last ``agentq api``/``worker`` to stop, or by ``agentq stop``.

``agentq api`` and ``agentq worker`` register themselves under ``<data dir>/redis/users/<pid>`` while they run.
A process leaving stops the server when no other registered process is alive, so a Ctrl-C in one terminal
never pulls Redis from under a worker in another, and nothing keeps running once the last one is gone. The
server runs in its own session for the same reason: a terminal's Ctrl-C reaches only the foreground process.
"""

from __future__ import annotations

import fcntl
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path

from worker.config.local_redis import redis_dir, running_url, url_file

log = logging.getLogger("agentq.embedded")

_GONE_TIMEOUT_S = 15.0


def users_dir(data: str | os.PathLike) -> Path:
    """Where the running api/worker processes that use the embedded server register themselves."""
    return redis_dir(data) / "users"


def live_users(data: str | os.PathLike) -> dict[int, str]:
    """pid -> command ("api", "worker") of the registered processes still alive; stale entries are removed."""
    found = {}
    folder = users_dir(data)
    for entry in folder.glob("*") if folder.is_dir() else []:
        pid = int(entry.name) if entry.name.isdigit() else None
        if pid is not None and _is_agentq(pid):
            found[pid] = entry.read_text().strip() or "?"
        else:
            entry.unlink(missing_ok=True)
    return found


def _is_agentq(pid: int) -> bool:
    """True when ``pid`` is alive and (where /proc tells) an agentq process, not a reused pid."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    cmdline = Path(f"/proc/{pid}/cmdline")
    try:
        return b"agentq" in cmdline.read_bytes()
    except OSError:
        return not cmdline.parent.parent.is_dir()  # no /proc here: trust the pid


@dataclass
class LocalRedis:
    """The Redis a process uses; when it is the embedded one, what this process must undo on exit."""

    url: str
    data: Path | None = None
    """The data directory of the embedded server; None for an external AGENTQ_REDIS_URL."""
    started: object | None = None
    """The EmbeddedRedis this process started, if it did."""
    registered: bool = False
    quiet: bool = True
    """Log starting and stopping at DEBUG (one-off commands) rather than INFO (api, worker)."""

    def release(self) -> None:
        """Unregister; stop the embedded server when no other registered agentq process uses it any more."""
        if self.data is None:
            return
        try:
            others = sorted(pid for pid in live_users(self.data) if pid != os.getpid())
            if others:
                self._log("embedded redis-server %s keeps running for pids %s; `agentq stop` ends them and it",
                          self.url, others)
                return
            if self.started is not None:
                self.started.stop()
            elif running_url(self.data) == self.url:
                shutdown(self.url)
            self._log("embedded redis-server %s stopped (its data stays in %s)", self.url, redis_dir(self.data))
        finally:  # only now: `agentq stop` waits for this entry to go, then finds the server gone too
            if self.registered:
                (users_dir(self.data) / str(os.getpid())).unlink(missing_ok=True)
                self.registered = False

    def _log(self, message: str, *args: object) -> None:
        # A server outliving a one-off command is routine; for `agentq api`/`worker` it is news.
        log.log(logging.INFO if self.quiet is False else logging.DEBUG, message, *args)


def ensure_redis(redis_url: str | None, data_dir: str | os.PathLike, *, register: str | None = None) -> LocalRedis:
    """``redis_url`` when given; else the embedded server of ``data_dir``, started here when none answers.

    ``register``: the command name ("api", "worker") of a long-running process, which the server outlives.
    """
    if redis_url:
        return LocalRedis(url=redis_url)
    data = Path(data_dir).resolve()
    redis_dir(data).mkdir(parents=True, exist_ok=True)
    with open(redis_dir(data) / "start.lock", "w") as lock:  # two processes starting at once start one server
        fcntl.flock(lock, fcntl.LOCK_EX)
        # A busy server may answer slowly; taking it for dead would start a second one on the same AOF.
        url, started = running_url(data, timeout=_GONE_TIMEOUT_S), None
        if url is None:
            from runtime.redis_store.launcher import EmbeddedRedis

            started = EmbeddedRedis(redis_dir(data), own_session=True).start()
            url = started.url
            url_file(data).write_text(url + "\n")
        local = LocalRedis(url=url, data=data, started=started, quiet=not register)
        if started is not None:
            local._log("started an embedded redis-server at %s (data in %s)", url, redis_dir(data))
        if register:
            users_dir(data).mkdir(exist_ok=True)
            (users_dir(data) / str(os.getpid())).write_text(register)
            local.registered = True
    return local


def shutdown(url: str) -> None:
    """Ask the Redis at ``url`` to save its AOF and exit; wait until it no longer answers."""
    import redis

    from worker.config.local_redis import answers

    with redis.Redis.from_url(url, socket_timeout=_GONE_TIMEOUT_S) as client:
        try:
            client.shutdown()
        except redis.ConnectionError:
            pass  # it went away while answering
    deadline = time.monotonic() + _GONE_TIMEOUT_S
    while answers(url) and time.monotonic() < deadline:
        time.sleep(0.05)
