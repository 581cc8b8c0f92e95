"""Where the user's embedded redis-server is found: ``<data dir>/redis/url``.

With no ``AGENTQ_REDIS_URL``, ``agentq api``/``worker``/``enqueue`` start (or join) a redis-server under the data
directory on a free port and write its URL there, so every process of the same user, Python clients included
(``AgentqClient()`` with no URL), finds the same server whatever folder it was started from. The data directory
is ``AGENTQ_DATA_DIR`` when set, else the user's data directory: ``$XDG_DATA_HOME/agentq``, or
``~/.local/share/agentq`` (it once was ``.agentq`` in the current folder, so a command run from another folder
started a second server that no worker read).
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlparse

from runtime.errors import UsageError


def default_data_dir(environ: Mapping[str, str] | None = None) -> str:
    """The user's agentq data directory: ``$XDG_DATA_HOME/agentq``, else ``~/.local/share/agentq``."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_DATA_HOME") or str(Path(env.get("HOME") or Path.home()) / ".local" / "share")
    return str(Path(base) / "agentq")


def data_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``AGENTQ_DATA_DIR``, else ``default_data_dir()``; absolute: redis-server chdirs into its --dir."""
    env = os.environ if environ is None else environ
    return Path(env.get("AGENTQ_DATA_DIR") or default_data_dir(env)).resolve()


def redis_dir(data: str | os.PathLike) -> Path:
    """The embedded redis-server's folder (AOF, log, url) under a data directory."""
    return Path(data).resolve() / "redis"


def url_file(data: str | os.PathLike) -> Path:
    """The file holding the embedded redis-server's URL."""
    return redis_dir(data) / "url"


def running_url(data: str | os.PathLike, *, timeout: float = 0.5) -> str | None:
    """The URL of the embedded redis-server of ``data`` when one answers there (within ``timeout`` seconds: a
    server that is not there refuses at once), else None."""
    path = url_file(data)
    if not path.is_file():
        return None
    url = path.read_text().strip()
    return url if url and answers(url, timeout=timeout) else None


def answers(url: str, *, timeout: float = 0.5) -> bool:
    """True when a Redis server answers PING at ``url`` (a redis:// URL) within ``timeout`` seconds."""
    parsed = urlparse(url)
    try:
        with socket.create_connection((parsed.hostname or "127.0.0.1", parsed.port or 6379), timeout=timeout) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


def discover_url(environ: Mapping[str, str] | None = None) -> str:
    """``AGENTQ_REDIS_URL``, else the URL of the user's embedded redis-server (``data_dir()``).

    UsageError when there is neither, saying how to get one.
    """
    env = os.environ if environ is None else environ
    if env.get("AGENTQ_REDIS_URL"):
        return env["AGENTQ_REDIS_URL"]
    data = data_dir(env)
    url = running_url(data)
    if url is None:
        raise UsageError(
            f"no Redis URL: AGENTQ_REDIS_URL is unset and no embedded redis-server runs under {str(data)!r}; "
            "start `agentq worker` or `agentq api` first (with the same AGENTQ_DATA_DIR), or pass a redis:// URL"
        )
    return url
