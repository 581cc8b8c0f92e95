"""The deployment under test: compose.yaml up with two workers, built from the lock on a debootstrap'ed Debian.

Building the image and running six containers takes minutes, so the stack is made only when
``AGENTQ_DEPLOY_TEST=1`` (``.ci/run`` sets it after making sure a Docker engine runs); otherwise, and when no
engine, compose or debootstrap is at hand, the tests are skipped saying which.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time

import pytest

from tests.deploy.compose_stack import CACHE, ROOT, ComposeStack, compose_command, run, say
from tests.deploy.wheel_server import Wheelhouse


def _missing_prerequisite() -> str | None:
    if os.environ.get("AGENTQ_DEPLOY_TEST") != "1":
        return ("builds the image and runs compose.yaml (minutes): set AGENTQ_DEPLOY_TEST=1 to run it, as .ci/run "
                "does")
    if not shutil.which("docker"):
        return "no docker command (deploy/docker-engine.sh installs Debian's docker.io)"
    if subprocess.run(["docker", "info"], capture_output=True).returncode != 0:
        return "no Docker engine: `docker info` failed (deploy/docker-engine.sh installs and starts one)"
    if compose_command() is None:
        return "no compose: neither `docker compose` nor `docker-compose` is installed"
    if not shutil.which("debootstrap") and not (CACHE / "debian-bookworm-python3.tar").exists():
        return "no debootstrap to make the Debian base image (apt-get install debootstrap)"
    return None


@pytest.fixture(scope="package")
def stack():
    """The running compose project; ``docker compose down -v`` afterwards (the image stays: it is the build cache)."""
    reason = _missing_prerequisite()
    if reason:
        pytest.skip(reason)
    started = time.monotonic()
    base = run(str(ROOT / "deploy" / "debian-base.sh"), timeout=900).strip()
    say(f"base image {base} (debootstrap, cached in {CACHE}) ready in {time.monotonic() - started:.1f} s")
    with Wheelhouse(base, CACHE / "wheels") as wheels:
        compose = ComposeStack(compose_command(), base, wheels.url)
        started = time.monotonic()
        compose.build()
        say(f"image {compose.image} built from requirements.lock on {base} in {time.monotonic() - started:.1f} s")
    try:
        started = time.monotonic()
        compose.up(workers=2)
        states = compose.wait_healthy()
        say(f"compose up (2 workers) healthy in {time.monotonic() - started:.1f} s: "
            + ", ".join(f"{name} {state}" for name, state in sorted(states.items())))
        yield compose
    finally:
        compose.down()
        say("compose down -v: containers, network and volume removed")
