"""google-adk 2.13's own API server (in bench/.adk-venv) serving the conformance agents, for recording the cases
and for checking that they pass on google-adk itself; agentq never imports google-adk.

``python -m tests.conformance.adk_server record [case folders]`` re-records the cases (default: every case; both
streaming modes) with google-adk's RecordingsPlugin; ``... check [case folders]`` replays them against google-adk
with its ReplayPlugin. ADK's conformance client
always talks to 127.0.0.1:8000, so the port is fixed.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent
AGENTS = HERE / "agents"
CASES = HERE / "cases"
PORT = 8000
"""google-adk's conformance client has no option for the server's address: it is http://127.0.0.1:8000."""
PLUGINS = {
    "record": "google.adk.cli.plugins.recordings_plugin.RecordingsPlugin",
    "check": "google.adk.cli.plugins.replay_plugin.ReplayPlugin",
}


def adk_bin() -> Path:
    from bench.adk_env import VENV, ensure_adk_venv

    ensure_adk_venv()
    return VENV / "bin" / "adk"


def wait_until_up(url: str, process: subprocess.Popen, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server at {url} exited with {process.returncode}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{url}/list-apps", timeout=1.0).status_code == 200:
                return
        time.sleep(0.2)
    raise RuntimeError(f"the server at {url} did not answer /list-apps within {timeout_s:.0f} s")


@contextlib.contextmanager
def adk_api_server(plugin: str, log: Path, agents: Path = AGENTS) -> Iterator[None]:
    """google-adk's ``adk api_server`` on the conformance agents (``agents``: a copy of them, where its artifact
    files may go), with one of its conformance plugins. Its sessions are in memory: the same reference as the
    side-by-side tests (google-adk's in-memory Runner), which lists events in the order they were committed; its
    default SQLite store lists them by timestamp, and a held tool's answer is stamped before the confirmation
    request committed ahead of it."""
    env = {**os.environ, "CONFORMANCE_LIB": "adk"}
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [str(adk_bin()), "api_server", "--port", str(PORT), "--session_service_uri", "memory://",
             "--extra_plugins", plugin, str(agents)],
            cwd=agents, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_until_up(f"http://127.0.0.1:{PORT}", process)
        yield
    finally:
        process.terminate()
        process.wait(timeout=30)


def conformance(*args: str) -> subprocess.CompletedProcess:
    """``adk conformance <args>`` (its output captured)."""
    return subprocess.run([str(adk_bin()), "conformance", *args], capture_output=True, text=True, timeout=600)


def main(action: str, paths: list[str] | None = None) -> int:
    """Record (both streaming modes) or check the cases under ``paths`` (default: every case)."""
    folders = paths or [str(CASES)]
    with adk_api_server(PLUGINS[action], Path(f"/tmp/agentq-conformance-adk-{action}.log")):
        if action == "record":
            for mode in ("none", "sse"):
                done = conformance("record", *folders, mode)
                print(done.stdout, done.stderr, sep="\n")
                if done.returncode:
                    return done.returncode
            return 0
        done = conformance("test", *folders)
        print(done.stdout, done.stderr, sep="\n")
        return done.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "check", sys.argv[2:]))
