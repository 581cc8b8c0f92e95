"""A run writes only under its lease, and fails in words that name what failed, on real ``agentq worker`` processes.

- An AgentTool's child session is written under its parent invocation's lease: the parent completes with the
  child's real answer, no "lease lost", no suspicion, no quarantine; one paused on a confirmation resumes under
  the next claim's lease, its tool journaled as a call of the parent invocation.
- A tool that raises fails the invocation as a ToolError naming the tool and the exception, with one traceback
  in the worker's log.
- An artifact saved after the invocation was cancelled (or rolled back) is refused and not stored.
- A write refused while the run still holds its lease fails the invocation at once: it is not a lost lease, and
  no reaper takes it for a dead worker.
"""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path

import pytest

from tests.worker.conftest import ROOT, WorkerPool
from tests.worker.fence_apps import go_key, outcome_key, started_key
from tests.worker.test_worker_e2e import _settled

APPS = ",".join(f"tests.worker.fence_apps:{name}" for name in (
    "translating_app", "banking_app", "failing_tool_app", "late_artifact_app", "meddling_app"))
WORKER = "fence-w1"
LOG_RECORD = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} ")


class FenceWorkers(WorkerPool):
    """A worker serving only this module's apps, on the package's redis-server."""

    def env(self) -> dict[str, str]:
        return {**os.environ, "AGENTQ_REDIS_URL": self.redis_url, "AGENTQ_APPS": APPS, "PYTHONPATH": str(ROOT)}

    def log(self) -> str:
        return (self.log_dir / f"{WORKER}.log").read_text()


@pytest.fixture(scope="module")
def fence_workers(worker_redis, tmp_path_factory):
    pool = FenceWorkers(worker_redis.url, Path(tmp_path_factory.mktemp("fence-worker-logs")))
    pool.ensure(WORKER)
    yield pool
    pool.stop_all()


async def _record_fields(client, invocation_id: str) -> dict[str, str]:
    store = client._store
    return await store.fields(store.record_key(invocation_id, await store.locate(invocation_id)))


