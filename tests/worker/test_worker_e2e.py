"""Invocations run by real ``agentq worker`` processes on a real redis-server, end to end through the client."""

from __future__ import annotations

import asyncio

import pytest
from google.genai import types

from runtime.errors import CallNotPendingError, InvocationNotFoundError
from tests.worker.apps import STEPS, side_effects_key


async def _events(client, invocation_id, after=None):
    return [entry async for entry in client.events(invocation_id, after)]


def _committed(entries):
    return [e.data for e in entries if e.kind == "event" and not e.data.get("partial")]


def _said(session):
    """Each event with content as its text, or the names of the functions it calls or answers."""
    return [event.text() or [p.function_call.name if p.function_call else p.function_response.name
                             for p in event.content.parts] for event in session.events if event.content]


def _statuses(entries):
    return [e.data["status"] for e in entries if e.kind == "status"]


async def _side_effects(client, invocation_id):
    return await client._store.redis.hgetall(side_effects_key(invocation_id))


async def test_parked_invocation_resumes_under_same_invocation_id_and_each_tool_runs_once(workers, client, user):
    session = await client.create_session("approval", user)
    invocation_id = await client.enqueue("approval", user, session.id, "Please pay 100")
    record = await client.wait(invocation_id, timeout=30)
    assert record.status == "parked"
    [pending] = record.pending_calls
    assert (pending.name, pending.args) == ("ask_for_approval", {"amount": 100})
    first = await _events(client, invocation_id)
    assert _statuses(first) == ["queued", "running", "parked"]

    position = await client.stream_position(invocation_id)
    record = await client.respond(invocation_id, [
        types.FunctionResponse(id=pending.id, name="ask_for_approval", response={"approved": True})])
    assert record.status in ("queued", "running", "completed")
    resumed = await _events(client, invocation_id, after=position)
    assert _statuses(resumed) == ["queued", "running", "completed"]
    record = await client.get(invocation_id)
    assert (record.status, record.pending_calls, record.responses, record.error) == ("completed", [], [], None)

    session = await client.session_service.get_session(app_name="approval", user_id=user, session_id=session.id)
    assert {event.invocation_id for event in session.events} == {invocation_id}
    assert _said(session) == [
        "Please pay 100", ["ask_for_approval"], ["ask_for_approval"], ["pay"], ["pay"], "Paid 100."]
    [pay_call] = [c for e in session.events for c in e.get_function_calls() if c.name == "pay"]
    assert await _side_effects(client, invocation_id) == {
        f"ask_for_approval:{pending.id}": "1", f"pay:{pay_call.id}": "1"}
    # the whole stream read from the start holds every committed event exactly once
    assert [e["id"] for e in _committed(await _events(client, invocation_id))] == [e.id for e in session.events]

    with pytest.raises(CallNotPendingError, match=repr(pending.id)):
        await client.respond(invocation_id, [{"id": pending.id, "response": {"approved": True}}])
    with pytest.raises(InvocationNotFoundError):
        await client.respond("e-unknown", [{"id": pending.id, "response": {}}])


async def test_an_intermediate_update_resumes_for_a_status_message_and_parks_again(workers, client, user):
    session = await client.create_session("approval", user)
    invocation_id = await client.enqueue("approval", user, session.id, "Please pay 100")
    [pending] = (await client.wait(invocation_id, timeout=30)).pending_calls
    await client.respond(invocation_id, [{"id": pending.id, "response": {"status": "manager notified"},
                                          "will_continue": True}])
    record = await client.wait(invocation_id, timeout=30)
    while record.status != "parked":  # wait() may see the status before the resume was picked up
        await asyncio.sleep(0.05)
        record = await client.wait(invocation_id, timeout=30)
    assert [call.id for call in record.pending_calls] == [pending.id]
    session = await client.session_service.get_session(app_name="approval", user_id=user, session_id=session.id)
    assert _said(session)[-1] == "Approval still pending: {'status': 'manager notified'}"
    await client.respond(invocation_id, [{"id": pending.id, "response": {"approved": False}}])
    record = await _settled(client, invocation_id, "completed")
    session = await client.session_service.get_session(app_name="approval", user_id=user, session_id=session.id)
    assert _said(session)[-1] == "Not approved: {'approved': False}"


async def _kill_after_two_tool_answers(client, pool, invocation_id) -> str:
    """SIGKILL the worker running ``invocation_id`` once two of its tool answers are committed; its name."""
    seen = 0
    async for entry in client.events(invocation_id):
        if entry.kind == "event" and entry.data.get("author") == "stepper" and "functionResponse" in str(entry.data):
            seen += 1
            if seen == 2:
                break
    victim = (await client.get(invocation_id)).worker
    pool.kill(victim)
    return victim


async def _settled(client, invocation_id, status, timeout=30):
    async with asyncio.timeout(timeout):
        while True:
            record = await client.wait(invocation_id, timeout=timeout)
            if record.status == status:
                return record
            if record.status in ("completed", "failed", "cancelled"):
                raise AssertionError(f"invocation ended {record.status}: {record.error}")
            await asyncio.sleep(0.05)


