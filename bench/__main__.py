"""`make bench`: every benchmark, each beside its anchor measured in the same run.

Each part runs in its own process so that event loops, worker processes and embedded redis-servers of one
part never disturb the next. Pass part names to run only those: `python -m bench runtime store`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PARTS = {
    "runtime": ["bench.runtime_bench", "--adk"],
    "store": ["bench.store_bench", "--adk"],
    "worker": ["bench.worker_bench"],
    "quarantine": ["bench.quarantine_bench"],
    "workflow": ["bench.workflow_bench"],
    "api": ["bench.api_bench"],
    "inbox": ["bench.inbox_bench"],
    "counts": ["bench.counts_bench"],
    "ui-inbox": ["bench.ui_inbox_bench"],
    "soak": ["bench.soak_bench"],
    "long_session": ["bench.long_session_bench"],
    "rss": ["bench.rss_bench"],
    "double_texting": ["bench.double_texting_bench"],
    "cluster": ["bench.cluster_bench"],
    "schedules": ["bench.schedule_bench"],
    "oauth": ["bench.oauth_bench"],
    "fairness": ["bench.fairness_bench"],
    "reaper_shards": ["bench.reaper_shards_bench"],
    "migrate": ["bench.migrate_bench"],
    "scaleout": ["bench.scaleout"],
    "glide": ["bench.glide_bench"],
    "rediscost": ["bench.rediscost_bench"],
    "http": ["bench.http_vs_adk"],
}


def main(argv: list[str]) -> int:
    chosen = argv or list(PARTS)
    unknown = [name for name in chosen if name not in PARTS]
    if unknown:
        print(f"unknown bench part(s) {unknown!r}; choose from {sorted(PARTS)}", file=sys.stderr)
        return 2
    failed = []
    for name in chosen:
        print(f"\n=== bench {name} ===", flush=True)
        if subprocess.run([sys.executable, "-m", *PARTS[name]], cwd=ROOT).returncode != 0:
            failed.append(name)
    if failed:
        print(f"\nbench parts failed: {json.dumps(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
