"""Tool confirmation and request_input run by real ``agentq worker`` processes on a real redis-server."""

from __future__ import annotations

import asyncio

import pytest

from runtime.errors import CallNotPendingError, UsageError
from tests.worker.test_worker_e2e import _settled, _side_effects


async def _parked_on_confirmation(client, user, amount):
    session = await client.create_session("guarded", user)
    invocation_id = await client.enqueue("guarded", user, session.id, f"wire {amount}")
    record = await _settled(client, invocation_id, "parked")
    return session, invocation_id, record


async def _final_text(client, user, session):
    session = await client.session_service.get_session(app_name="guarded", user_id=user, session_id=session.id)
    return [e for e in session.events if e.content][-1].text()


async def test_a_confirmation_parks_with_its_kind_and_an_approval_runs_the_tool_once(workers, client, user):
    session, invocation_id, record = await _parked_on_confirmation(client, user, 500)
    [pending] = record.pending_calls
    assert pending.kind == "confirmation"
    assert pending.name == "adk_request_confirmation"
    assert pending.args["originalFunctionCall"]["name"] == "wire_money"
    assert pending.args["originalFunctionCall"]["args"] == {"amount": 500}
    assert await _side_effects(client, invocation_id) == {}
    await client.approve(invocation_id)
    record = await _settled(client, invocation_id, "completed")
    assert record.pending_calls == []
    original_id = pending.args["originalFunctionCall"]["id"]
    assert await _side_effects(client, invocation_id) == {f"wire_money:{original_id}": "1"}
    assert await _final_text(client, user, session) == "result: {'wired': 500}"


async def test_a_rejected_confirmation_never_runs_the_tool(workers, client, user):
    session, invocation_id, _ = await _parked_on_confirmation(client, user, 700)
    await client.reject(invocation_id)
    await _settled(client, invocation_id, "completed")
    assert await _side_effects(client, invocation_id) == {}
    assert await _final_text(client, user, session) == "result: {'error': 'This tool call is rejected.'}"


async def test_a_small_amount_needs_no_confirmation(workers, client, user):
    session = await client.create_session("guarded", user)
    invocation_id = await client.enqueue("guarded", user, session.id, "wire 50")
    await _settled(client, invocation_id, "completed")
    assert list((await _side_effects(client, invocation_id)).values()) == ["1"]


async def test_a_confirmation_past_its_deadline_is_rejected_never_approved(workers, client, user):
    session = await client.create_session("guarded", user)
    invocation_id = await client.enqueue("guarded", user, session.id, "wire 800", park_timeout=0.5)
    await _settled(client, invocation_id, "completed")
    assert await _side_effects(client, invocation_id) == {}
    assert await _final_text(client, user, session) == "result: {'error': 'This tool call is rejected.'}"


async def test_concurrent_answers_to_one_confirmation_are_accepted_once(workers, client, user):
    session, invocation_id, record = await _parked_on_confirmation(client, user, 300)
    call_id = record.pending_calls[0].id
    outcomes = await asyncio.gather(
        *(client.approve(invocation_id, call_id) for _ in range(5)), return_exceptions=True)
    assert sum(not isinstance(o, Exception) for o in outcomes) == 1
    assert all(isinstance(o, CallNotPendingError) for o in outcomes if isinstance(o, Exception))
    await _settled(client, invocation_id, "completed")
    with pytest.raises(CallNotPendingError):
        await client.reject(invocation_id, call_id)  # replayed later: refused, and nothing changes
    assert list((await _side_effects(client, invocation_id)).values()) == ["1"]


@pytest.mark.parametrize("answer", [{"confirmed": "yes"}, {"confirmed": True, "extra": 1}, {"status": "approved"}])
async def test_a_malformed_confirmation_answer_is_refused_and_nothing_changes(workers, client, user, answer):
    _, invocation_id, record = await _parked_on_confirmation(client, user, 400)
    call_id = record.pending_calls[0].id
    for named in ("adk_request_confirmation", None):
        response = {"id": call_id, "response": answer} | ({"name": named} if named else {})
        with pytest.raises(UsageError, match="confirmed"):
            await client.respond(invocation_id, [response])
    after = await client.get(invocation_id)
    assert (after.status, [c.id for c in after.pending_calls], after.responses) == ("parked", [call_id], [])


async def test_a_confirmation_answer_for_a_plain_long_running_call_is_refused(workers, client, user):
    session = await client.create_session("approval", user)
    invocation_id = await client.enqueue("approval", user, session.id, "Please pay 100")
    record = await _settled(client, invocation_id, "parked")
    with pytest.raises(UsageError, match="ask_for_approval"):
        await client.respond(invocation_id, [
            {"id": record.pending_calls[0].id, "name": "adk_request_confirmation", "response": {"confirmed": True}}])
    with pytest.raises(UsageError, match="confirmations"):
        await client.approve(invocation_id)
    assert (await client.get(invocation_id)).status == "parked"


async def test_a_worker_killed_between_approval_and_tool_completion_never_runs_the_tool_twice(workers, client, user):
    workers.ensure("w1", "w2", "w3")
    session, invocation_id, record = await _parked_on_confirmation(client, user, 999)
    await client.approve(invocation_id)
    async with asyncio.timeout(30):
        while not await _side_effects(client, invocation_id):
            await asyncio.sleep(0.02)
    victim = (await client.get(invocation_id)).worker
    workers.kill(victim)
    record = await _settled(client, invocation_id, "completed", timeout=60)
    assert record.worker != victim
    assert list((await _side_effects(client, invocation_id)).values()) == ["1"]
    assert "outcome of tool `wire_money` is unknown" in await _final_text(client, user, session)


async def test_request_input_parks_with_the_question_and_the_answer_resumes(workers, client, user):
    session = await client.create_session("asking", user)
    invocation_id = await client.enqueue("asking", user, session.id, "plan a trip")
    record = await _settled(client, invocation_id, "parked")
    [pending] = record.pending_calls
    assert (pending.kind, pending.name, pending.args["message"]) == ("input", "adk_request_input", "Which city?")
    await client.respond(invocation_id, [{"id": pending.id, "name": "adk_request_input", "response": {"city": "Oslo"}}])
    await _settled(client, invocation_id, "completed")
    session = await client.session_service.get_session(app_name="asking", user_id=user, session_id=session.id)
    assert [e for e in session.events if e.content][-1].text() == "Booked Oslo."
