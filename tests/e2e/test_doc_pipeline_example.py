"""examples.doc_pipeline over real HTTP, on real agentq api and worker processes: a workflow parks on its
reviewer and the three answers (approve, changes requested, reject) each resume the same invocation."""

from __future__ import annotations

import asyncio
import json
import uuid

from examples.doc_pipeline import REVIEW_SCHEMA, SOURCES

from .conftest import BOB_KEY, client, user_message

BASE = "/apps/doc_pipeline/users/bob/sessions"
NOTES = "Notes on workflows: " + SOURCES["workflows"]
FIRST_DRAFT = "Workflows: agentq now runs ADK 2 graph workflows."
REVISED = f"{FIRST_DRAFT} (Revised: Mention that it survives a worker crash.)"


async def _wait(http, invocation_id: str, *statuses: str) -> dict:
    async with asyncio.timeout(60):
        while (record := (await http.get(f"/invocations/{invocation_id}")).json())["status"] not in statuses:
            await asyncio.sleep(0.05)
    return record


async def _start(http) -> tuple[str, str]:
    session_id = "d-" + uuid.uuid4().hex[:8]
    assert (await http.post(BASE, json={"sessionId": session_id})).status_code == 200
    response = await http.post(f"{BASE}/{session_id}/invocations", json={"newMessage": user_message("workflows")})
    assert response.status_code == 202, response.text
    return session_id, response.json()["invocationId"]


async def _answer(http, invocation_id: str, response: dict) -> dict:
    """Answer the pending review; return the record once the invocation parked again or settled."""
    accepted = await http.post(f"/invocations/{invocation_id}/function-responses", json={
        "functionResponses": [{"id": "review", "name": "adk_request_input", "response": response}]})
    assert (accepted.status_code, accepted.json()["status"]) == (202, "queued"), accepted.text
    return await _wait(http, invocation_id, "parked", "completed", "failed")


def _pending_review(draft: str) -> list[dict]:
    args = {"interruptId": "review", "message": "Publish this draft about workflows?",
            "payload": {"topic": "workflows", "draft": draft}, "response_schema": REVIEW_SCHEMA}
    return [{"id": "review", "name": "adk_request_input", "args": args, "kind": "input", "deadline": None,
             "originalCall": None, "hint": None, "payload": args["payload"],
             "question": "Publish this draft about workflows?",
             "responseSchema": REVIEW_SCHEMA, "answerSchema": None, "payloadSchema": None, "quickAnswers": None,
             "approvals": [], "answerable": True}]


async def _outputs_and_state(http, session_id: str) -> tuple[list[tuple[str, object]], dict]:
    """Each finished node run's (path, output), in commit order, and the session's state."""
    session = (await http.get(f"{BASE}/{session_id}")).json()
    outputs = []
    for event in session["events"]:
        info = event.get("nodeInfo") or {}
        if info.get("outputFor"):
            text = "".join(part.get("text", "") for part in (event.get("content") or {}).get("parts", []))
            outputs.append((info["path"], text if info.get("messageAsOutput") else event.get("output")))
    return outputs, session["state"]


async def test_the_pipeline_parks_on_its_reviewer_and_an_approval_publishes_the_draft(stack):
    async with client(stack, BOB_KEY) as http:
        session_id, invocation_id = await _start(http)
        parked = await _wait(http, invocation_id, "parked", "completed", "failed")
        assert (parked["status"], parked["pendingCalls"]) == ("parked", _pending_review(FIRST_DRAFT))
        final = await _answer(http, invocation_id, {"decision": "approve"})
        outputs, state = await _outputs_and_state(http, session_id)
    assert (final["status"], final["pendingCalls"], final["error"]) == ("completed", [], None)
    assert outputs == [
        ("doc_pipeline@1/fetch@1", NOTES),
        ("doc_pipeline@1/draft@1", FIRST_DRAFT),
        ("doc_pipeline@1/decide@1", {"decision": "approve"}),
        ("doc_pipeline@1/publish@1", {"status": "published", "text": FIRST_DRAFT}),
    ]
    assert state == {"topic": "workflows", "source": SOURCES["workflows"], "draft": FIRST_DRAFT,
                     "published": FIRST_DRAFT}


async def test_changes_requested_loop_back_to_a_new_draft_which_parks_again_and_is_then_published(stack):
    async with client(stack, BOB_KEY) as http:
        session_id, invocation_id = await _start(http)
        await _wait(http, invocation_id, "parked")
        again = await _answer(http, invocation_id, {"decision": "changes",
                                                    "note": "Mention that it survives a worker crash."})
        assert (again["status"], again["pendingCalls"]) == ("parked", _pending_review(REVISED))
        final = await _answer(http, invocation_id, {"decision": "approve", "note": "Good."})
        outputs, state = await _outputs_and_state(http, session_id)
    assert (final["invocationId"], final["status"]) == (invocation_id, "completed")
    assert outputs == [
        ("doc_pipeline@1/fetch@1", NOTES),
        ("doc_pipeline@1/draft@1", FIRST_DRAFT),
        ("doc_pipeline@1/decide@1", {"decision": "changes", "note": "Mention that it survives a worker crash."}),
        ("doc_pipeline@1/revise@1", f"Reviewer's note: Mention that it survives a worker crash.\nDraft: {FIRST_DRAFT}"),
        ("doc_pipeline@1/draft@2", REVISED),
        ("doc_pipeline@1/decide@2", {"decision": "approve", "note": "Good."}),
        ("doc_pipeline@1/publish@1", {"status": "published", "text": REVISED}),
    ]
    assert (state["draft"], state["published"]) == (REVISED, REVISED)


async def test_a_rejection_ends_the_pipeline_without_publishing(stack):
    async with client(stack, BOB_KEY) as http:
        session_id, invocation_id = await _start(http)
        await _wait(http, invocation_id, "parked")
        final = await _answer(http, invocation_id, {"decision": "reject", "note": "Not this quarter."})
        outputs, state = await _outputs_and_state(http, session_id)
    assert final["status"] == "completed"
    assert outputs[2:] == [
        ("doc_pipeline@1/decide@1", {"decision": "reject", "note": "Not this quarter."}),
        ("doc_pipeline@1/rejected@1", {"status": "rejected", "note": "Not this quarter."}),
    ]
    assert "published" not in state


async def test_each_review_run_shows_its_own_answer_when_changes_were_asked_before_the_approval(stack):
    changes = {"decision": "changes", "note": "Mention that it survives a worker crash."}
    async with client(stack, BOB_KEY) as http:
        _, invocation_id = await _start(http)
        await _wait(http, invocation_id, "parked")
        await _answer(http, invocation_id, changes)
        waiting = (await http.get(f"/invocations/{invocation_id}/nodes")).json()["nodes"]
        await _answer(http, invocation_id, {"decision": "approve"})
        done = (await http.get(f"/invocations/{invocation_id}/nodes")).json()["nodes"]
    reviews = lambda nodes: [(n["path"], n["status"], n["waitingOn"], n["output"])  # noqa: E731
                             for n in nodes if n["name"] == "review"]
    assert reviews(waiting) == [
        ("doc_pipeline@1/review@1", "done", [], json.dumps(changes)),
        ("doc_pipeline@1/review@2", "waiting", ["review"], None),
    ]
    assert reviews(done) == [
        ("doc_pipeline@1/review@1", "done", [], json.dumps(changes)),
        ("doc_pipeline@1/review@2", "done", [], '{"decision": "approve"}'),
    ]
