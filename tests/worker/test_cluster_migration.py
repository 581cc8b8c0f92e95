"""A hash slot moved between masters under load, all real processes: a three-master Redis Cluster, the Celery
broker on a plain redis-server of its own, two ``agentq worker`` processes, and a client enqueuing and following
a batch whose sessions all live in the slot being moved. The slot is moved the way ``redis-cli --cluster
reshard`` moves it (IMPORTING/MIGRATING, MIGRATE a few keys at a time, SETSLOT NODE), slowly, so commits, claims
and settles meet it half moved (ASK redirects, TRYAGAIN for a script whose keys are split). Every invocation
completes, each step is committed once, each tool runs once, and a follower sees each event once."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest
from redis.crc import key_slot

from runtime.redis_store import keys
from runtime.redis_store.launcher import EmbeddedRedis
from runtime.redis_store.streams import StreamEntry
from tests.redis_cluster import LocalRedisCluster
from tests.worker.chaos_apps import STEPS, TOOL_RUNS_ENV
from tests.worker.chaos_pool import ChaosPool, settle_all
from tests.worker.test_sentinel_failover import _agent_events, _follow_through_failover
from worker.client import AgentqClient

APP = "logged_steps"
BATCH = 24
SEEN_BEFORE_THE_MOVE = 20
"""Agent events the followers have seen when the move starts: mid-batch, not before."""


@pytest.fixture
def moving_cluster(tmp_path, monkeypatch):
    """The cluster, the broker, two workers on them, and the file the workers' tool runs are noted in."""
    tool_runs = tmp_path / "tool-runs.txt"
    tool_runs.touch()
    with LocalRedisCluster(tmp_path / "cluster") as cluster, \
            EmbeddedRedis(tmp_path / "broker", appendonly=False) as broker:
        monkeypatch.setenv("AGENTQ_BROKER_URL", broker.url)
        (tmp_path / "logs").mkdir()
        pool = ChaosPool(cluster.url, tmp_path / "logs", AGENTQ_BROKER_URL=broker.url,
                         **{TOOL_RUNS_ENV: str(tool_runs)})
        try:
            pool.ensure("m1", "m2")
            yield cluster, tool_runs
        finally:
            pool.stop_all()


@pytest.mark.timeout(300)
async def test_on_a_cluster_a_slot_moved_under_load_loses_and_doubles_nothing(moving_cluster, user):
    cluster, tool_runs = moving_cluster
    slot = key_slot(keys.user_tag(APP, user).encode())
    source = cluster.master_of_slot(slot)
    target = next(node for node in cluster.nodes if node is not source)
    async with AgentqClient(cluster.url) as client:
        sessions = {}
        for _ in range(BATCH):
            session = await client.create_session(APP, user)
            sessions[await client.enqueue(APP, user, session.id, "go")] = session.id
        ids = list(sessions)
        seen: dict[str, list[StreamEntry]] = {invocation_id: [] for invocation_id in ids}
        followers = [asyncio.create_task(_follow_through_failover(client, i, seen[i])) for i in ids]
        while _agent_events(seen) < SEEN_BEFORE_THE_MOVE:
            assert not any(f.done() and f.exception() for f in followers), "a follower failed before the move"
            await asyncio.sleep(0.05)
        moved = await asyncio.to_thread(cluster.migrate_slot, slot, target)
        statuses = await settle_all(client, ids, timeout=180)
        await asyncio.gather(*followers)
        histories = {}
        for invocation_id, session_id in sessions.items():
            session = await client.session_service.get_session(app_name=APP, user_id=user, session_id=session_id)
            histories[invocation_id] = [e for e in session.events if e.invocation_id == invocation_id]

    print(f"\n{moved} keys of slot {slot} moved from port {source.port} to port {target.port} mid-batch")
    assert moved > BATCH  # each session has several keys: the move really carried the batch's state
    assert cluster.master_of_slot(slot) is target
    assert statuses == dict.fromkeys(ids, "completed")
    responses = {i: [r for e in events for r in e.get_function_responses()] for i, events in histories.items()}
    assert {i: [r.response for r in answers] for i, answers in responses.items()} == dict.fromkeys(
        ids, [{"done": n} for n in range(1, STEPS + 1)])  # each step committed once, in order
    runs = Counter(tuple(line.split()) for line in tool_runs.read_text().splitlines())
    calls = {(i, r.id) for i, answers in responses.items() for r in answers}
    assert runs == Counter(dict.fromkeys(calls, 1))  # every answered call ran exactly once, and nothing else ran
    followed = {i: Counter(entry.data["id"] for entry in entries if entry.kind == "event")
                for i, entries in seen.items()}
    assert {i: [event for event, times in counts.items() if times > 1] for i, counts in followed.items()} == \
        dict.fromkeys(ids, [])  # a follower saw no event twice
    assert {i: set(counts) for i, counts in followed.items()} == {
        i: {event.id for event in events} for i, events in histories.items()}  # and missed none
