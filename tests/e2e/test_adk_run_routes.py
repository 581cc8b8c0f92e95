"""ADK's /run and /run_sse extras against real agentq api and worker processes: ``invocationId``, an optional
``newMessage``, and answers to invocations that are no longer parked."""

from __future__ import annotations

from .conftest import ANSWER_ONLY_KEY, BOB_KEY, client
from .test_confirmation_http import BASE, _parked_transfer


def _run_body(session_id: str, call_id: str, **extra) -> dict:
    answer = {"functionResponse": {"id": call_id, "name": "adk_request_confirmation",
                                   "response": {"confirmed": True}}}
    return {"appName": "transfers", "userId": "bob", "sessionId": session_id,
            "newMessage": {"role": "user", "parts": [answer]}, **extra}


async def _invocations(http, session_id: str) -> list[tuple[str, str]]:
    listed = (await http.get("/apps/transfers/users/bob/invocations", params={"sessionId": session_id})).json()
    return sorted((item["invocationId"], item["status"]) for item in listed["invocations"])


async def test_cancelled_parked_invocation_answered_through_run_is_409_and_writes_nothing(stack):
    async with client(stack, BOB_KEY) as http:
        session_id, invocation_id, record = await _parked_transfer(http)
        call_id = record["pendingCalls"][0]["id"]
        assert (await http.post(f"/invocations/{invocation_id}/cancel")).status_code == 200
        events_before = (await http.get(f"{BASE}/{session_id}")).json()["events"]
        direct = await http.post(f"/invocations/{invocation_id}/function-responses", json={"functionResponses": [
            {"id": call_id, "name": "adk_request_confirmation", "response": {"confirmed": True}}]})

        through_run = await http.post("/run", json=_run_body(session_id, call_id))
        through_sse = await http.post("/run_sse", json=_run_body(session_id, call_id))

        assert (direct.status_code, direct.json()["error"]) == (409, "CallNotPendingError")
        assert (through_run.status_code, through_run.json()) == (409, direct.json())
        assert (through_sse.status_code, through_sse.json()) == (409, direct.json())
        assert await _invocations(http, session_id) == [(invocation_id, "cancelled")]
        assert (await http.get(f"{BASE}/{session_id}")).json()["events"] == events_before


async def test_run_resumes_the_parked_invocation_named_by_invocation_id(stack):
    async with client(stack, BOB_KEY) as http:
        session_id, invocation_id, record = await _parked_transfer(http)
        call_id = record["pendingCalls"][0]["id"]
        wrong = await http.post("/run", json=_run_body(session_id, call_id, invocationId="e-not-this-one"))
        assert (wrong.status_code, wrong.json()["error"]) == (404, "InvocationNotFoundError")

        answered = await http.post("/run", json=_run_body(session_id, call_id, invocationId=invocation_id))

        assert answered.status_code == 200, answered.text
        assert {event["invocationId"] for event in answered.json()} == {invocation_id}
        assert await _invocations(http, session_id) == [(invocation_id, "completed")]


async def test_a_key_holding_only_answer_answers_over_run_sse_and_run_but_starts_nothing(stack):
    """One door per action: answering needs ``answer`` whatever the entry point (as /function-responses), and a
    new message over the same routes needs ``enqueue``."""
    async with client(stack, BOB_KEY) as bob, client(stack, ANSWER_ONLY_KEY) as answerer:
        session_id, invocation_id, record = await _parked_transfer(bob)
        async with answerer.stream("POST", "/run_sse", json=_run_body(
                session_id, record["pendingCalls"][0]["id"])) as streamed:
            frames = (await streamed.aread()).decode()
        assert streamed.status_code == 200, frames
        assert streamed.headers["X-Invocation-Id"] == invocation_id and '"error"' not in frames
        session_id, invocation_id, record = await _parked_transfer(bob)
        answered = await answerer.post("/run", json=_run_body(session_id, record["pendingCalls"][0]["id"]))
        assert answered.status_code == 200, answered.text
        assert await _invocations(bob, session_id) == [(invocation_id, "completed")]

        started = await answerer.post("/run_sse", json={
            "appName": "transfers", "userId": "bob", "sessionId": session_id,
            "newMessage": {"role": "user", "parts": [{"text": "Please send $5 to carol."}]}})
        assert started.status_code == 403 and "needs role 'enqueue'" in started.text
        assert await _invocations(bob, session_id) == [(invocation_id, "completed")]


async def test_run_without_a_new_message_follows_the_named_invocation_or_says_what_is_missing(stack):
    async with client(stack, BOB_KEY) as http:
        session_id, invocation_id, _ = await _parked_transfer(http)
        body = {"appName": "transfers", "userId": "bob", "sessionId": session_id}

        parked = await http.post("/run", json={**body, "invocationId": invocation_id})
        streamed = await http.post("/run_sse", json={**body, "invocationId": invocation_id})
        missing = await http.post("/run", json=body)

        assert (parked.status_code, parked.json()) == (200, [])  # parked: nothing runs until it is answered
        assert (streamed.status_code, streamed.text) == (200, "")
        assert (missing.status_code, missing.json()["error"]) == (400, "UsageError")
        assert "newMessage" in missing.json()["detail"]
        assert await _invocations(http, session_id) == [(invocation_id, "parked")]


async def test_the_workers_spans_are_served_by_the_trace_route_and_go_with_the_session(stack):
    import redis.asyncio as aioredis

    from runtime.redis_store import keys

    async with client(stack, BOB_KEY) as http:
        session_id, invocation_id, _ = await _parked_transfer(http)
        trace = f"/dev/apps/transfers/debug/trace/session/{session_id}"
        spans = (await http.get(trace)).json()
        assert {span["trace_id"] for span in spans} == {invocation_id}
        assert [span["name"] for span in spans][:2] == ["invoke_agent " + spans[0]["attributes"][
            "gen_ai.agent.name"], "call_llm"]
        assert (await http.get(trace, params={"userId": "bob"})).json() == spans

        assert (await http.delete(f"{BASE}/{session_id}")).status_code == 200

        assert (await http.get(trace)).json() == []
    async with aioredis.Redis.from_url(stack.redis.url) as redis:
        assert await redis.exists(keys.session_spans("transfers", "bob", session_id)) == 0
