"""The approval flow with the store on a real three-master Redis Cluster: real ``agentq worker`` processes, the
Celery broker on a plain redis-server of its own (a Cluster cannot be one)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time

import httpx
import pytest
from google.genai import types
from redis.cluster import RedisCluster
from redis.crc import key_slot

from runtime.redis_store import keys
from runtime.redis_store.launcher import free_port
from tests.redis_cluster import LocalRedisCluster, slot_ranges
from tests.worker.apps import STEPS
from tests.worker.conftest import APPS, ROOT, WorkerPool
from tests.worker.test_worker_e2e import (
    _committed,
    _events,
    _kill_after_two_tool_answers,
    _said,
    _settled,
    _side_effects,
    _statuses,
)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with LocalRedisCluster(tmp_path_factory.mktemp("e2e-cluster")) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def cluster_pool(cluster, broker, tmp_path_factory):
    pool = WorkerPool(cluster.url, tmp_path_factory.mktemp("cluster-worker-logs"), broker_url=broker.url)
    yield pool
    pool.stop_all()


@pytest.fixture
def cluster_workers(cluster_pool):
    """Two running workers on the cluster, c1 and c2 (restarted if a test killed one)."""
    cluster_pool.ensure("c1", "c2")
    return cluster_pool


@pytest.fixture(scope="module")
def cluster_api(cluster, broker, tmp_path_factory):
    """An ``agentq api`` process on the cluster store (loopback, no keys); its base URL."""
    port = free_port()
    log_path = tmp_path_factory.mktemp("cluster-api") / "api.log"
    env = {**os.environ, "AGENTQ_REDIS_URL": cluster.url, "AGENTQ_BROKER_URL": broker.url, "AGENTQ_APPS": APPS,
           "PYTHONPATH": str(ROOT)}
    env.pop("AGENTQ_API_KEYS", None)
    with open(log_path, "wb") as log:
        process = subprocess.Popen([sys.executable, "-m", "agentq.cli", "api", "--port", str(port)], cwd=ROOT,
                                   env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while not _healthy(base):
            assert process.poll() is None, log_path.read_text()
            assert time.monotonic() < deadline, "agentq api did not become healthy"
            time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=30)


def _healthy(base: str) -> bool:
    try:
        return httpx.get(base + "/health", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


@pytest.fixture
async def client(cluster, broker, monkeypatch):
    from worker.client import AgentqClient

    monkeypatch.setenv("AGENTQ_REDIS_URL", cluster.url)  # the test apps' side-effect counters
    monkeypatch.setenv("AGENTQ_BROKER_URL", broker.url)
    client = AgentqClient(cluster.url)
    yield client
    await client.aclose()


def _users_on_every_master(app: str, prefix: str) -> list[str]:
    """One user id (``prefix-<n>``) per master: the first whose hash slot that master serves."""
    masters = slot_ranges(3)
    chosen: dict[int, str] = {}
    candidate = 0
    while len(chosen) < len(masters):
        user = f"{prefix}-{candidate}"
        slot = key_slot(keys.user_tag(app, user).encode())
        chosen.setdefault(next(n for n, slots in enumerate(masters) if slot in slots), user)
        candidate += 1
    return [chosen[n] for n in range(len(masters))]


async def _approve_and_finish(client, user: str) -> tuple[str, object, list]:
    session = await client.create_session("approval", user)
    invocation_id = await client.enqueue("approval", user, session.id, "Please pay 100")
    record = await _settled(client, invocation_id, "parked")
    [pending] = record.pending_calls
    assert (pending.name, pending.args) == ("ask_for_approval", {"amount": 100})
    position = await client.stream_position(invocation_id)
    await client.respond(invocation_id, [
        types.FunctionResponse(id=pending.id, name="ask_for_approval", response={"approved": True})])
    record = await _settled(client, invocation_id, "completed")
    resumed = await _events(client, invocation_id, after=position)
    session = await client.session_service.get_session(app_name="approval", user_id=user, session_id=session.id)
    return invocation_id, record, [_statuses(resumed), session, pending]


async def test_on_a_cluster_parked_invocations_of_users_on_every_master_resume_under_their_ids_and_run_each_tool_once(
        cluster, cluster_workers, client, user):
    users = _users_on_every_master("approval", user)
    outcomes = await asyncio.gather(*(_approve_and_finish(client, u) for u in users))
    for invocation_id, record, (resumed, session, pending) in outcomes:
        assert (record.id, record.status, record.pending_calls, record.error) == (invocation_id, "completed", [], None)
        assert resumed == ["queued", "running", "completed"]
        assert {event.invocation_id for event in session.events} == {invocation_id}
        assert _said(session) == [
            "Please pay 100", ["ask_for_approval"], ["ask_for_approval"], ["pay"], ["pay"], "Paid 100."]
        [pay_call] = [c for e in session.events for c in e.get_function_calls() if c.name == "pay"]
        assert await _side_effects(client, invocation_id) == {
            f"ask_for_approval:{pending.id}": "1", f"pay:{pay_call.id}": "1"}
    inspector = RedisCluster(host="127.0.0.1", port=cluster.nodes[0].port, decode_responses=True)
    try:
        homes = {inspector.get_node_from_key(keys.invocation("approval", u, invocation_id)).port
                 for u, (invocation_id, _, _) in zip(users, outcomes, strict=True)}
    finally:
        inspector.close()
    assert homes == {node.port for node in cluster.nodes}


async def test_on_a_cluster_an_approved_confirmation_runs_the_tool_once(cluster_workers, client, user):
    session = await client.create_session("guarded", user)
    invocation_id = await client.enqueue("guarded", user, session.id, "wire 500")
    record = await _settled(client, invocation_id, "parked")
    [pending] = record.pending_calls
    assert (pending.kind, pending.args["originalFunctionCall"]["args"]) == ("confirmation", {"amount": 500})
    assert await _side_effects(client, invocation_id) == {}
    await client.approve(invocation_id)
    await _settled(client, invocation_id, "completed")
    original_id = pending.args["originalFunctionCall"]["id"]
    assert await _side_effects(client, invocation_id) == {f"wire_money:{original_id}": "1"}


async def test_on_a_cluster_a_parked_call_past_its_deadline_is_answered_by_a_reaper(cluster_workers, client, user):
    session = await client.create_session("approval", user)
    invocation_id = await client.enqueue("approval", user, session.id, "Please pay 100", park_timeout=0.5)
    await _settled(client, invocation_id, "completed")
    session = await client.session_service.get_session(app_name="approval", user_id=user, session_id=session.id)
    [response] = [e for e in session.events if e.content][-2].get_function_responses()
    assert response.response == {
        "error": f"No response arrived for long-running call {response.id!r} before its deadline; it expired."}


async def test_on_a_cluster_the_inbox_pages_parked_invocations_of_users_on_every_master_newest_first(
        cluster_workers, client, user):
    from worker.records import inbox

    users = _users_on_every_master("approval", user + "-inbox")
    parked = []
    for each in users:  # one after the other: creation times, and so the inbox's order, follow this list
        session = await client.create_session("approval", each)
        invocation_id = await client.enqueue("approval", each, session.id, "Please pay 100")
        await _settled(client, invocation_id, "parked")
        parked.append(invocation_id)
    pairs = [("approval", each) for each in users]
    redis = client._store.redis
    first, total = await inbox.parked_page(redis, pairs, page_size=2)
    second, _ = await inbox.parked_page(redis, pairs, page_size=2, page_token=first.next_page_token)
    assert total == 3 and second.next_page_token is None
    assert [r.id for r in first.items + second.items] == parked[::-1]
    before = await inbox.fingerprint(redis, pairs)
    [pending] = (await client.get(parked[0])).pending_calls
    await client.respond(parked[0], [types.FunctionResponse(id=pending.id, name="ask_for_approval",
                                                            response={"approved": True})])
    await _settled(client, parked[0], "completed")
    after = await inbox.fingerprint(redis, pairs)
    assert before[0] == 3 and after[0] == 2 and before[1] != after[1]


async def test_on_a_cluster_a_worker_killed_mid_invocation_is_taken_over_and_each_tool_runs_once(
        cluster_workers, client, user):
    session = await client.create_session("slow", user)
    invocation_id = await client.enqueue("slow", user, session.id, "go")
    # its lease expires; a reaper finds it in the user's shard of lease_expiries
    victim = await _kill_after_two_tool_answers(client, cluster_workers, invocation_id)
    record = await _settled(client, invocation_id, "completed", timeout=60)
    assert record.attempts == 2 and record.worker != victim
    session = await client.session_service.get_session(app_name="slow", user_id=user, session_id=session.id)
    assert _said(session) == ["go"] + [["step"]] * (2 * STEPS) + [f"all {STEPS} steps done"]
    assert sorted((await _side_effects(client, invocation_id)).values()) == ["1"] * STEPS
    assert session.events[-1].text() == f"all {STEPS} steps done"
    assert [e["id"] for e in _committed(await _events(client, invocation_id))] == [e.id for e in session.events]


async def test_on_a_cluster_cancelling_one_parked_invocation_and_deleting_the_session_of_another_settles_both(
        cluster_workers, client, user):
    kept = await client.create_session("approval", user)
    doomed = await client.create_session("approval", user)
    cancelled_id = await client.enqueue("approval", user, kept.id, "Please pay 100", park_timeout=600)
    deleted_id = await client.enqueue("approval", user, doomed.id, "Please pay 200", park_timeout=600)
    for invocation_id in (cancelled_id, deleted_id):
        await _settled(client, invocation_id, "parked")
    shard = client._store.shard(await client._store.locate(cancelled_id))

    async def deadlines_of_both():
        members = await client._store.redis.zrange(keys.call_deadlines(shard), 0, -1)
        return sorted(member.split()[0] for member in members if member.split()[0] in (cancelled_id, deleted_id))

    assert await deadlines_of_both() == sorted([cancelled_id, deleted_id])  # both parked calls have a deadline
    record = await client.cancel(cancelled_id, "changed my mind")
    assert (record.status, record.cancel_reason, record.pending_calls) == ("cancelled", "changed my mind", [])
    assert await client.delete_session("approval", user, doomed.id) == [deleted_id]
    record = await client.get(deleted_id)
    assert (record.status, record.pending_calls) == ("cancelled", [])
    assert await client.session_service.get_session(app_name="approval", user_id=user, session_id=doomed.id) is None
    assert await deadlines_of_both() == []


async def test_on_a_cluster_a_session_cancel_settles_its_parked_and_queued_invocations_in_one_step(
        cluster_workers, client, user):
    """lua/invocations/cancel_session.lua on a Cluster: every key it writes is in the user's slot (the reaper's
    sets of the user's shard), and the app's audit index, another slot, is written after."""
    session = await client.create_session("approval", user)
    parked = await client.enqueue("approval", user, session.id, "Please pay 100", park_timeout=600)
    await _settled(client, parked, "parked")
    queued = await client.enqueue("approval", user, session.id, "Please pay 200")
    shard = client._store.shard(await client._store.locate(parked))
    cancelled = await client.cancel_session("approval", user, session.id, "closing the case",
                                            actor={"principal": "key:ops", "client": "10.0.0.9"})
    records = [await client.get(invocation_id) for invocation_id in (parked, queued)]
    reaper_sets = [await client._store.redis.zrange(key, 0, -1) for key in (
        keys.dispatch_due(shard), keys.lease_expiries(shard), keys.call_deadlines(shard))]
    audited = await client._store.redis.zrange(keys.app_audit("approval"), 0, -1)
    assert sorted(cancelled) == sorted([parked, queued])
    assert [(r.status, r.cancel_reason, r.audit[-1].principal) for r in records] == [
        ("cancelled", "closing the case", "key:ops")] * 2
    assert [member for found in reaper_sets for member in found if parked in member or queued in member] == []
    assert {json.loads(member)[1] for member in audited} >= {parked, queued}


def test_a_worker_on_a_cluster_store_without_a_broker_of_its_own_is_refused_naming_the_setting(cluster):
    env = {name: value for name, value in os.environ.items() if name != "AGENTQ_BROKER_URL"}
    result = subprocess.run(
        [sys.executable, "-m", "agentq.cli", "worker", "--name", "no-broker"], cwd=ROOT, capture_output=True,
        text=True, timeout=60, env={**env, "AGENTQ_REDIS_URL": cluster.url, "AGENTQ_APPS": APPS,
                                    "PYTHONPATH": str(ROOT)})
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"agentq worker: the Celery broker cannot be the Redis Cluster {cluster.url!r} (kombu's commands cross hash "
        "slots): set AGENTQ_BROKER_URL to a plain redis:// or sentinel:// URL"]


async def test_on_a_cluster_the_approval_flow_runs_over_http(cluster_api, cluster_workers, user):
    from api.streams.sse_client import read_frames

    async def frames(http, invocation_id, after=None):
        headers = {"Last-Event-ID": after} if after else {}
        async with http.stream("GET", f"/invocations/{invocation_id}/events", headers=headers) as response:
            assert response.status_code == 200
            return [frame async for frame in read_frames(response)]

    async with httpx.AsyncClient(base_url=cluster_api, timeout=30) as http:
        created = await http.post(f"/apps/approval/users/{user}/sessions", json={})
        session_id = created.json()["id"]
        enqueued = await http.post(f"/apps/approval/users/{user}/sessions/{session_id}/invocations",
                                   json={"newMessage": {"role": "user", "parts": [{"text": "Please pay 100"}]}})
        invocation_id = enqueued.json()["invocationId"]
        first = await frames(http, invocation_id)
        parked = (await http.get(f"/invocations/{invocation_id}")).json()
        inbox = (await http.get(f"/apps/approval/users/{user}/invocations", params={"status": "parked"})).json()
        [call] = parked["pendingCalls"]
        answer = {"functionResponses": [{"id": call["id"], "name": call["name"], "response": {"approved": True}}]}
        accepted = await http.post(f"/invocations/{invocation_id}/function-responses", json=answer)
        again = await http.post(f"/invocations/{invocation_id}/function-responses", json=answer)
        second = await frames(http, invocation_id, after=first[-1].id)
        final = (await http.get(f"/invocations/{invocation_id}")).json()
    assert (created.status_code, enqueued.status_code, accepted.status_code, again.status_code) == (200, 202, 202, 409)
    assert [f.data["status"] for f in first if f.event == "status"] == ["queued", "running", "parked"]
    assert (parked["status"], call["name"], call["args"]) == ("parked", "ask_for_approval", {"amount": 100})
    assert [item["invocationId"] for item in inbox["invocations"]] == [invocation_id]
    assert [f.data["status"] for f in second if f.event == "status"] == ["queued", "running", "completed"]
    assert {f.data.get("invocationId") for f in second if f.event == "message"} == {invocation_id}
    assert (final["status"], final["pendingCalls"]) == ("completed", [])
