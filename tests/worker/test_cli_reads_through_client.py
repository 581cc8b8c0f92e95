"""The CLI reads agentq's data only through the worker's client (``worker.client.AgentqClient`` and its read models,
``worker/records/reads.py``), as the API does (``tests/api/test_api_reads_through_client.py``): no agentq module imports
the store's key names or builds a Redis client from ``runtime.redis_store``, imports a worker function that takes
a raw Redis client (``worker.records.inbox``, ``worker.records.status_counts``, ``worker.fleet.workers_alive``, ...), or sends a Redis
command itself. Which keys hold what stays the worker's business.

The exceptions are the embedded redis-server's process management, listed in ``SERVER_PROCESS`` with why: they
concern the server (start it, stop it), not agentq's data in it.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import time
from pathlib import Path

import pytest

from tests.api.test_api_reads_through_client import REDIS_COMMANDS

AGENTQ = Path(__file__).resolve().parents[2] / "agentq"

STORE = "runtime.redis_store"
"""Key names, scripts, connections and URLs: imported by no agentq module, but for ``SERVER_PROCESS``'s."""

EVERYDAY_NAMES = frozenset({"exists", "json", "unlink", "wait"})
"""redis-py command names the CLI calls on other things: ``Path.exists``/``unlink``, httpx's ``Response.json``,
``Popen.wait``."""

SERVER_PROCESS = {
    ("agentq/embedded.py", "from runtime.redis_store.launcher import EmbeddedRedis"):
        "starts the directory's embedded redis-server process",
    ("agentq/local_stack.py", "from runtime.redis_store.launcher import EmbeddedRedis, free_port"):
        "starts the LocalStack's redis-server process on a free port",
    ("agentq/embedded.py", ".from_url(...)"):
        "`shutdown(url)`: a connection only to send SHUTDOWN, which saves the AOF and ends the server process",
    ("agentq/embedded.py", ".shutdown(...)"):
        "`shutdown(url)`: `agentq stop` and the last api/worker leaving end the embedded server (it saves first)",
}
"""(module, offence) -> why it is allowed: the embedded server's process management, not agentq's data. Whether
the server answers is asked by ``worker.config.local_redis.answers`` (a PING on a socket), outside ``agentq/``."""


def _raw_redis_functions(module_name: str) -> list[str]:
    """The functions of a ``worker`` module whose first parameter is a raw Redis client (named ``redis``)."""
    module = importlib.import_module(module_name)
    return sorted(name for name, value in vars(module).items()
                  if inspect.isfunction(value) and value.__module__ == module_name
                  and list(inspect.signature(value).parameters)[:1] == ["redis"])


def _takes_raw_redis(module: str, name: str | None = None) -> bool:
    """True for ``worker.X`` having raw-Redis functions (``name`` None) or for its function ``name`` being one;
    constants (``worker.records.status_counts.SCAN_LIMIT``) and modules without such functions are fine."""
    if not module.startswith("worker."):
        return False
    try:
        functions = _raw_redis_functions(module)
    except ImportError:
        return False
    return bool(functions) if name is None else name in functions


def _store(module: str) -> bool:
    return module == STORE or module.startswith(STORE + ".")


