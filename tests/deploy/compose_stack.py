"""compose.yaml brought up for real: the image built from the lock on a debootstrap'ed Debian, every service on
the host's network (tests/deploy/compose.hostnet.yaml), driven with the docker and compose commands.

``ComposeStack`` knows the ports, the project name and the environment compose needs; it does not hide what the
commands are (each one run is a command a person could type).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("AGENTQ_CI_CACHE", "/var/cache/agentq-ci"))
OVERRIDE = Path(__file__).with_name("compose.hostnet.yaml")
API_KEY = "deploy-test-key-0123456789"
FLOWER_LOGIN = ("ops", "deploy-test-flower-password")


def say(message: str) -> None:
    """One line of the test's report (run pytest with -s to see them; .ci/run does)."""
    print(f"[deploy] {message}", flush=True)


def free_port(preferred: int = 0) -> int:
    """``preferred`` when it is free on loopback, else any free port."""
    for port in (preferred, 0) if preferred else (0,):
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return sock.getsockname()[1]
    raise AssertionError("no free port on 127.0.0.1")


def compose_command() -> list[str] | None:
    """``docker compose`` (v2) where the plugin is installed, else ``docker-compose`` (v1, Debian's), else None."""
    if subprocess.run(["docker", "compose", "version"], capture_output=True).returncode == 0:
        return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    return None


def run(*command: str, timeout: float = 600, env: dict[str, str] | None = None) -> str:
    """Run a command from the project root; its stdout, or an AssertionError carrying its output."""
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise AssertionError(f"{' '.join(command)!r} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return done.stdout


class ComposeStack:
    """One compose project of compose.yaml + the host-network override, with its own ports and image tag."""

    def __init__(self, compose: list[str], base_image: str, wheelhouse_url: str):
        self.project = f"agentq-deploy-{os.getpid()}"
        # One tag, kept between runs: the image (with its build cache) is replaced by the next run's build.
        self.image = "agentq:deploy-test"
        self.ports = {name: free_port() for name in ("redis", "api", "flower")}
        self.compose = [*compose, "-p", self.project, "-f", str(ROOT / "compose.yaml"), "-f", str(OVERRIDE)]
        self.env = {
            **os.environ,
            "AGENTQ_IMAGE": self.image,
            "AGENTQ_BASE_IMAGE": base_image,
            "AGENTQ_WHEELHOUSE": wheelhouse_url,
            "AGENTQ_CI_REDIS_PORT": str(self.ports["redis"]),
            "AGENTQ_CI_API_PORT": str(self.ports["api"]),
            "AGENTQ_CI_FLOWER_PORT": str(self.ports["flower"]),
            "AGENTQ_API_KEYS": json.dumps({API_KEY: {"users": ["*"], "apps": ["*"]}}),
            "FLOWER_BASIC_AUTH": ":".join(FLOWER_LOGIN),
            # As a user who sets neither: the offline model (the assertions read its words), and no webhook secret
            # (tests/conftest.py puts one in this process's environment for the suite's own workers).
            "GOOGLE_API_KEY": "",
            "AGENTQ_WEBHOOK_SECRET": "",
        }

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.ports['api']}"

    @property
    def flower_url(self) -> str:
        return f"http://127.0.0.1:{self.ports['flower']}"

    def run(self, *args: str, timeout: float = 600) -> str:
        return run(*self.compose, *args, timeout=timeout, env=self.env)

    def build(self) -> None:
        # One service builds the image; the others name the same tag (building them too would only hit the cache).
        previous = self.image_id()
        self.run("build", "api", timeout=1200)
        if previous and previous != self.image_id():
            # The last run's image, untagged now: removed with the layers only it used, so runs don't pile up.
            subprocess.run(["docker", "image", "rm", previous], capture_output=True)

    def image_id(self) -> str | None:
        done = subprocess.run(["docker", "image", "inspect", "--format", "{{.Id}}", self.image],
                              capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else None

    def up(self, workers: int) -> None:
        self.run("up", "-d", "--no-build", "--scale", f"worker={workers}")

    def down(self) -> None:
        self.run("down", "-v", "--remove-orphans", timeout=300)

    def containers(self, service: str) -> list[str]:
        """The names of the service's containers (running or not), in a stable order."""
        out = run("docker", "ps", "-a", "--filter", f"label=com.docker.compose.project={self.project}",
                  "--filter", f"label=com.docker.compose.service={service}", "--format", "{{.Names}}")
        return sorted(out.split())

    def state(self, container: str) -> dict:
        return json.loads(run("docker", "inspect", "--format", "{{json .State}}", container))

    def logs(self, container: str) -> str:
        done = subprocess.run(["docker", "logs", container], capture_output=True, text=True, timeout=60)
        return done.stdout + done.stderr

    def wait_healthy(self, timeout: float = 180) -> dict[str, str]:
        """Wait until redis, the api and flower report healthy and every worker announced its name (workers have
        no healthcheck); the state of each container. Raises with the logs when one exits or time runs out."""
        deadline = time.monotonic() + timeout
        while True:
            states = self.states()
            up = (all(states[name] == "healthy" for service in ("redis", "api", "flower")
                      for name in self.containers(service))
                  and all(self.worker_name(name) for name in self.containers("worker")))
            if up:
                return states
            if any(state.startswith("exited") for state in states.values()) or time.monotonic() > deadline:
                logs = "\n".join(f"--- {name}\n{self.logs(name)[-3000:]}" for name in states)
                raise AssertionError(f"the stack did not come up healthy: {states!r}\n{logs}")
            time.sleep(1)

    def states(self) -> dict[str, str]:
        """Each container's health where it has a healthcheck, else its status (running, exited ...)."""
        states = {}
        for service in ("redis", "api", "worker", "flower"):
            for name in self.containers(service):
                state = self.state(name)
                status = state.get("Health", {}).get("Status") or state["Status"]
                states[name] = f"exited {state['ExitCode']}" if state["Status"] == "exited" else status
        return states

    def worker_name(self, container: str) -> str | None:
        """The agentq worker name a worker container announced in its log (``worker NAME: ready``)."""
        for line in self.logs(container).splitlines():
            if line.endswith(": ready") and " worker " in line:
                return line.rsplit(" worker ", 1)[1].removesuffix(": ready")
        return None

    def kill(self, container: str) -> None:
        run("docker", "kill", "-s", "KILL", container)
