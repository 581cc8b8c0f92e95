"""google-adk InMemoryRunner, tool round trip (see bench/WORKLOAD.md).

Runs only with bench/.adk-venv's python (bench.adk_env.run_adk_bench).
Prints one JSON line: {"runtime": "google-adk", "store": "memory", ...}.
"""

from _workload import APP, main
from google.adk.runners import InMemoryRunner

if __name__ == "__main__":
    main(lambda agent: InMemoryRunner(agent=agent, app_name=APP), "memory")