async def _log_once_it_mentions(workers: FenceWorkers, text: str, timeout: float = 15.0) -> str:
    """The worker's log as soon as it holds ``text`` (or as it stands after ``timeout`` seconds)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while text not in (log := workers.log()) and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.05)
    return log


def _lines_about(log: str, invocation_id: str) -> list[str]:
    return [line for line in log.splitlines() if invocation_id in line]


async def test_an_agent_tool_on_a_worker_answers_under_its_parents_lease_without_losing_it(
        fence_workers, client, user):
    session = await client.create_session("translating", user)
    invocation_id = await client.enqueue("translating", user, session.id, "hello")
    record = await _settled(client, invocation_id, "completed")
    assert (record.status, record.error) == ("completed", None)
    session = await client.session_service.get_session(app_name="translating", user_id=user, session_id=session.id)
    [answer] = [r for e in session.events for r in e.get_function_responses()]
    assert (answer.name, answer.response) == ("translator", {"result": "Bonjour"})
    assert session.events[-1].content.parts[0].text == "In French: Bonjour"
    fields = await _record_fields(client, invocation_id)
    assert (fields.get("suspected", "0"), fields.get("crashes", "0"), fields["attempts"]) == ("0", "0", "1")
    lines = _lines_about(fence_workers.log(), invocation_id)
    assert [line for line in lines if "lease lost" in line or "quarantine" in line] == []
    # the child session went with its answer: only the parent's session is left
    listed = await client.session_service.list_sessions(app_name="translating", user_id=user)
    assert [s.id for s in listed.sessions] == [session.id]


async def test_an_agent_tool_paused_on_a_confirmation_resumes_under_the_next_claims_lease(
        fence_workers, client, user):
    session = await client.create_session("banking", user)
    invocation_id = await client.enqueue("banking", user, session.id, "send 500 to bo")
    record = await _settled(client, invocation_id, "parked")
    [pending] = record.pending_calls
    assert (pending.kind, pending.args["originalFunctionCall"]["name"]) == ("confirmation", "send_money")
    await client.approve(invocation_id)
    await _settled(client, invocation_id, "completed")
    session = await client.session_service.get_session(app_name="banking", user_id=user, session_id=session.id)
    assert session.events[-1].content.parts[0].text == (
        "Done. Sent: {'status': 'sent', 'amount': 500, 'to': 'bo'}")
    fields = await _record_fields(client, invocation_id)
    assert (fields.get("suspected", "0"), fields["attempts"]) == ("0", "2")
    lines = _lines_about(fence_workers.log(), invocation_id)
    assert [line for line in lines if "lease lost" in line or "quarantine" in line] == []


async def test_a_tool_that_raises_fails_the_invocation_as_a_tool_error_naming_the_tool_with_one_traceback(
        fence_workers, client, user):
    session = await client.create_session("failing_tool", user)
    invocation_id = await client.enqueue("failing_tool", user, session.id, "send -5")
    record = await client.wait(invocation_id, timeout=30)
    assert record.status == "failed"
    assert record.error.model_dump() == {
        "type": "ToolError", "message": "tool 'transfer_money' raised ValueError: amount must be positive, got -5"}
    # the worker logs the failure just after it writes the record: wait for that line, not only the record
    log = (await _log_once_it_mentions(fence_workers, f"invocation {invocation_id}: failed")).splitlines()
    [raised] = [i for i, line in enumerate(log) if f"invocation {invocation_id}: tool " in line]
    assert log[raised].endswith(f"invocation {invocation_id}: tool 'transfer_money' raised ValueError")
    record_end = next((i for i in range(raised + 1, len(log)) if LOG_RECORD.match(log[i])), len(log))
    traceback = log[raised + 1 : record_end]
    assert (traceback[0], traceback[-1]) == (
        "Traceback (most recent call last):", "ValueError: amount must be positive, got -5")
    [failed] = [i for i, line in enumerate(log) if f"invocation {invocation_id}: failed" in line]
    assert log[failed].split(": ", 1)[1] == (f"invocation {invocation_id}: failed: ToolError: tool 'transfer_money' "
                                             "raised ValueError: amount must be positive, got -5")
    assert sum(line.startswith("Traceback") for line in log[raised:failed]) == 1  # once, not for each step


async def test_an_artifact_saved_after_its_invocation_was_cancelled_is_refused_and_not_stored(
        fence_workers, client, user):
    session = await client.create_session("late_artifact", user)
    invocation_id = await client.enqueue("late_artifact", user, session.id, "write the report")
    redis = client._store.redis
    assert await redis.blpop([started_key(invocation_id)], timeout=30) is not None
    await client.cancel(invocation_id, "no longer needed")
    assert await _outcome(redis, invocation_id) == "fenced"
    assert await client.artifact_service.load_artifact(
        app_name="late_artifact", user_id=user, session_id=session.id, filename="report.txt") is None
    assert await client.artifact_service.list_artifact_keys(
        app_name="late_artifact", user_id=user, session_id=session.id) == []
    assert (await client.get(invocation_id)).status == "cancelled"


async def _outcome(redis, invocation_id: str) -> str:
    """Let the invocation's tool save its artifact; what became of the save."""
    await redis.rpush(go_key(invocation_id), "go")
    _, outcome = await redis.blpop([outcome_key(invocation_id)], timeout=30)
    return outcome.decode() if isinstance(outcome, bytes) else outcome


async def test_an_artifact_saved_by_a_run_rolled_back_by_a_second_message_is_refused_and_not_stored(
        fence_workers, client, user):
    session = await client.create_session("late_artifact", user)
    first = await client.enqueue("late_artifact", user, session.id, "write the report")
    redis = client._store.redis
    assert await redis.blpop([started_key(first)], timeout=30) is not None
    second = await client.enqueue("late_artifact", user, session.id, "write it again", strategy="rollback")
    assert await _outcome(redis, first) == "fenced"
    assert await redis.blpop([started_key(second)], timeout=30) is not None
    assert await _outcome(redis, second) == "saved"
    await _settled(client, second, "completed")
    versions = await client.artifact_service.list_artifact_versions(
        app_name="late_artifact", user_id=user, session_id=session.id, filename="report.txt")
    loaded = [await client.artifact_service.load_artifact(app_name="late_artifact", user_id=user,
                                                          session_id=session.id, filename="report.txt", version=v.version)
              for v in versions]
    assert [part.text for part in loaded] == [f"report of {second}"]
    assert (await client.get(first)).status == "cancelled"


async def test_a_write_refused_while_the_lease_is_held_fails_the_invocation_instead_of_quarantining_it(
        fence_workers, client, user):
    session = await client.create_session("meddling", user)
    invocation_id = await client.enqueue("meddling", user, session.id, "leave bo a note")
    record = await client.wait(invocation_id, timeout=30)
    assert record.status == "failed"
    assert record.error.type == "FencedOutError"
    # bo's session has a token of its own from its creation (the server clock in ms), never the run's
    assert re.search(r"is not the current one \('\d+'\), checked at 'agentq:\{meddling/bo-of-", record.error.message)
    fields = await _record_fields(client, invocation_id)
    assert (fields.get("suspected", "0"), fields["attempts"]) == ("0", "1")
    lines = _lines_about(fence_workers.log(), invocation_id)
    assert [line for line in lines if "lease lost" in line or "quarantine" in line] == []
