"""Poison invocations: a tool that kills its worker process costs at most AGENTQ_MAX_ATTEMPTS workers, then the
invocation fails saying why and is never handed to a worker again."""

from __future__ import annotations

import pytest

from runtime.errors import UsageError
from runtime.redis_store.launcher import EmbeddedRedis
from tests.worker.chaos_apps import crashes_key
from tests.worker.chaos_pool import ChaosPool, settle_all
from worker.attempts import max_attempts_from_env
from worker.client import AgentqClient


@pytest.fixture(scope="module")
def chaos(tmp_path_factory):
    server = EmbeddedRedis(tmp_path_factory.mktemp("poison-redis")).start()
    pool = ChaosPool(server.url, tmp_path_factory.mktemp("poison-logs"), AGENTQ_MAX_ATTEMPTS="2")
    yield pool
    pool.stop_all()
    server.stop()


async def test_an_invocation_that_kills_its_workers_fails_after_max_attempts_and_the_last_worker_survives(chaos):
    chaos.ensure("p1", "p2", "p3")
    async with AgentqClient(chaos.redis_url) as client:
        session = await client.create_session("poison", "u1")
        invocation_id = await client.enqueue("poison", "u1", session.id, "go")
        assert await settle_all(client, [invocation_id], timeout=60) == {invocation_id: "failed"}
        record = await client.get(invocation_id)
        crashes = await client._store.redis.get(crashes_key(invocation_id))
        statuses = [entry.data for entry in [e async for e in client.events(invocation_id)] if entry.kind == "status"]

        assert (crashes, len(chaos.alive())) == ("2", 1)  # os._exit, then SIGKILL; the third worker lives
        assert record.error.type == "PoisonInvocationError"
        assert record.error.message == (
            f"invocation {invocation_id!r} was not run again: its last 2 runs each ended with their worker process "
            "gone (killed, crashed or out of memory) before it settled; AGENTQ_MAX_ATTEMPTS is 2")
        assert record.attempts == 3  # two runs cut off, and the claim that failed it
        assert statuses[-1] == {"status": "failed", "detail": {
            "error": {"type": "PoisonInvocationError", "message": record.error.message},
            "cutOffRuns": 2, "maxAttempts": 2}}

        # never handed out again: a duplicate run job is dropped, and the survivor keeps serving
        await client._store.dispatch_next(invocation_id)
        other = await client.create_session("steps", "u1")
        healthy = await client.enqueue("steps", "u1", other.id, "go on")
        assert await settle_all(client, [healthy], timeout=30) == {healthy: "completed"}
        assert (await client.get(invocation_id)).attempts == 3
        assert await client._store.redis.get(crashes_key(invocation_id)) == "2"


def test_max_attempts_is_read_from_the_environment_and_nonsense_is_refused_naming_it():
    assert max_attempts_from_env({}) == 3
    assert max_attempts_from_env({"AGENTQ_MAX_ATTEMPTS": "5"}) == 5
    for bad in ("0", "-1", "three"):
        with pytest.raises(UsageError) as caught:
            max_attempts_from_env({"AGENTQ_MAX_ATTEMPTS": bad})
        assert str(caught.value) == f"AGENTQ_MAX_ATTEMPTS={bad!r} is not a whole number of attempts of at least 1"
