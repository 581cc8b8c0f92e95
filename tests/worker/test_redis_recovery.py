"""Redis trouble while invocations run: dropped connections and a killed-and-restarted server are ridden out by
real worker processes, and every invocation settles completed."""

from __future__ import annotations

import asyncio
import os
import signal
import time

import httpx
import pytest
import redis

from runtime.redis_store.launcher import EmbeddedRedis, free_port
from tests.worker.chaos_pool import ChaosPool, settle_all, start_api, stop_api
from worker.client import AgentqClient

BATCH = 30


@pytest.fixture(scope="module")
def chaos(tmp_path_factory):
    server = EmbeddedRedis(tmp_path_factory.mktemp("recovery-redis")).start()
    pool = ChaosPool(server.url, tmp_path_factory.mktemp("recovery-logs"))
    pool.server = server
    yield pool
    pool.stop_all()
    server.stop()


async def _enqueue_batch(client: AgentqClient, user: str) -> list[str]:
    ids = []
    for n in range(BATCH):
        session = await client.create_session("steps", user)
        ids.append(await client.enqueue("steps", user, session.id, f"go {n}"))
    return ids


async def test_dropped_redis_connections_during_a_batch_are_retried_and_every_invocation_completes(chaos):
    chaos.ensure("r1", "r2")
    admin = redis.Redis.from_url(chaos.redis_url)
    ids: list[str] = []
    killed = 0
    async with AgentqClient(chaos.redis_url) as client:
        # A kill cuts a command off only when one is in flight at that instant; a batch can settle before any
        # kill landed so, so batches follow one another (at most MAX_BATCHES) until one was cut off.
        for _ in range(MAX_BATCHES):
            batch = await _enqueue_batch(client, "dropped")
            ids += batch
            await _some_running(admin, batch)
            killed += await _kill_connections_until_a_command_is_cut_off(admin, chaos, batch)
            if HANDED_BACK in chaos.logs():
                break
        statuses = await settle_all(client, ids, timeout=90)
    admin.close()

    assert killed > 0
    assert statuses == dict.fromkeys(ids, "completed")
    logs = chaos.logs()
    assert HANDED_BACK in logs  # the kills did cut invocations' commands off
    assert [line for line in logs.splitlines() if ": failed:" in line] == []


HANDED_BACK = "handed back after a lost Redis command"
MIN_KILL_ROUNDS = 25
MAX_KILL_ROUNDS = 2000
MAX_BATCHES = 5


async def _kill_connections_until_a_command_is_cut_off(admin: redis.Redis, pool: ChaosPool, ids: list[str]) -> int:
    """CLIENT KILL every worker's connections (and the client's; Redis stays up), round after round, until an
    invocation was handed back after a lost command and MIN_KILL_ROUNDS went by, or the batch settled. A kill
    cuts a command off only when one is in flight at that instant, so a fixed number of rounds sometimes
    cut none. Returns the connections killed."""
    from runtime.redis_store import keys

    killed = 0
    for rounds in range(1, MAX_KILL_ROUNDS + 1):
        killed += admin.client_kill_filter(_type="normal", skipme=True)
        await asyncio.sleep(0.01)
        if rounds >= MIN_KILL_ROUNDS and HANDED_BACK in pool.logs():
            break
        statuses = admin.pipeline(transaction=False)
        for invocation_id in ids:
            statuses.hget(keys.invocation("steps", "dropped", invocation_id), "status")
        if all(status in (b"completed", b"failed") for status in statuses.execute()):
            break
    return killed


async def _some_running(admin: redis.Redis, ids: list[str]) -> None:
    from runtime.redis_store import keys

    for _ in range(100):
        records = [admin.hget(keys.invocation("steps", "dropped", i), "status") for i in ids]
        if b"running" in records:
            return
        await asyncio.sleep(0.02)


@pytest.fixture
def restartable(tmp_path):
    """A redis-server (AOF, appendfsync everysec) with one worker and the HTTP API on it."""
    server = EmbeddedRedis(tmp_path / "redis").start()
    pool = ChaosPool(server.url, tmp_path)
    try:
        pool.ensure("k1")
        port = free_port()
        api = start_api(pool, port, tmp_path / "api.log")
        try:
            yield server, pool, f"http://127.0.0.1:{port}"
        finally:
            stop_api(api)
    finally:
        pool.stop_all()
        server.stop()


def _sigkill_redis(server: EmbeddedRedis) -> None:
    with redis.Redis.from_url(server.url) as admin:
        pid = admin.info("server")["process_id"]
    os.kill(pid, signal.SIGKILL)
    while server.running:
        time.sleep(0.01)


async def test_redis_killed_mid_load_and_restarted_on_its_aof_every_accepted_invocation_completes(restartable):
    server, pool, base = restartable
    async with AgentqClient(server.url) as client:
        sessions = [(await client.create_session("steps", "killed")).id for _ in range(40)]
    answers: list[httpx.Response] = []
    accepted: list[str] = []
    body = {"newMessage": {"role": "user", "parts": [{"text": "go"}]}}
    async with httpx.AsyncClient(base_url=base, timeout=10) as http:
        for n, session_id in enumerate(sessions):
            if n == 10:
                _sigkill_redis(server)
            if n == 25:
                server.start()  # same port, same AOF
            answer = await http.post(f"/apps/steps/users/killed/sessions/{session_id}/invocations", json=body)
            answers.append(answer)
            await asyncio.sleep(0.1)  # the outage lasts 1.5 s: the running invocations' commits fail meanwhile
            if answer.status_code == 202:
                accepted.append(answer.json()["invocationId"])
        unavailable = [a for a in answers if a.status_code == 503]

        assert sorted({a.status_code for a in answers}) == [202, 503]  # never a 500, never a hang (10 s timeout)
        assert {a.headers["Retry-After"] for a in unavailable} == {"1"}
        assert len(unavailable) == 15 and len(accepted) == 25
        async with AgentqClient(server.url) as client:
            assert await settle_all(client, accepted, timeout=120) == dict.fromkeys(accepted, "completed")
        answer = await http.get(f"/invocations/{accepted[0]}")
        assert (answer.status_code, answer.json()["status"]) == (200, "completed")
    logs = pool.logs()
    assert "Redis unreachable" in logs and "Redis reachable again" in logs
