"""Runs one page's code blocks in order, offline, as a reader would in one terminal folder.

Each page gets its own folder and its own embedded redis-server (``AGENTQ_DATA_DIR`` in a temporary folder; no
``AGENTQ_REDIS_URL``), the virtualenv's ``agentq`` first on ``PATH``, the repository on ``PYTHONPATH`` (the
docs name ``examples.*`` apps) and no Gemini key (the example apps then use their offline models). A Python
block whose first line is ``# <name>.py`` is saved under that name (later blocks import it or pass it to
``agentq worker --app``) and run; any other Python block is run as a script file; a shell block is run by
``bash -e -o pipefail``. What a block starts in the background (``agentq worker ... &``) keeps running for the
page's later blocks, and is stopped when the page is done (``agentq stop``, then its process group).

The one change made to a block: the API's port in the docs, 8000, becomes a free port, so the test does not
depend on what else this machine runs.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from .markdown_blocks import PYTHON, REPO, Block

BLOCK_TIMEOUT_S = 240
DOCS_PORT = re.compile(r"(?<=[:\s])8000\b")
SAVED_AS = re.compile(r"^#\s*(?P<name>[\w.]+\.py)\b")


def free_port() -> int:
    """A TCP port nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class PageSession:
    """The folder, environment and background processes one page's blocks share."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.port = free_port()
        env = {name: value for name, value in os.environ.items()
               if not name.startswith(("AGENTQ_", "OTEL_", "GOOGLE_", "GEMINI_"))}
        env.update({
            "AGENTQ_DATA_DIR": str(folder / "data"),
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
            "PYTHONPATH": os.pathsep.join([str(REPO), str(folder)]),
            "PYTHONUNBUFFERED": "1",
        })
        self.env = env
        self.groups: list[int] = []
        self.transcript: list[str] = []

    def run(self, block: Block) -> None:
        """Run one block; AssertionError naming the block and showing its output when it fails."""
        text = DOCS_PORT.sub(str(self.port), block.text)
        number = len(self.groups) + 1
        if block.lang in PYTHON:
            saved = SAVED_AS.match(text)
            script = self.folder / (saved["name"] if saved else f"block{number}_line{block.line}.py")
            command = [sys.executable, script.name]
        else:
            script = self.folder / f"block{number}_line{block.line}.sh"
            command = ["bash", "-e", "-o", "pipefail", script.name]
        script.write_text(text)
        output = self.folder / f"block{number}.out"
        started = time.monotonic()
        with output.open("wb") as sink:
            # Output goes to a file, not a pipe: a process the block leaves in the background keeps the file
            # open, and reading a pipe to its end would wait for that process to exit.
            process = subprocess.Popen(command, cwd=self.folder, env=self.env, stdin=subprocess.DEVNULL,
                                       stdout=sink, stderr=subprocess.STDOUT, start_new_session=True)
            self.groups.append(process.pid)
            try:
                status = process.wait(timeout=BLOCK_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                status = None
        printed = output.read_text(errors="replace")
        self.transcript.append(f"--- {block.where} ({block.lang}, {time.monotonic() - started:.1f} s) ---\n{printed}")
        if status != 0:
            outcome = f"exit status {status}" if status is not None else f"still running after {BLOCK_TIMEOUT_S} s"
            raise AssertionError(f"the {block.lang} block at {block.where} failed ({outcome}); it printed:\n"
                                 f"{printed[-4000:]}")

    def report(self) -> str:
        """What each block printed, with how long it took."""
        return "\n".join(self.transcript)

    def close(self) -> None:
        """Stop what the blocks started: agentq's own stop (worker, api, embedded redis), then their groups."""
        subprocess.run([str(Path(sys.executable).parent / "agentq"), "stop"], cwd=self.folder, env=self.env,
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
        for group in self.groups:
            _signal_group(group, signal.SIGTERM)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(_alive(group) for group in self.groups):
            time.sleep(0.2)
        for group in self.groups:
            _signal_group(group, signal.SIGKILL)
        # A block's `agentq api &` may start the embedded redis-server only after the stop above looked (it was
        # still importing): the server runs in a session of its own, so no group signal reaches it.
        from worker.config.local_redis import running_url

        if running_url(Path(self.env["AGENTQ_DATA_DIR"])) is not None:
            subprocess.run([str(Path(sys.executable).parent / "agentq"), "stop"], cwd=self.folder, env=self.env,
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=120)


def _signal_group(group: int, signum: int) -> None:
    try:
        os.killpg(group, signum)
    except (ProcessLookupError, PermissionError):
        pass


def _alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True
