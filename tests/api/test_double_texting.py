"""Double texting, session cancel and rewind over HTTP, on real Redis with no worker: the test plays the worker
(claims, commits and settles through the same functions a worker uses) where a run must have happened."""

from __future__ import annotations

import asyncio

import pytest

from api import ApiSettings, create_app
from api.services import redis_services
from runtime.events import Event
from runtime.sessions.redis_session_service import current_fence
from worker.fleet import lease
from worker.records.record import PendingCall

from .conftest import make_client

SESSIONS = "/apps/weather/users/alice/sessions"


@pytest.fixture
async def backed(redis_url):
    backed = redis_services(redis_url)
    yield backed
    await backed.aclose()


@pytest.fixture
def app(backed):
    return create_app(ApiSettings(app_names=["weather"]), backed.services)


def _message(text: str) -> dict:
    return {"role": "user", "parts": [{"text": text}]}


async def _enqueue(http, session_id: str, text: str, strategy: str | None = None):
    body = {"newMessage": _message(text), **({"multitaskStrategy": strategy} if strategy else {})}
    return await http.post(f"{SESSIONS}/{session_id}/invocations", json=body)


async def _run_a_step(store, invocation_id: str, text: str) -> lease.Claim:
    """Claim the invocation as a worker would and commit one event of it under the claim's fence."""
    claim = await lease.acquire(store, invocation_id, "test-worker")
    assert isinstance(claim, lease.Claim), claim
    service = store.session_service
    session = await service.get_session(app_name="weather", user_id="alice", session_id=claim.where.session)
    fenced = current_fence.set(claim.fence)
    try:
        await service.append_event(session, Event(invocation_id=invocation_id, author="weather_agent",
                                                  content={"role": "model", "parts": [{"text": text}]}))
    finally:
        current_fence.reset(fenced)
    return claim


async def _parked(store, invocation_id: str) -> None:
    claim = await _run_a_step(store, invocation_id, "waiting for approval")
    await lease.add_pending(store, claim, [PendingCall(id="call-1", name="ask_for_approval", args={})])
    assert (await lease.settle(store, claim, "parked"))[0] == "ok"


async def test_an_unknown_multitask_strategy_is_a_422_naming_the_allowed_values(app):
    async with make_client(app) as http:
        session_id = (await http.post(SESSIONS, json={})).json()["id"]
        queued = await _enqueue(http, session_id, "hi", "cancel_everything")
        streamed = await http.post("/run_sse", json={"appName": "weather", "userId": "alice", "sessionId": session_id,
                                                     "newMessage": _message("hi"), "multitaskStrategy": "nope"})
    for response in (queued, streamed):
        assert response.status_code == 422
        assert "multitaskStrategy" in response.json()["detail"]
        assert "'enqueue', 'reject', 'interrupt' or 'rollback'" in response.json()["detail"]


async def test_of_twenty_concurrent_reject_senders_to_an_idle_session_exactly_one_is_accepted(app, backed):
    async with make_client(app) as http:
        session_id = (await http.post(SESSIONS, json={})).json()["id"]
        answers = await asyncio.gather(*(_enqueue(http, session_id, f"message {n}", "reject") for n in range(20)))
        later = await _enqueue(http, session_id, "one more", "reject")
        streamed = await http.post("/run_sse", json={"appName": "weather", "userId": "alice", "sessionId": session_id,
                                                     "newMessage": _message("hi"), "multitaskStrategy": "reject"})
    accepted = [answer.json()["invocationId"] for answer in answers if answer.status_code == 202]
    refused = [answer for answer in answers if answer.status_code != 202]
    assert len(accepted) == 1
    assert {(answer.status_code, answer.json()["error"]) for answer in refused} == {(409, "SessionBusyError")}
    assert len(refused) == 19 and accepted[0] in refused[0].json()["detail"]
    assert (later.status_code, later.json()["error"]) == (409, "SessionBusyError")
    assert (streamed.status_code, streamed.json()["error"]) == (409, "SessionBusyError")
    live = await backed.client.list_invocations("weather", "alice", session_id=session_id)
    assert [(record.id, record.status) for record in live] == [(accepted[0], "queued")]