async def test_answering_one_of_two_pending_calls_leaves_the_other_pending(workers, client, user):
    session = await client.create_session("two_calls", user)
    invocation_id = await client.enqueue("two_calls", user, session.id, "two questions")
    record = await client.wait(invocation_id, timeout=30)
    first, second = record.pending_calls
    assert [(c.name, c.args) for c in record.pending_calls] == [("ask", {"q": "a"}), ("ask", {"q": "b"})]
    await client.respond(invocation_id, [{"id": first.id, "response": {"answer": "A"}}])
    record = await _settled(client, invocation_id, "parked")
    assert [call.id for call in record.pending_calls] == [second.id]
    await client.respond(invocation_id, [{"id": second.id, "response": {"answer": "B"}}])
    await _settled(client, invocation_id, "completed")
    session = await client.session_service.get_session(app_name="two_calls", user_id=user, session_id=session.id)
    assert _said(session)[-1] == "answers: {'answer': 'A'}, {'answer': 'B'}"


async def test_a_parked_call_past_its_deadline_is_answered_with_an_expiry_error(workers, client, user):
    session = await client.create_session("approval", user)
    invocation_id = await client.enqueue("approval", user, session.id, "Please pay 100", park_timeout=0.5)
    record = await _settled(client, invocation_id, "completed")
    assert record.pending_calls == []
    session = await client.session_service.get_session(app_name="approval", user_id=user, session_id=session.id)
    [response] = [e for e in session.events if e.content][-2].get_function_responses()
    assert response.response == {
        "error": f"No response arrived for long-running call {response.id!r} before its deadline; it expired."}


async def test_two_invocations_on_one_session_never_interleave(workers, client, user):
    session = await client.create_session("slow", user)
    first = await client.enqueue("slow", user, session.id, "first")
    second = await client.enqueue("slow", user, session.id, "second")
    assert (await client.get(second)).status == "queued"
    await _settled(client, second, "completed", timeout=60)
    assert (await client.get(first)).status == "completed"
    session = await client.session_service.get_session(app_name="slow", user_id=user, session_id=session.id)
    runs = [event.invocation_id for event in session.events]
    assert [i for n, i in enumerate(runs) if n == 0 or runs[n - 1] != i] == [first, second]
    assert _said(session) == (["first"] + [["step"]] * (2 * STEPS) + [f"all {STEPS} steps done"]) + (
        ["second"] + [["step"]] * (2 * STEPS) + [f"all {STEPS} steps done"])


async def test_duplicate_run_jobs_are_harmless(workers, client, user):
    session = await client.create_session("slow", user)
    invocation_id = await client.enqueue("slow", user, session.id, "go")
    for _ in range(5):
        await client._store.dispatcher.send(invocation_id)  # a bare duplicate job
    record = await _settled(client, invocation_id, "completed", timeout=60)
    assert record.attempts == 1
    session = await client.session_service.get_session(app_name="slow", user_id=user, session_id=session.id)
    assert _said(session) == ["go"] + [["step"]] * (2 * STEPS) + [f"all {STEPS} steps done"]
    assert sorted((await _side_effects(client, invocation_id)).values()) == ["1"] * STEPS


async def test_a_worker_killed_mid_invocation_is_taken_over_and_nothing_is_lost_or_doubled(workers, client, user):
    session = await client.create_session("slow", user)
    invocation_id = await client.enqueue("slow", user, session.id, "go")
    victim = await _kill_after_two_tool_answers(client, workers, invocation_id)
    record = await _settled(client, invocation_id, "completed", timeout=60)
    assert record.attempts == 2 and record.worker != victim
    session = await client.session_service.get_session(app_name="slow", user_id=user, session_id=session.id)
    assert [e.text() or [p.function_call.name if p.function_call else p.function_response.response
                         for p in e.content.parts] for e in session.events if e.content] == (
        ["go"] + [item for n in range(1, STEPS + 1) for item in (["step"], [{"done": n}])]
        + [f"all {STEPS} steps done"])
    assert len({event.id for event in session.events}) == len(session.events)
    assert sorted((await _side_effects(client, invocation_id)).values()) == ["1"] * STEPS
    committed = _committed(await _events(client, invocation_id))
    assert [e["id"] for e in committed] == [e.id for e in session.events]


async def test_cancel_stops_a_running_invocation_and_records_why(workers, client, user):
    session = await client.create_session("slow", user)
    invocation_id = await client.enqueue("slow", user, session.id, "go")
    async for entry in client.events(invocation_id):
        if entry.kind == "event":
            break
    record = await client.cancel(invocation_id, "no longer needed")
    assert (record.status, record.cancel_reason) == ("cancelled", "no longer needed")
    entries = await _events(client, invocation_id)
    assert _statuses(entries)[-1] == "cancelled"
    await asyncio.sleep(0.6)  # longer than a model call: a stale worker would have committed by now
    session = await client.session_service.get_session(app_name="slow", user_id=user, session_id=session.id)
    assert len([e for e in session.events if e.content]) <= 2


