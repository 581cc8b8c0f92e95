"""The API reads and writes Redis only through the worker's client (``worker.client.AgentqClient`` and the read
models it hands out): no api module imports the Redis client or the store's key and stream modules, sends a
Redis command itself, or hands a raw client (``services.redis``) to a worker function. Otherwise the key layout leaks into the HTTP layer and the arrow api -> worker -> runtime
gets a second, hidden path."""

from __future__ import annotations

import ast
from pathlib import Path

import redis.asyncio

API = Path(__file__).resolve().parents[2] / "api"

BANNED_MODULES = ("redis", "runtime.redis_store")
"""Imported by no api module, nor anything under them."""

EVERYDAY_NAMES = frozenset({"aclose", "append", "close", "copy", "delete", "get", "info", "keys", "set", "sort",
                            "time", "type"})
"""redis-py command names that Python's own types, loggers and clients use too (``dict.get``, ``log.info``,
``list.append``, ``gauge.set``): calling one says nothing about Redis."""

REDIS_COMMANDS = frozenset(
    name for name in dir(redis.asyncio.Redis) if not name.startswith("_") and callable(getattr(redis.asyncio.Redis, name))
) - EVERYDAY_NAMES
"""Every command method of redis-py's client (``llen``, ``hget``, ``xrange``, ``pipeline``, ``ping``, ...)."""


def _banned(module: str) -> bool:
    return any(module == banned or module.startswith(banned + ".") for banned in BANNED_MODULES)


def offences(source: str) -> list[str]:
    """What in ``source`` (an api module) reaches Redis past the client, one line each."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [f"line {node.lineno}: import {alias.name}" for alias in node.names if _banned(alias.name)]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module is not None:
            # ``from runtime import redis_store`` names the banned package as one of the imported names.
            names = [f"{node.module}.{alias.name}" for alias in node.names]
            if _banned(node.module) or any(_banned(name) for name in names):
                found.append(f"line {node.lineno}: from {node.module} import "
                             f"{', '.join(alias.name for alias in node.names)}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in REDIS_COMMANDS:
            found.append(f"line {node.lineno}: .{node.func.attr}(...)")
        elif isinstance(node, ast.Attribute) and node.attr == "redis":
            found.append(f"line {node.lineno}: .redis")
    return sorted(found, key=lambda line: int(line.split(":")[0].removeprefix("line ")))


def test_no_api_module_imports_redis_or_the_store_or_sends_a_redis_command():
    found = {str(path.relative_to(API.parent)): offences(path.read_text())
             for path in sorted(API.rglob("*.py"))}
    assert {path: lines for path, lines in found.items() if lines} == {}


def test_the_check_sees_each_way_past_the_client():
    source = (
        "import redis.asyncio\n"
        "from runtime.redis_store import keys\n"
        "from runtime import redis_store\n"
        "from runtime.redis_store.streams import last_entry_id\n"
        "from runtime.statuses import FINAL\n"
        "async def f(services):\n"
        "    await services.redis.llen('q')\n"
        "    async with client.pipeline(transaction=False) as pipe:\n"
        "        pipe.sismember('k', 's')\n"
        "    await inbox.fingerprint(services.redis, [])\n"
        "    return {}.get('x')\n"
    )
    assert offences(source) == [
        "line 1: import redis.asyncio",
        "line 2: from runtime.redis_store import keys",
        "line 3: from runtime import redis_store",
        "line 4: from runtime.redis_store.streams import last_entry_id",
        "line 7: .llen(...)",
        "line 7: .redis",
        "line 8: .pipeline(...)",
        "line 9: .sismember(...)",
        "line 10: .redis",
    ]
