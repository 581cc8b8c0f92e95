"""Poison invocations: a tool that kills its process takes down one shared worker at most; after that it runs
alone in quarantine processes its workers fork, whose crashes are charged to it, and it fails after
AGENTQ_MAX_ATTEMPTS of them, naming the evidence. The workers that forked the quarantine processes live on."""

from __future__ import annotations

import pytest

from runtime.errors import UsageError
from runtime.redis_store.launcher import EmbeddedRedis
from tests.worker.chaos_apps import crashes_key
from tests.worker.chaos_pool import ChaosPool, settle_all
from worker.client import AgentqClient
from worker.fleet.attempts import (
    Crash,
    CrashEvidence,
    max_attempts_from_env,
    poison_failure,
    quarantine_after_from_env,
    should_isolate,
)


@pytest.fixture(scope="module")
def chaos(tmp_path_factory):
    server = EmbeddedRedis(tmp_path_factory.mktemp("poison-redis")).start()
    pool = ChaosPool(server.url, tmp_path_factory.mktemp("poison-logs"), AGENTQ_MAX_ATTEMPTS="2")
    yield pool
    pool.stop_all()
    server.stop()


@pytest.mark.timeout(120)
async def test_a_poison_invocation_kills_one_worker_then_fails_in_quarantine_and_the_other_workers_live(chaos):
    chaos.ensure("p1", "p2", "p3")
    pids = {name: process.pid for name, process in chaos.processes.items()}
    async with AgentqClient(chaos.redis_url) as client:
        session = await client.create_session("poison", "u1")
        invocation_id = await client.enqueue("poison", "u1", session.id, "go")
        assert await settle_all(client, [invocation_id], timeout=90) == {invocation_id: "failed"}
        record = await client.get(invocation_id)
        crashes = await client._store.redis.get(crashes_key(invocation_id))
        statuses = [entry.data for entry in [e async for e in client.events(invocation_id)] if entry.kind == "status"]
        alive = chaos.alive()
        print("workers alive:", alive, "crash evidence:", statuses[-1]["detail"]["crashes"])

        # one shared worker died (os._exit); two quarantine processes were SIGKILLed, their workers survived
        dead = sorted(set(pids) - set(alive))
        assert (crashes, len(dead)) == ("3", 1)
        assert all(chaos.processes[name].pid == pids[name] for name in alive)
        isolated_under = [crash["worker"] for crash in statuses[-1]["detail"]["crashes"][1:]]
        assert set(isolated_under) <= set(alive)
        expected = (
            f"invocation {invocation_id!r} failed: it crashed the quarantine process running it alone 2 times "
            f"(worker {isolated_under[0]!r}: killed by SIGKILL; worker {isolated_under[1]!r}: killed by SIGKILL), "
            f"after 1 worker process running it among others died ({dead[0]!r}); AGENTQ_MAX_ATTEMPTS is 2")
        assert (record.error.type, record.error.message) == ("PoisonInvocationError", expected)
        assert record.attempts == 4  # shared, alone, alone, and the claim that failed it
        assert statuses[-1] == {"status": "failed", "detail": {
            "error": {"type": "PoisonInvocationError", "message": expected},
            "crashes": [{"worker": dead[0], "isolated": False},
                        *[{"worker": name, "isolated": True, "exit": "killed by SIGKILL"} for name in isolated_under]],
            "maxAttempts": 2}}

        # never handed out again: a duplicate run job is dropped, and the survivors keep serving
        await client._store.dispatch_next(invocation_id)
        other = await client.create_session("steps", "u1")
        healthy = await client.enqueue("steps", "u1", other.id, "go on")
        assert await settle_all(client, [healthy], timeout=30) == {healthy: "completed"}
        assert (await client.get(invocation_id)).attempts == 4
        assert await client._store.redis.get(crashes_key(invocation_id)) == "3"


def test_max_attempts_and_quarantine_after_are_read_from_the_environment_and_nonsense_is_refused_naming_them():
    assert (max_attempts_from_env({}), quarantine_after_from_env({})) == (3, 1)
    assert max_attempts_from_env({"AGENTQ_MAX_ATTEMPTS": "5"}) == 5
    assert quarantine_after_from_env({"AGENTQ_QUARANTINE_AFTER": "2"}) == 2
    for bad in ("0", "-1", "three"):
        with pytest.raises(UsageError) as caught:
            max_attempts_from_env({"AGENTQ_MAX_ATTEMPTS": bad})
        assert str(caught.value) == f"AGENTQ_MAX_ATTEMPTS={bad!r} is not a whole number of attempts of at least 1"
        with pytest.raises(UsageError) as caught:
            quarantine_after_from_env({"AGENTQ_QUARANTINE_AFTER": bad})
        assert str(caught.value) == (
            f"AGENTQ_QUARANTINE_AFTER={bad!r} is not a whole number of worker deaths of at least 1")


def test_worker_deaths_only_make_an_invocation_a_suspect_and_only_crashes_in_quarantine_fail_it():
    shared = Crash(worker="w1", isolated=False)
    alone = Crash(worker="w2", isolated=True, exit="exit code 3")
    many_deaths = CrashEvidence(suspected=7, log=(shared,) * 7)
    assert poison_failure("e-1", many_deaths, max_attempts=1) is None
    assert (should_isolate(CrashEvidence(), 1), should_isolate(many_deaths, 1), should_isolate(many_deaths, 8)) == (
        False, True, False)
    assert should_isolate(CrashEvidence(crashes=1, log=(alone,)), 8)  # once it crashed alone, it stays alone
    assert poison_failure("e-1", CrashEvidence(crashes=1, log=(alone,)), max_attempts=2) is None
    assert poison_failure("e-1", CrashEvidence(crashes=1, log=(alone,)), max_attempts=1) == {
        "error": {"type": "PoisonInvocationError", "message": (
            "invocation 'e-1' failed: it crashed the quarantine process running it alone 1 time "
            "(worker 'w2': exit code 3); AGENTQ_MAX_ATTEMPTS is 1")},
        "crashes": [{"worker": "w2", "isolated": True, "exit": "exit code 3"}], "maxAttempts": 1}
