"""The status vocabulary is one (runtime.statuses): the Lua scripts compare and write only its words."""

from __future__ import annotations

import re

from runtime.redis_store import scripts
from runtime.statuses import FINAL, SETTLED, STATUSES
from worker.records.retention import DEFAULT_SETTLED_S

# A status compared (`status == 'parked'`, `ARGV[3] ~= 'parked'`, `HGET(...,'status') == 'running'`) or written
# (`'status', 'queued'` in an HSET) by a script.
_COMPARED = re.compile(r"(?:status'?\)?|ARGV\[3\])\s*[~=]=\s*'([a-z_]+)'")
_WRITTEN = re.compile(r"'HSET',[^)]*?'status',\s*'([a-z_]+)'")


def _script_sources() -> dict[str, str]:
    """Each script as it is sent (its libraries included)."""
    return {name: script.source for name, script in scripts.ALL.items()}


def test_every_status_the_lua_scripts_compare_or_write_is_in_the_vocabulary():
    found = {(name, word) for name, source in _script_sources().items()
             for pattern in (_COMPARED, _WRITTEN) for word in pattern.findall(source)}
    assert {word for _, word in found} <= set(STATUSES), sorted(found)
    # the check reads what it claims to: the lifecycle's scripts name most of the statuses
    assert {word for _, word in found} >= {"queued", "running", "parked", "completed", "cancelled"}


def test_final_statuses_are_settled_and_settled_ones_are_statuses():
    assert FINAL < SETTLED < set(STATUSES)
    assert set(STATUSES) - SETTLED == {"queued", "running"}


def test_the_lua_default_retention_is_the_workers():
    source = scripts.SETTLE.source
    [keep_ms] = re.findall(r"^local DEFAULT_KEEP_MS = (\d+)$", source, re.MULTILINE)
    assert int(keep_ms) == int(DEFAULT_SETTLED_S * 1000)