def offences(source: str) -> list[str]:
    """What in ``source`` (an agentq module) reaches agentq's data in Redis past the client, one line each."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [f"line {node.lineno}: import {alias.name}" for alias in node.names
                      if _store(alias.name) or _takes_raw_redis(alias.name)]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module is not None:
            names = [alias.name for alias in node.names]
            if (_store(node.module) or any(_store(f"{node.module}.{name}") for name in names)
                    or any(_takes_raw_redis(node.module, name) or _takes_raw_redis(f"{node.module}.{name}")
                           for name in names)):
                found.append(f"line {node.lineno}: from {node.module} import {', '.join(names)}")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in REDIS_COMMANDS - EVERYDAY_NAMES):
            found.append(f"line {node.lineno}: .{node.func.attr}(...)")
    return sorted(found, key=lambda line: int(line.split(":")[0].removeprefix("line ")))


def test_no_agentq_module_reads_agentq_data_past_the_client():
    found = {}
    for path in sorted(AGENTQ.rglob("*.py")):
        module = str(path.relative_to(AGENTQ.parent))
        lines = [line for line in offences(path.read_text())
                 if (module, line.split(": ", 1)[1]) not in SERVER_PROCESS]
        if lines:
            found[module] = lines
    assert found == {}


def test_every_allowed_exception_is_still_there():
    """An exception the code no longer needs is removed from ``SERVER_PROCESS``, so the list stays the truth."""
    seen = {(str(path.relative_to(AGENTQ.parent)), line.split(": ", 1)[1])
            for path in sorted(AGENTQ.rglob("*.py")) for line in offences(path.read_text())}
    assert set(SERVER_PROCESS) - seen == set()


def test_the_check_sees_each_way_past_the_client():
    source = (
        "from runtime.redis_store import keys\n"
        "from runtime import redis_store\n"
        "from runtime.redis_store.redis_url import redis_client_from_url\n"
        "from worker.records import inbox\n"
        "from worker.records.status_counts import count_by_status, SCAN_LIMIT\n"
        "from worker.records.status_counts import SCAN_LIMIT\n"
        "import worker.fleet.workers_alive\n"
        "from worker.client import AgentqClient\n"
        "async def f(redis, client, path):\n"
        "    await redis.hgetall('agentq:workers')\n"
        "    await client.ops.announced_apps()\n"
        "    path.unlink(missing_ok=True)\n"
        "    return await redis.llen('agentq')\n"
    )
    assert offences(source) == [
        "line 1: from runtime.redis_store import keys",
        "line 2: from runtime import redis_store",
        "line 3: from runtime.redis_store.redis_url import redis_client_from_url",
        "line 4: from worker.records import inbox",
        "line 5: from worker.records.status_counts import count_by_status, SCAN_LIMIT",
        "line 7: import worker.fleet.workers_alive",
        "line 10: .hgetall(...)",
        "line 13: .llen(...)",
    ]


def test_the_worker_modules_the_check_keeps_out_are_found_by_their_raw_redis_functions():
    assert {module: _raw_redis_functions(module) for module in
            ("worker.records.inbox", "worker.records.status_counts", "worker.fleet.workers_alive")} == {
        "worker.records.inbox": ["_merge", "_page", "_slot_groups", "app_wide_page", "fingerprint", "parked_page",
                         "user_pairs"],
        "worker.records.status_counts": ["_every_shard", "_scope_counts", "count_by_status",
                                         "count_underflows"],
        "worker.fleet.workers_alive": ["alive_workers", "announced_apps"],
    }


# --- through the client, the CLI still reads any store URL ----------------------------------------------------


def test_status_and_inbox_read_a_cluster_store_without_a_broker_url(redis_cluster_url, monkeypatch, capsys):
    from agentq.cli import main
    from runtime.redis_store import keys
    from runtime.redis_store.layout import LAYOUT_VERSION
    from runtime.redis_store.redis_url import redis_client_from_url
    from worker.fleet.workers_alive import beats_shard

    monkeypatch.delenv("AGENTQ_BROKER_URL", raising=False)  # the CLI's reads need no broker, as before
    with redis_client_from_url(redis_cluster_url, asyncio=False) as redis:
        redis.hset(keys.workers(), "alive-1", json.dumps({"apps": ["approval"], "layout": LAYOUT_VERSION}))
        redis.hset(keys.workers(), "stopped-1", json.dumps({"apps": ["weather"]}))  # announced, never beat
        beats = keys.workers_alive(beats_shard("alive-1", cluster=True))  # as the worker's own beat writes it
        redis.zadd(beats, {"alive-1": int(time.time() * 1000)})

    assert main(["--redis-url", redis_cluster_url, "status", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert ([(w["name"], w["apps"]) for w in figures.pop("workers")], figures) == (
        [("alive-1", ["approval"])],
        {"redis": redis_cluster_url, "workersAlive": 1, "queueDepth": 0, "sampled": False,
         "queueDepths": {"agentq": 0, "agentq.app.approval": 0, "agentq.app.weather": 0},
         "counts": {"queued": 0, "running": 0, "parked": 0, "completed": 0, "failed": 0, "cancelled": 0}})
    assert main(["--redis-url", redis_cluster_url, "inbox"]) == 0
    # apps announced (the stopped worker's too), nothing parked: said so, no warning
    assert capsys.readouterr() == ("no invocation waits on a person\n", "")


async def test_a_reads_only_client_needs_no_broker_on_a_cluster_and_refuses_writes_naming_why(monkeypatch):
    from runtime.errors import UsageError
    from worker.client import AgentqClient

    monkeypatch.delenv("AGENTQ_BROKER_URL", raising=False)
    with pytest.raises(UsageError, match="set AGENTQ_BROKER_URL"):
        AgentqClient("redis+cluster://127.0.0.1:1")
    async with AgentqClient("redis+cluster://127.0.0.1:1", reads_only=True) as client:
        with pytest.raises(UsageError, match=r"AgentqClient\.enqueue: this client was made with reads_only=True"):
            await client.enqueue("approval", "ann", "s-1", "Please pay 100")
        with pytest.raises(UsageError, match=r"AgentqClient\.approve: "):
            await client.approve("e-1", "c-1")