async def test_interrupt_cancels_a_parked_invocation_keeps_its_events_and_queues_the_new_one(app, backed):
    client = backed.client
    async with make_client(app) as http:
        session_id = (await http.post(SESSIONS, json={})).json()["id"]
        first = (await _enqueue(http, session_id, "pay 10")).json()["invocationId"]
        await _parked(client._store, first)
        second = await _enqueue(http, session_id, "never mind", "interrupt")
        shown = (await http.get(f"/invocations/{first}")).json()
        inbox = (await http.get("/apps/weather/users/alice/invocations", params={"status": "parked"})).json()
        history = (await http.get(f"{SESSIONS}/{session_id}")).json()["events"]
    assert second.status_code == 202
    new = second.json()["invocationId"]
    assert (shown["status"], shown["pendingCalls"]) == ("cancelled", [])
    assert shown["cancelReason"] == f"interrupted by invocation {new} (multitaskStrategy interrupt)"
    assert inbox["invocations"] == []
    assert [event["content"]["parts"][0]["text"] for event in history if event["invocationId"] == first] == [
        "waiting for approval"]
    assert (await client.get(new)).status == "queued"
    assert [record.id for record in await client.list_invocations("weather", "alice", "queued",
                                                                  session_id=session_id)] == [new]


async def test_rollback_is_refused_with_nothing_changed_when_it_would_take_back_a_completed_invocation(app, backed):
    client = backed.client
    store = client._store
    async with make_client(app) as http:
        session_id = (await http.post(SESSIONS, json={})).json()["id"]
        parked = (await _enqueue(http, session_id, "pay 10")).json()["invocationId"]
        await _parked(store, parked)
        done = (await _enqueue(http, session_id, "weather?")).json()["invocationId"]
        claim = await _run_a_step(store, done, "sunny")
        assert (await lease.settle(store, claim, "completed"))[0] == "ok"
        before = (await http.get(f"{SESSIONS}/{session_id}")).json()
        refused = await _enqueue(http, session_id, "start over", "rollback")
        after = (await http.get(f"{SESSIONS}/{session_id}")).json()
    assert refused.status_code == 409 and refused.json()["error"] == "RollbackRefusedError"
    assert repr(done) in refused.json()["detail"]
    assert after == before
    assert [(record.id, record.status) for record in await client.list_invocations(
        "weather", "alice", session_id=session_id)] == [(done, "completed"), (parked, "parked")]


async def test_session_cancel_route_cancels_everything_in_flight_and_is_404_when_nothing_is(app, backed):
    async with make_client(app) as http:
        session_id = (await http.post(SESSIONS, json={})).json()["id"]
        ids = [(await _enqueue(http, session_id, f"m{n}")).json()["invocationId"] for n in range(2)]
        cancelled = await http.post(f"{SESSIONS}/{session_id}:cancel", json={"reason": "stop button"})
        again = await http.post(f"{SESSIONS}/{session_id}:cancel")
        not_created = await http.get(f"{SESSIONS}/{session_id}:cancel")
    assert (cancelled.status_code, sorted(cancelled.json()["cancelled"])) == (200, sorted(ids))
    assert [(r.status, r.cancel_reason) for r in [await backed.client.get(i) for i in ids]] == [
        ("cancelled", "stop button")] * 2
    assert again.status_code == 404 and again.json()["error"] == "InvocationNotFoundError"
    assert not_created.status_code == 404


async def test_rewind_is_409_while_an_invocation_is_in_flight_and_404_for_an_invocation_not_in_the_session(app):
    async with make_client(app) as http:
        session_id = (await http.post(SESSIONS, json={})).json()["id"]
        queued = (await _enqueue(http, session_id, "hi")).json()["invocationId"]
        busy = await http.post(f"{SESSIONS}/{session_id}/rewind", json={"rewindBeforeInvocationId": queued})
        await http.post(f"/invocations/{queued}/cancel")
        unknown = await http.post(f"{SESSIONS}/{session_id}/rewind", json={"rewind_before_invocation_id": "e-none"})
        no_session = await http.post(f"{SESSIONS}/nope/rewind", json={"rewindBeforeInvocationId": queued})
        empty = await http.post(f"{SESSIONS}/{session_id}/rewind", json={})
    assert (busy.status_code, busy.json()["error"]) == (409, "SessionBusyError")
    assert queued in busy.json()["detail"]
    assert (unknown.status_code, unknown.json()["detail"]) == (404, "Invocation ID not found: e-none")
    assert (no_session.status_code, no_session.json()["error"]) == (404, "SessionNotFoundError")
    assert empty.status_code == 422 and "rewindBeforeInvocationId" in empty.json()["detail"]
