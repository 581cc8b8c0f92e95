"""Double texting with real worker processes: each strategy under 20 concurrent senders to one session.

The senders share one client and run concurrently on its loop: their script calls interleave in Redis as those
of separate API processes would (each strategy is decided in one script call, worker.records.double_texting).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import subprocess
import sys

import pytest

from runtime.events.rewinds import live_events
from tests.worker.conftest import ROOT
from worker.records.rewind import SessionBusyError

SENDERS = 20
pytestmark = pytest.mark.timeout(180)


async def _send_all(client, app: str, user: str, session_id: str, strategy: str) -> list[str | BaseException]:
    """SENDERS concurrent enqueues, message k with state ``{"topic": "k"}``: ids, or the errors raised."""
    return await asyncio.gather(*(
        client.enqueue(app, user, session_id, f"message {k}", {"topic": str(k)}, strategy=strategy)
        for k in range(SENDERS)), return_exceptions=True)


async def _running_with_a_committed_step(client, app: str, user: str) -> tuple[str, str]:
    """A session whose first invocation (state ``{"topic": "first"}``) is running and has committed a tool step."""
    session = await client.create_session(app, user)
    first = await client.enqueue(app, user, session.id, "work slowly", {"topic": "first"})
    for _ in range(600):
        stored = await client.session_service.get_session(app_name=app, user_id=user, session_id=session.id)
        if any(event.get_function_responses() for event in stored.events if event.invocation_id == first):
            return session.id, first
        await asyncio.sleep(0.05)
    raise AssertionError(f"invocation {first} committed no step: {(await client.get(first)).status}")


async def _statuses(client, ids: list[str]) -> dict[str, str]:
    return {invocation_id: (await client.get(invocation_id)).status for invocation_id in ids}


async def test_twenty_concurrent_default_senders_all_run_one_at_a_time_in_arrival_order(workers, client, user):
    session = await client.create_session("weather", user)
    sent = await _send_all(client, "weather", user, session.id, "enqueue")
    records = [await client.wait(invocation_id, timeout=120) for invocation_id in sent]
    assert {record.status for record in records} == {"completed"}
    queued_at = {record.id: tuple(map(int, record.first_entry.split("-"))) for record in records}
    arrival = sorted(sent, key=queued_at.__getitem__)
    stored = await client.session_service.get_session(app_name="weather", user_id=user, session_id=session.id)
    ran = [invocation_id for invocation_id, _ in itertools.groupby(event.invocation_id for event in stored.events)]
    assert ran == arrival  # one at a time in arrival order: each invocation's events are contiguous
    assert len([event for event in stored.events if event.author != "user" and event.is_final_response()]) == SENDERS


async def test_of_twenty_concurrent_reject_senders_exactly_one_is_accepted_and_runs(workers, client, user):
    session = await client.create_session("slow", user)
    sent = await _send_all(client, "slow", user, session.id, "reject")
    accepted = [outcome for outcome in sent if isinstance(outcome, str)]
    refused = [outcome for outcome in sent if not isinstance(outcome, str)]
    assert len(accepted) == 1 and len(refused) == SENDERS - 1
    assert {type(error) for error in refused} == {SessionBusyError}
    assert (await client.wait(accepted[0], timeout=120)).status == "completed"
    # idle again: the next reject sender is accepted
    later = await client.enqueue("slow", user, session.id, "again", strategy="reject")
    assert (await client.wait(later, timeout=120)).status == "completed"


async def test_twenty_concurrent_interrupt_senders_leave_one_live_run_and_every_interrupted_one_keeps_its_events(
        workers, client, user):
    session_id, first = await _running_with_a_committed_step(client, "slow", user)
    sent = await _send_all(client, "slow", user, session_id, "interrupt")
    assert all(isinstance(outcome, str) for outcome in sent), sent
    statuses = await _statuses(client, [first, *sent])
    live = [invocation_id for invocation_id, status in statuses.items() if status != "cancelled"]
    assert len(live) == 1 and live[0] in sent and statuses[first] == "cancelled"
    survivor = await client.wait(live[0], timeout=120)
    assert survivor.status == "completed"
    print(f"interrupt: survivor was sender {sent.index(live[0])} of {SENDERS}")
    stored = await client.session_service.get_session(app_name="slow", user_id=user, session_id=session_id)
    kept = [event for event in stored.events if event.invocation_id == first]
    assert kept and kept[0].author == "user" and any(event.get_function_responses() for event in kept)
    assert live_events(stored.events) is stored.events  # nothing was rewound
    assert stored.events[-1].invocation_id == live[0] and stored.events[-1].is_final_response()
    assert stored.state["topic"] == str(sent.index(live[0]))
    cancelled = [await client.get(invocation_id) for invocation_id in sent if invocation_id != live[0]]
    assert {record.status for record in cancelled} == {"cancelled"}


async def test_twenty_concurrent_rollback_senders_leave_one_run_on_a_session_put_back_to_before_the_first(
        workers, client, user):
    session_id, first = await _running_with_a_committed_step(client, "slow", user)
    sent = await _send_all(client, "slow", user, session_id, "rollback")
    assert all(isinstance(outcome, str) for outcome in sent), sent
    statuses = await _statuses(client, [first, *sent])
    live = [invocation_id for invocation_id, status in statuses.items() if status != "cancelled"]
    assert len(live) == 1 and live[0] in sent and statuses[first] == "cancelled"
    survivor = await client.wait(live[0], timeout=120)
    assert survivor.status == "completed"
    stored = await client.session_service.get_session(app_name="slow", user_id=user, session_id=session_id)
    shown = live_events(stored.events)
    assert {event.invocation_id for event in shown} == {live[0]}  # the first run's events are taken back
    assert any(event.invocation_id == first for event in stored.events)  # (stored, as ADK keeps them)
    assert shown[-1].is_final_response()
    assert stored.state["topic"] == str(sent.index(live[0]))



def _agentq(redis_url: str, *args: str) -> subprocess.CompletedProcess:
    wire = [] if args[0] == "rewind" else ["--json"]  # the wire form (rewind prints it anyway)
    return subprocess.run([sys.executable, "-m", "agentq.cli", *args, *wire], cwd=ROOT, capture_output=True, text=True,
                          timeout=60, env={**os.environ, "AGENTQ_REDIS_URL": redis_url, "PYTHONPATH": str(ROOT)})


def _lines(result: subprocess.CompletedProcess) -> list[dict]:
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_the_terminal_enqueues_with_a_strategy_and_rewinds_a_session_once_nothing_runs_on_it(workers, user):
    url = workers.redis_url
    [first, *_] = _lines(_agentq(url, "enqueue", "approval", user, "Please pay 100", "--follow"))
    session_id = first["sessionId"]
    [second, *entries] = _lines(_agentq(url, "enqueue", "approval", user, "Please pay 5", "--session", session_id,
                                        "--strategy", "rollback", "--follow"))
    assert [e["data"]["status"] for e in entries if e["kind"] == "status"][-1] == "parked"
    [record] = _lines(_agentq(url, "get", first["invocationId"]))
    assert (record["status"], record["cancelReason"]) == (
        "cancelled", f"interrupted by invocation {second['invocationId']} (multitaskStrategy rollback)")
    busy = _agentq(url, "rewind", "approval", user, session_id, second["invocationId"])
    assert busy.returncode == 1 and "cannot be rewound while invocations are queued, running or parked" in busy.stderr
    _lines(_agentq(url, "cancel", second["invocationId"]))
    [rewound] = _lines(_agentq(url, "rewind", "approval", user, session_id, second["invocationId"]))
    assert (rewound["sessionId"], rewound["rewoundBefore"]) == (session_id, second["invocationId"])
    bogus = _agentq(url, "enqueue", "approval", user, "hi", "--strategy", "later")
    assert bogus.returncode == 2
    assert "unknown multitask strategy 'later'; allowed: enqueue, reject, interrupt, rollback" in bogus.stderr
