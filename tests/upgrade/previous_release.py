"""The previous release, checked out from this clone's own history and built from its own lock, cached.

The commit is named in one place, ``previous_release.txt`` beside this file (moved at each release). The source
is ``git archive``d into ``<cache>/previous-release/<commit>/src`` and its venv built there from the release's
``requirements-dev.lock``, as its ``make install`` did (with ``uv`` from this project's venv when it has one, else pip), once: a later run finds
the ``.ready`` stamp and reuses both. ``<cache>``: ``AGENTQ_CI_CACHE``, else /var/cache/agentq-ci when it can be
written (as .ci/run's deployment test), else ~/.cache/agentq-ci.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
COMMIT_FILE = Path(__file__).with_name("previous_release.txt")


class Unavailable(Exception):
    """The previous release cannot be installed here (no history of it, or no package registry)."""


@dataclass(frozen=True)
class PreviousRelease:
    """A built previous release: its commit, source tree and Python."""

    commit: str
    src: Path
    python: Path

    def env(self, redis_url: str, **extra: str) -> dict[str, str]:
        """The environment of one of its processes on ``redis_url`` (its own tree first on the import path)."""
        env = {name: value for name, value in os.environ.items() if not name.startswith(("AGENTQ_API_KEYS",))}
        env.update(AGENTQ_REDIS_URL=redis_url, PYTHONPATH=str(self.src), PYTHONUNBUFFERED="1", **extra)
        env.pop("VIRTUAL_ENV", None)
        return env

    def agentq(self, *argv: str) -> list[str]:
        """The command line of its ``agentq``."""
        return [str(self.python), "-m", "agentq.cli", *argv]


def commit() -> str:
    """The previous release's commit, as named in ``previous_release.txt``."""
    return COMMIT_FILE.read_text().split()[0]


def cache_dir() -> Path:
    """Where built releases are kept between runs."""
    if os.environ.get("AGENTQ_CI_CACHE"):
        return Path(os.environ["AGENTQ_CI_CACHE"])
    system = Path("/var/cache/agentq-ci")
    try:
        system.mkdir(parents=True, exist_ok=True)
        if os.access(system, os.W_OK):
            return system
    except OSError:
        pass
    return Path.home() / ".cache" / "agentq-ci"


def ensure() -> PreviousRelease:
    """The previous release, built now unless a previous run left it ready; Unavailable saying why not."""
    sha = commit()
    home = cache_dir() / "previous-release" / sha
    release = PreviousRelease(commit=sha, src=home / "src", python=home / "venv" / "bin" / "python")
    if (home / ".ready").exists():
        return release
    found = subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", f"{sha}^{{commit}}"], capture_output=True)
    if found.returncode != 0:
        raise Unavailable(f"commit {sha} (tests/upgrade/previous_release.txt) is not in this clone's history "
                          "(a shallow clone? fetch it with `git fetch --unshallow`)")
    home.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{sha[:12]}-", dir=home.parent))
    try:
        (scratch / "src").mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", sha], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(scratch / "src")], input=archive.stdout, check=True)
        # its `make install`'s lock: the one its worker, API and tests ran with
        _build_venv(scratch / "venv", scratch / "src" / "requirements-dev.lock")
        (scratch / ".ready").write_text(sha + "\n")
        if home.exists():
            shutil.rmtree(home)  # an earlier build that never got ready
        scratch.rename(home)  # the venv's scripts name its final path only through python's location: fine
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return release


def _build_venv(venv: Path, lock: Path) -> None:
    uv = Path(sys.executable).parent / "uv"
    if uv.exists():
        steps = [[str(uv), "venv", "--quiet", "--python", sys.executable, str(venv)],
                 [str(uv), "pip", "sync", "--quiet", "--python", str(venv / "bin" / "python"), str(lock)]]
    else:
        steps = [[sys.executable, "-m", "venv", str(venv)],
                 [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--require-hashes", "-r", str(lock)]]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True)
        if done.returncode != 0:
            raise Unavailable(f"the previous release's venv cannot be built ({' '.join(step[:3])} ...: "
                              f"{done.stderr.strip()[-600:]})")
