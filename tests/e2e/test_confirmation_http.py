"""ADK tool confirmation over real HTTP against real agentq api and worker processes (examples.money_transfer)."""

from __future__ import annotations

import asyncio
import json
import uuid

from runtime.events import Event

from .conftest import BOB_KEY, client, user_message

BASE = "/apps/transfers/users/bob/sessions"


async def _parked_transfer(http, text: str = "Please send $300 to carol.") -> tuple[str, str, dict]:
    session_id = "t-" + uuid.uuid4().hex[:8]
    assert (await http.post(f"{BASE}/{session_id}")).status_code == 200
    response = await http.post(f"{BASE}/{session_id}/invocations", json={"newMessage": user_message(text)})
    assert response.status_code == 202, response.text
    invocation_id = response.json()["invocationId"]
    async with asyncio.timeout(30):
        while (record := (await http.get(f"/invocations/{invocation_id}")).json())["status"] != "parked":
            await asyncio.sleep(0.05)
    return session_id, invocation_id, record


async def _settled(http, invocation_id: str) -> dict:
    async with asyncio.timeout(30):
        while (record := (await http.get(f"/invocations/{invocation_id}")).json())["status"] not in (
                "completed", "failed", "cancelled"):
            await asyncio.sleep(0.05)
    return record


async def _last_text(http, session_id: str) -> str:
    session = (await http.get(f"{BASE}/{session_id}")).json()
    return [Event.model_validate(e) for e in session["events"] if e.get("content")][-1].text()


def _answer(call_id: str, response: dict, name: str = "adk_request_confirmation") -> dict:
    return {"functionResponses": [{"id": call_id, "name": name, "response": response}]}


async def test_a_held_transfer_shows_as_a_confirmation_in_the_record_and_the_inbox_and_an_approval_makes_it(stack):
    async with client(stack, BOB_KEY) as http:
        session_id, invocation_id, record = await _parked_transfer(http)
        [pending] = record["pendingCalls"]
        assert {k: pending[k] for k in ("name", "kind", "hint")} == {
            "name": "adk_request_confirmation", "kind": "confirmation",
            "hint": "Please approve or reject the tool call transfer_money() by responding with a FunctionResponse "
                    "with an expected ToolConfirmation payload."}
        assert {k: pending["originalCall"][k] for k in ("name", "args")} == {
            "name": "transfer_money", "args": {"amount": 300, "to": "carol"}}
        inbox = (await http.get("/apps/transfers/users/bob/invocations", params={"status": "parked"})).json()
        [listed] = [item for item in inbox["invocations"] if item["invocationId"] == invocation_id]
        assert listed["pendingCalls"] == record["pendingCalls"]
        accepted = await http.post(f"/invocations/{invocation_id}/function-responses",
                                   json=_answer(pending["id"], {"confirmed": True}))
        assert (accepted.status_code, accepted.json()["status"]) == (202, "queued")
        assert (await _settled(http, invocation_id))["status"] == "completed"
        assert await _last_text(http, session_id) == "Transferred $300 to carol."


async def test_a_rejected_transfer_is_never_made(stack):
    async with client(stack, BOB_KEY) as http:
        session_id, invocation_id, record = await _parked_transfer(http, "Please send $900 to dan.")
        response = await http.post(f"/invocations/{invocation_id}/function-responses",
                                   json=_answer(record["pendingCalls"][0]["id"], {"confirmed": False}))
        assert response.status_code == 202
        await _settled(http, invocation_id)
        assert await _last_text(http, session_id) == "The transfer was not made: This tool call is rejected."


async def test_concurrent_and_replayed_approvals_get_exactly_one_202_and_the_rest_409(stack):
    async with client(stack, BOB_KEY) as http:
        session_id, invocation_id, record = await _parked_transfer(http, "Please send $400 to erin.")
        body = _answer(record["pendingCalls"][0]["id"], {"confirmed": True})
        answers = await asyncio.gather(
            *(http.post(f"/invocations/{invocation_id}/function-responses", json=body) for _ in range(6)))
        assert sorted(a.status_code for a in answers) == [202] + [409] * 5
        await _settled(http, invocation_id)
        replayed = await http.post(f"/invocations/{invocation_id}/function-responses", json=body)
        assert (replayed.status_code, replayed.json()["error"]) == (409, "CallNotPendingError")
        session = (await http.get(f"{BASE}/{session_id}")).json()
        made = [e for e in session["events"] if "transferred" in json.dumps(e)]
        assert len(made) == 1


async def test_bad_confirmation_answers_get_a_4xx_naming_the_problem_and_nothing_changes(stack):
    async with client(stack, BOB_KEY) as http:
        _, invocation_id, record = await _parked_transfer(http, "Please send $500 to fay.")
        call_id = record["pendingCalls"][0]["id"]
        url = f"/invocations/{invocation_id}/function-responses"
        not_boolean = await http.post(url, json=_answer(call_id, {"confirmed": "yes"}))
        assert not_boolean.status_code == 400 and "boolean" in not_boolean.json()["detail"]
        unknown = await http.post(url, json=_answer("adk-no-such-call", {"confirmed": True}))
        assert unknown.status_code == 409 and "'adk-no-such-call' is not pending" in unknown.json()["detail"]
        wrong_name = await http.post(url, json=_answer(call_id, {"confirmed": True}, name="transfer_money"))
        assert wrong_name.status_code == 400 and "adk_request_confirmation" in wrong_name.json()["detail"]
        missing = await http.post("/invocations/e-unknown/function-responses", json=_answer(call_id, {"confirmed": True}))
        assert missing.status_code == 404
        after = (await http.get(f"/invocations/{invocation_id}")).json()
        assert (after["status"], after["pendingCalls"]) == ("parked", record["pendingCalls"])

        # a confirmation answer sent to a plain long-running call (the reimbursement's approval) is refused too
        session_id = "r-" + uuid.uuid4().hex[:8]
        await http.post(f"/apps/reimbursement/users/bob/sessions/{session_id}")
        enqueued = await http.post(f"/apps/reimbursement/users/bob/sessions/{session_id}/invocations",
                                   json={"newMessage": user_message("Reimburse $700 for a desk.")})
        other = enqueued.json()["invocationId"]
        async with asyncio.timeout(30):
            while (parked := (await http.get(f"/invocations/{other}")).json())["status"] != "parked":
                await asyncio.sleep(0.05)
        misdirected = await http.post(f"/invocations/{other}/function-responses",
                                      json=_answer(parked["pendingCalls"][0]["id"], {"confirmed": True}))
        assert misdirected.status_code == 400 and "ask_for_approval" in misdirected.json()["detail"]


async def test_adk_web_clients_wrapped_answer_through_run_sse_resumes_the_same_invocation(stack):
    async with client(stack, BOB_KEY) as http:
        session_id, invocation_id, record = await _parked_transfer(http, "Please send $600 to gus.")
        answer = {"role": "user", "parts": [{"functionResponse": {
            "id": record["pendingCalls"][0]["id"], "name": "adk_request_confirmation",
            "response": {"response": json.dumps({"confirmed": True})}}}]}
        body = {"appName": "transfers", "userId": "bob", "sessionId": session_id, "newMessage": answer}
        async with http.stream("POST", "/run_sse", json=body) as response:
            resumed_id = response.headers["x-invocation-id"]
            raw = (await response.aread()).decode()
    events = [Event.model_validate_json(chunk[len("data: "):]) for chunk in raw.split("\n\n")
              if chunk.startswith("data: ")]
    assert resumed_id == invocation_id
    assert [e.text() for e in events if e.content][-1] == "Transferred $600 to gus."
