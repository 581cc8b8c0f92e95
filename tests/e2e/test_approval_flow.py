"""The human-approval flow over real HTTP against real agentq api and worker processes and real Redis."""

from __future__ import annotations

import asyncio
import uuid

from api.streams.sse_client import read_frames

from .conftest import ALICE_KEY, client, user_message


async def _session(http, app: str = "reimbursement", user: str = "alice") -> str:
    session_id = "s-" + uuid.uuid4().hex[:8]
    response = await http.post(f"/apps/{app}/users/{user}/sessions", json={"sessionId": session_id})
    assert response.status_code == 200, response.text
    return session_id


async def _enqueue(http, session_id: str, text: str, app: str = "reimbursement") -> str:
    response = await http.post(
        f"/apps/{app}/users/alice/sessions/{session_id}/invocations", json={"newMessage": user_message(text)}
    )
    assert response.status_code == 202, response.text
    return response.json()["invocationId"]


async def _frames(http, invocation_id: str, after: str | None = None) -> list:
    headers = {"Last-Event-ID": after} if after else {}
    async with http.stream("GET", f"/invocations/{invocation_id}/events", headers=headers) as response:
        assert response.status_code == 200
        return [frame async for frame in read_frames(response)]


def _texts(frames) -> list[str]:
    return [
        part["text"]
        for frame in frames
        if frame.event == "message" and not frame.data.get("partial") and frame.data.get("author") != "user"
        for part in (frame.data.get("content") or {}).get("parts", [])
        if "text" in part
    ]


async def test_small_claim_is_paid_at_once(stack):
    async with client(stack, ALICE_KEY) as http:
        session_id = await _session(http)
        invocation_id = await _enqueue(http, session_id, "Please reimburse $45 for team lunch.")
        frames = await _frames(http, invocation_id)
        status = (await http.get(f"/invocations/{invocation_id}")).json()
    assert _texts(frames) == ["Paid $45.00 for team lunch."]
    assert [f.data["status"] for f in frames if f.event == "status"][-1] == "completed"
    assert (status["status"], status["pendingCalls"]) == ("completed", [])


async def test_large_claim_parks_and_resumes_under_the_same_invocation_id_once_approved(stack):
    async with client(stack, ALICE_KEY) as http:
        session_id = await _session(http)
        invocation_id = await _enqueue(http, session_id, "Please reimburse $1200 for a conference trip.")
        first = await _frames(http, invocation_id)
        parked = (await http.get(f"/invocations/{invocation_id}")).json()
        inbox = (await http.get("/apps/reimbursement/users/alice/invocations", params={"status": "parked"})).json()
        call = parked["pendingCalls"][0]
        accepted = await http.post(
            f"/invocations/{invocation_id}/function-responses",
            json={"functionResponses": [{"id": call["id"], "name": call["name"], "response": {"status": "approved"}}]},
        )
        again = await http.post(
            f"/invocations/{invocation_id}/function-responses",
            json={"functionResponses": [{"id": call["id"], "name": call["name"], "response": {"status": "approved"}}]},
        )
        second = await _frames(http, invocation_id, after=first[-1].id)
        final = (await http.get(f"/invocations/{invocation_id}")).json()
    assert (parked["status"], call["name"], call["args"]) == (
        "parked", "ask_for_approval", {"purpose": "a conference trip", "amount": 1200.0}
    )
    assert invocation_id in [item["invocationId"] for item in inbox["invocations"]]
    assert _texts(first) == [
        "$1200.00 for a conference trip needs a manager's approval (ticket approval-a conference trip); "
        "I will pay it once approved."
    ]
    # queued at once; a fast worker may already have taken it by the time the answer is built
    assert (accepted.status_code, accepted.json()["status"] in ("queued", "running")) == (202, True)
    assert again.status_code == 409
    assert _texts(second) == ["Paid $1200.00 for a conference trip."]
    assert {f.data.get("invocationId") for f in second if f.event == "message"} == {invocation_id}
    assert (final["status"], final["pendingCalls"]) == ("completed", [])


async def test_sse_resume_after_a_dropped_connection_loses_and_repeats_no_event(stack):
    async with client(stack, ALICE_KEY) as http:
        session_id = await _session(http)
        invocation_id = await _enqueue(http, session_id, "Please reimburse $45 for a taxi.")
        seen = []
        async with http.stream("GET", f"/invocations/{invocation_id}/events") as response:
            async for frame in read_frames(response):
                seen.append(frame)
                if len(seen) == 2:
                    break  # drop the connection mid-stream
        rest = await _frames(http, invocation_id, after=seen[-1].id)
        replay = await _frames(http, invocation_id)
    ids = [f.id for f in seen + rest]
    assert ids == [f.id for f in replay]
    assert len(ids) == len(set(ids)) and len(ids) > 2


async def test_a_client_disconnect_does_not_cancel_the_invocation(stack):
    async with client(stack, ALICE_KEY) as http:
        session_id = await _session(http)
        async with http.stream(
            "POST", "/run_sse",
            json={"appName": "reimbursement", "userId": "alice", "sessionId": session_id,
                  "newMessage": user_message("Please reimburse $30 for parking.")},
        ) as response:
            invocation_id = response.headers["x-invocation-id"]
            async for _frame in read_frames(response):
                break  # leave after the first frame
        status = {}
        for _ in range(600):
            status = (await http.get(f"/invocations/{invocation_id}")).json()
            if status["status"] in ("completed", "failed", "cancelled", "parked"):
                break
            await asyncio.sleep(0.05)
    assert status["status"] == "completed"


async def test_the_session_stream_carries_both_invocations_in_order_and_resumes_by_id(stack):
    async with client(stack, ALICE_KEY) as http:
        session_id = await _session(http)
        first = await _enqueue(http, session_id, "Please reimburse $10 for coffee.")
        second = await _enqueue(http, session_id, "Please reimburse $20 for a cab.")
        url = f"/apps/reimbursement/users/alice/sessions/{session_id}/events"
        frames = []
        async with http.stream("GET", url) as response:
            async for frame in read_frames(response):
                frames.append(frame)
                if frame.event == "status" and frame.data["status"] == "completed" and len(
                    [f for f in frames if f.event == "status" and f.data["status"] == "completed"]
                ) == 2:
                    break  # the session stream never ends by itself
        resumed = []
        async with http.stream("GET", url, headers={"Last-Event-ID": frames[3].id}) as response:
            async for frame in read_frames(response):
                resumed.append(frame)
                if frame.id == frames[-1].id:
                    break
    completed = [f for f in frames if f.event == "status" and f.data["status"] == "completed"]
    owners = [f.data.get("invocationId") for f in frames if f.event == "message"]
    assert owners == sorted(owners, key=[first, second].index)  # all of the first before any of the second
    assert set(owners) == {first, second} and len(completed) == 2
    assert [f.id for f in resumed] == [f.id for f in frames[4:]]