async def test_retryable_model_errors_are_retried_and_other_errors_fail_clearly(workers, client, user):
    await client._store.redis.delete("test:flaky_calls")
    session = await client.create_session("flaky", user)
    flaky = await client.enqueue("flaky", user, session.id, "hi")
    record = await _settled(client, flaky, "completed")
    assert record.error is None
    session = await client.create_session("broken", user)
    broken = await client.enqueue("broken", user, session.id, "hi")
    record = await client.wait(broken, timeout=30)
    assert record.status == "failed"
    assert record.error.type in ("ModelError",) and "400 invalid argument" in record.error.message


async def test_an_invocation_past_its_time_limit_fails_with_a_timeout(workers, client, user):
    session = await client.create_session("slow", user)
    invocation_id = await client.enqueue("slow", user, session.id, "go", time_limit=0.3)
    record = await client.wait(invocation_id, timeout=30)
    assert (record.status, record.error.type) == ("failed", "InvocationTimeoutError")
    assert "0.3s time limit" in record.error.message


async def _holder_when_tool_started(client, invocation_id, tool):
    async with asyncio.timeout(30):
        while not await _side_effects(client, invocation_id):
            await asyncio.sleep(0.02)
    return (await client.get(invocation_id)).worker


async def test_a_tool_cut_off_by_a_dead_worker_is_rerun_only_when_declared_idempotent(workers, client, user):
    workers.ensure("w1", "w2", "w3")  # a spare, in case the two invocations ran on two workers
    risky_session = await client.create_session("risky", user)
    safe_session = await client.create_session("idempotent", user)
    risky = await client.enqueue("risky", user, risky_session.id, "transfer")
    safe = await client.enqueue("idempotent", user, safe_session.id, "refresh")
    victims = {await _holder_when_tool_started(client, risky, "transfer_money"),
               await _holder_when_tool_started(client, safe, "refresh_cache")}
    for victim in victims:
        workers.kill(victim)
    assert (await _settled(client, risky, "completed", timeout=60)).attempts == 2
    assert (await _settled(client, safe, "completed", timeout=60)).attempts == 2

    assert list((await _side_effects(client, risky)).values()) == ["1"]  # never silently doubled
    session = await client.session_service.get_session(app_name="risky", user_id=user, session_id=risky_session.id)
    assert _said(session)[-1] == "result: {'error': 'The outcome of tool `transfer_money` is unknown: a previous " \
        "attempt started but did not finish (the worker running it stopped). It was not retried because it is " \
        "not declared idempotent.'}"
    assert list((await _side_effects(client, safe)).values()) == ["2"]  # re-run, as declared safe
    session = await client.session_service.get_session(app_name="idempotent", user_id=user,
                                                       session_id=safe_session.id)
    assert _said(session)[-1] == "result: {'done': 'refresh_cache'}"


async def test_a_worker_stopped_gracefully_hands_its_invocation_to_another_at_once(workers, client, user):
    session = await client.create_session("slow", user)
    invocation_id = await client.enqueue("slow", user, session.id, "go")
    async for entry in client.events(invocation_id):
        if entry.kind == "event" and entry.data.get("author") == "stepper":
            break
    holder = (await client.get(invocation_id)).worker
    workers.processes[holder].terminate()  # SIGTERM: Celery's warm shutdown, then the hand-back
    workers.processes[holder].wait(timeout=30)
    record = await _settled(client, invocation_id, "completed", timeout=60)
    assert record.attempts == 2 and record.worker != holder
    session = await client.session_service.get_session(app_name="slow", user_id=user, session_id=session.id)
    assert _said(session) == ["go"] + [["step"]] * (2 * STEPS) + [f"all {STEPS} steps done"]
    assert sorted((await _side_effects(client, invocation_id)).values()) == ["1"] * STEPS


async def test_an_invocation_over_its_model_call_budget_fails_with_the_limit(workers, client, user):
    session = await client.create_session("slow", user)
    invocation_id = await client.enqueue("slow", user, session.id, "go", run_config={"max_llm_calls": 2})
    record = await client.wait(invocation_id, timeout=30)
    assert (record.status, record.error.type) == ("failed", "LlmCallsLimitExceededError")
    assert record.error.message == "Max number of llm calls limit of `2` exceeded"


async def test_an_unreadable_run_job_is_dropped_and_the_workers_keep_serving(workers, client, user):
    from worker.queues.dispatch import QUEUE, RUN_TASK

    app = client._store.dispatcher.app
    with app.producer_or_acquire() as producer:  # a run job whose body is not JSON: Celery cannot decode it
        producer.publish("not json", routing_key=QUEUE, serializer=None, content_type="application/json",
                         content_encoding="utf-8", headers={"task": RUN_TASK, "id": "garbled-job", "lang": "py"})
    session = await client.create_session("slow", user)
    invocation_id = await client.enqueue("slow", user, session.id, "go")
    await _settled(client, invocation_id, "completed", timeout=60)
    assert await client._store.mux.execute_command("LLEN", QUEUE) == 0
    assert await client._store.mux.execute_command("HLEN", "unacked") == 0  # dropped, not left to redeliver
    assert all(workers.processes[name].poll() is None for name in ("w1", "w2"))  # no worker died on it
