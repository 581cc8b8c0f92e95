"""The google-adk reference side of the benchmarks, kept in its own virtualenv.

The project must never import google-adk (DESIGN.md section 7), yet its targets
are ratios against it measured in the same run. So google-adk lives in
bench/.adk-venv, pinned by bench/adk_side/requirements.txt, and its scripts run
in a subprocess that reports one JSON line. Nothing here imports google.adk.

    python -m bench.adk_env inmemory_tool_roundtrip.py --n 2000
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
VENV = BENCH / ".adk-venv"
SIDE = BENCH / "adk_side"
REQUIREMENTS = SIDE / "requirements.txt"
# The venv remembers the lock it was built from, so editing the pin rebuilds it.
_STAMP = VENV / ".agentq-requirements.txt"


def _python() -> Path:
    return VENV / "bin" / "python"


def ensure_adk_venv() -> Path:
    """Create bench/.adk-venv with the pinned google-adk if missing or stale; return its python."""
    wanted = REQUIREMENTS.read_text()
    # Two benchmark processes starting at once must not build the same venv twice.
    with open(BENCH / ".adk-venv.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _python().exists() and _STAMP.exists() and _STAMP.read_text() == wanted:
            return _python()
        shutil.rmtree(VENV, ignore_errors=True)
        try:
            subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
            subprocess.run(
                [str(_python()), "-m", "pip", "install", "--quiet",
                 "--disable-pip-version-check", "-r", str(REQUIREMENTS)],
                check=True,
            )
        except BaseException:
            # A half-built venv would pass the existence check next time.
            shutil.rmtree(VENV, ignore_errors=True)
            raise
        _STAMP.write_text(wanted)
        return _python()


def _clean_env() -> dict[str, str]:
    # The project's own paths must not leak in: a `runtime` or `google` on
    # PYTHONPATH would shadow or mix with the venv's packages.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    return env


def run_adk_bench(script_name: str, *args: object, timeout: float | None = None) -> dict:
    """Run bench/adk_side/<script_name> in the ADK venv; return the JSON of its last stdout line."""
    script = SIDE / (script_name if script_name.endswith(".py") else script_name + ".py")
    if not script.is_file():
        raise FileNotFoundError(script)
    proc = subprocess.run(
        [str(ensure_adk_venv()), str(script), *map(str, args)],
        capture_output=True, text=True, env=_clean_env(), timeout=timeout,
    )
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(
            f"{script.name} exited {proc.returncode}; stderr tail:\n{proc.stderr[-2000:]}"
        )
    return json.loads(lines[-1])


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(ensure_adk_venv())
    else:
        print(json.dumps(run_adk_bench(sys.argv[1], *sys.argv[2:])))
