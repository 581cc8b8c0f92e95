"""google-adk Runner + DatabaseSessionService on a SQLite file (see bench/WORKLOAD.md).

Runs only with bench/.adk-venv's python (bench.adk_env.run_adk_bench).
Prints one JSON line: {"runtime": "google-adk", "store": "sqlite", ...}.
"""

import atexit
import shutil
import tempfile
from pathlib import Path

from _workload import APP, main
from google.adk.runners import Runner
from google.adk.sessions import DatabaseSessionService

# A real file (not :memory:) so every commit pays the fsync a durable store pays.
_tmp = Path(tempfile.mkdtemp(prefix="adk-bench-"))
atexit.register(shutil.rmtree, _tmp, ignore_errors=True)


def make_runner(agent):
    # DatabaseSessionService needs an async driver; aiosqlite ships with google-adk.
    service = DatabaseSessionService(db_url=f"sqlite+aiosqlite:///{_tmp / 'sessions.db'}")
    return Runner(app_name=APP, agent=agent, session_service=service)


if __name__ == "__main__":
    main(make_runner, "sqlite")
