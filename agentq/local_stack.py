"""LocalStack: a whole agentq deployment on one machine, as child processes (the demo, e2e tests, benchmarks).

redis-server (embedded, AOF on) + ``agentq worker`` processes + one ``agentq api`` process on free ports, with
the project on the children's import path so ``examples.*`` apps load. Its webhooks are signed with a secret
of its own (``webhook_secret``) unless the environment gives one.
"""

from __future__ import annotations

import base64
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
CLI = "import sys; from agentq.cli import main; sys.argv[0] = 'agentq'; sys.exit(main())"


_API_PORT_ATTEMPTS = 5


class _ApiPortTaken(RuntimeError):
    """The API could not bind its port: another process holds it."""


class LocalStack:
    """redis-server + ``agentq worker`` processes + an ``agentq api`` process, on free local ports."""

    def __init__(self, data_dir: str | os.PathLike, *, apps: list[str], workers: int = 1,
                 api_keys_json: str | None = None, extra_env: dict[str, str] | None = None,
                 api_port: int | None = None, api_apps: list[str] | None = None):
        from runtime.redis_store.launcher import EmbeddedRedis, free_port

        self.data_dir = Path(data_dir)
        self.apps = apps
        self.api_apps = apps if api_apps is None else api_apps
        """The ``--app`` flags of ``agentq api`` (default: ``apps``; [] serves what the workers announce)."""
        self.redis = EmbeddedRedis(self.data_dir / "redis")
        self.api_port = api_port or free_port()
        self._api_port_picked_here = api_port is None
        self._free_port = free_port
        self.worker_count = workers
        self.api_keys_json = api_keys_json
        self.extra_env = extra_env or {}
        self.webhook_secret = "whsec_" + base64.b64encode(os.urandom(24)).decode()
        """Signs this stack's webhooks (workers refuse to start without a secret) unless the environment sets one."""
        self.api: subprocess.Popen | None = None
        self.workers: list[subprocess.Popen] = []

    @property
    def base_url(self) -> str:
        """Where the API listens."""
        return f"http://127.0.0.1:{self.api_port}"

    def env(self) -> dict[str, str]:
        """The environment of the child processes: the Redis URL, and the project on the import path."""
        env = {k: v for k, v in os.environ.items() if k not in ("AGENTQ_API_KEYS", "AGENTQ_API_KEYS_FILE")}
        paths = [str(ROOT), os.getcwd(), env.get("PYTHONPATH", "")]
        env.setdefault("AGENTQ_WEBHOOK_SECRET", self.webhook_secret)
        env.update(AGENTQ_REDIS_URL=self.redis.url, PYTHONPATH=os.pathsep.join(p for p in paths if p),
                   PYTHONUNBUFFERED="1", **self.extra_env)
        if self.api_keys_json:
            env["AGENTQ_API_KEYS"] = self.api_keys_json
        return env

    def _spawn(self, name: str, args: list[str]) -> subprocess.Popen:
        log = open(self.data_dir / f"{name}.log", "ab")  # noqa: SIM115 - owned by the child's lifetime
        return subprocess.Popen([sys.executable, "-c", CLI, *args], env=self.env(), stdout=log,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)

    def start_worker(self) -> subprocess.Popen:
        """Start one more ``agentq worker``."""
        args = ["worker"] + [flag for app in self.apps for flag in ("--app", app)]
        worker = self._spawn(f"worker{len(self.workers)}", args)
        self.workers.append(worker)
        return worker

    def start_api(self) -> subprocess.Popen:
        """Start ``agentq api`` and wait until /health answers.

        A port this stack picked that another process took before the API bound it (parallel test runs) is
        replaced by a fresh pick, a few times; a port the caller named is kept."""
        for attempt in range(1, _API_PORT_ATTEMPTS + 1):
            try:
                return self._start_api_once()
            except _ApiPortTaken:
                if not self._api_port_picked_here or attempt == _API_PORT_ATTEMPTS:
                    raise
                self.api_port = self._free_port()
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _start_api_once(self) -> subprocess.Popen:
        args = ["api", "--port", str(self.api_port)] + [flag for app in self.api_apps for flag in ("--app", app)]
        log_start = (self.data_dir / "api.log").stat().st_size if (self.data_dir / "api.log").exists() else 0
        self.api = self._spawn("api", args)
        deadline = time.monotonic() + 180  # parallel test processes start their stacks at the same moment
        while time.monotonic() < deadline:
            if self.api.poll() is not None:
                log = (self.data_dir / "api.log").read_bytes()[log_start:].decode(errors="replace")
                error = _ApiPortTaken if "address already in use" in log.lower() else RuntimeError
                raise error(f"agentq api exited with {self.api.returncode}:\n{log[-3000:]}")
            try:
                if httpx.get(self.base_url + "/health", timeout=1).status_code == 200:
                    return self.api
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"agentq api did not become healthy:\n{self.log_tail('api')}")

    def log_tail(self, name: str, chars: int = 3000) -> str:
        """The end of a child's log."""
        path = self.data_dir / f"{name}.log"
        return path.read_text(errors="replace")[-chars:] if path.exists() else ""

    def start(self) -> LocalStack:
        """Start Redis, the workers and the API."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.redis.start()
        for _ in range(self.worker_count):
            self.start_worker()
        self.start_api()
        return self

    @staticmethod
    def stop_process(process: subprocess.Popen | None, *, sig: int = signal.SIGTERM, timeout: float = 15) -> None:
        """Signal one child process and wait for it (SIGKILL after ``timeout``)."""
        if process is None or process.poll() is not None:
            return
        process.send_signal(sig)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def stop(self) -> None:
        """Stop the API, the workers, then Redis."""
        self.stop_process(self.api)
        for worker in self.workers:
            self.stop_process(worker)
        self.redis.stop()

    def __enter__(self) -> LocalStack:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc_info) -> None:
        self.stop()
