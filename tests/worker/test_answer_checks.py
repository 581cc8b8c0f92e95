"""The server checks what it is sent (issue 18 items 6 and 10): an answer that does not match the shape its call
declared (request_input's response_schema, a LongRunningFunctionTool's answer_schema) is refused with a 400 naming
the field, over HTTP and from the Python client alike, and nothing changes; a matching one resumes the invocation.

Runs a private stack (redis-server, one ``agentq worker``, ``agentq api`` with a key) on the apps it needs.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Literal

import httpx
import pytest
from pydantic import BaseModel

from agentq.local_stack import LocalStack
from runtime.errors import UsageError
from runtime.tools import LongRunningFunctionTool
from runtime.tools.answer_check import (
    AnswerSchemaError,
    check_answer,
    check_confirmation_payload,
    first_problem,
)
from worker.records.answer_check import AnswerSchemaError as WorkerAnswerSchemaError
from worker.records.answer_check import answer_shapes

KEY = "answer-checks-key"
APPS = ["tests.worker.answer_apps:invoice_app", "tests.worker.answer_apps:release_app",
        "tests.worker.apps:asking_app"]
MESSAGE = {"role": "user", "parts": [{"text": "go"}]}


# --- the checker ----------------------------------------------------------------------------------------------


SCHEMA = {"type": "object", "required": ["decision", "amount"], "additionalProperties": False,
          "properties": {"decision": {"type": "string", "enum": ["approve", "reject"]},
                         "amount": {"type": "integer", "minimum": 0},
                         "tags": {"type": "array", "items": {"type": "string"}},
                         "who": {"$ref": "#/$defs/Who"}},
          "$defs": {"Who": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}}}


@pytest.mark.parametrize(("answer", "field", "words"), [
    ({"amount": 3}, "decision", "is required"),
    ({"decision": "maybe", "amount": 3}, "decision", 'must be one of "approve", "reject", got "maybe"'),
    ({"decision": "approve", "amount": "3"}, "amount", 'must be an integer, got "3"'),
    ({"decision": "approve", "amount": True}, "amount", "must be an integer, got true"),
    ({"decision": "approve", "amount": -1}, "amount", "must be at least 0"),
    ({"decision": "approve", "amount": 1, "tags": ["a", 2]}, "tags[1]", "must be a string"),
    ({"decision": "approve", "amount": 1, "who": {}}, "who.name", "is required"),
    ({"decision": "approve", "amount": 1, "extra": 1}, "extra", "is not a field of this answer"),
])
def test_schema_checked_answers_name_the_field(answer, field, words):
    with pytest.raises(AnswerSchemaError) as refused:
        check_answer("c1", "adk_request_input", SCHEMA, answer)
    assert refused.value.field == field
    assert f"field {field!r} {words}" in str(refused.value)
    assert isinstance(refused.value, UsageError)  # a 400 over HTTP


WHOLE_DRAFT = {"type": "object", "properties": {
    "due": {"type": "string", "format": "date"},
    "amount": {"type": "number", "multipleOf": 0.5},
    "codes": {"type": "array", "uniqueItems": True},
    "refs": {"type": "object", "minProperties": 1}},
    "dependentRequired": {"amount": ["due"]}}


@pytest.mark.parametrize(("answer", "field", "words"), [
    ({"due": "next tuesday"}, "due", 'must be a valid date, got "next tuesday"'),
    ({"due": "2026-12-01", "amount": 1.2}, "amount", "breaks multipleOf: 1.2 is not a multiple of 0.5"),
    ({"codes": [1, 1]}, "codes", "breaks uniqueItems: [1, 1] has non-unique elements"),
    ({"refs": {}}, "refs", "breaks minProperties: {} should be non-empty"),
    ({"amount": 1}, "(the answer)", "breaks dependentRequired: 'due' is a dependency of 'amount'"),
])
def test_schema_checked_answers_are_checked_against_the_whole_draft_format_included(answer, field, words):
    # keywords the hand-written subset left unchecked (format, multipleOf, uniqueItems, minProperties,
    # dependentRequired): now refused, still naming the field
    with pytest.raises(AnswerSchemaError) as refused:
        check_answer("c1", "adk_request_input", WHOLE_DRAFT, answer)
    assert refused.value.field in (field, "")
    assert f"field {field!r} {words}" in str(refused.value)


def test_schema_checked_answers_that_match_pass():
    check_answer("c1", "adk_request_input", SCHEMA, {"decision": "reject", "amount": 0, "tags": [],
                                                     "who": {"name": "ana"}})
    check_answer("c1", "adk_request_input", None, {"anything": 1})


def test_schema_checked_answers_a_single_value_is_answered_as_result():
    check_answer("c1", "adk_request_input", {"type": "boolean"}, {"result": True})
    with pytest.raises(AnswerSchemaError, match="field 'result' must be a boolean"):
        check_answer("c1", "adk_request_input", {"type": "boolean"}, {"result": "yes"})
    with pytest.raises(AnswerSchemaError, match="field 'result' is required"):
        check_answer("c1", "adk_request_input", {"type": "string"}, {"answer": "L"})


def test_schema_checked_answers_optional_fields_from_pydantic_take_null_or_their_type():
    class Pick(BaseModel):
        size: Literal["S", "L"]
        note: str | None = None

    shape = LongRunningFunctionTool(lambda: None, answer_schema=Pick).answer_shape
    assert first_problem(shape["schema"], {"size": "S", "note": None}, "", shape["schema"]) is None
    assert first_problem(shape["schema"], {"size": "S", "note": 3}, "", shape["schema"])[0] == "note"


def test_quick_answers_that_do_not_match_the_schema_are_refused_when_the_tool_is_made():
    from tests.worker.answer_apps import Decision, review_invoice

    with pytest.raises(UsageError, match="quick answer 'Maybe' does not match answer_schema: .*field 'status'"):
        LongRunningFunctionTool(review_invoice, answer_schema=Decision, quick_answers={"Maybe": {"status": "?"}})


def test_confirmation_payloads_are_checked_against_the_declared_shape():
    schema = {"type": "object", "required": ["reference"], "properties": {"reference": {"type": "string"}}}
    check_confirmation_payload("c1", schema, {"confirmed": True, "payload": {"reference": "R"}})
    check_confirmation_payload("c1", schema, {"confirmed": False})  # a rejection needs no payload
    check_confirmation_payload("c1", None, {"confirmed": True})
    with pytest.raises(AnswerSchemaError, match="field 'payload' is required") as missing:
        check_confirmation_payload("c1", schema, {"confirmed": True})
    with pytest.raises(AnswerSchemaError, match="field 'payload.reference' must be a string") as wrong:
        check_confirmation_payload("c1", schema, {"confirmed": True, "payload": {"reference": 1}})
    assert (missing.value.field, wrong.value.field) == ("payload", "payload.reference")


def test_answer_shapes_are_found_in_the_agent_tree():
    from tests.worker.answer_apps import invoice_app

    shapes = answer_shapes(invoice_app.root_agent)
    assert list(shapes) == ["review_invoice"]
    assert [q["label"] for q in shapes["review_invoice"]["quickAnswers"]] == ["Approve", "Reject"]
    assert WorkerAnswerSchemaError is AnswerSchemaError


# --- end to end: HTTP and the Python client --------------------------------------------------------------------


@pytest.fixture(scope="module")
def answer_stack(tmp_path_factory):
    local = LocalStack(tmp_path_factory.mktemp("answer-checks"), apps=APPS,
                       api_keys_json=json.dumps({KEY: {"users": ["*"], "apps": ["*"]}}),
                       extra_env={"GOOGLE_API_KEY": "", "GEMINI_API_KEY": ""})
    with local:
        yield local


@pytest.fixture
async def http(answer_stack):
    async with httpx.AsyncClient(base_url=answer_stack.base_url, headers={"Authorization": f"Bearer {KEY}"},
                                 timeout=30) as client:
        yield client


@pytest.fixture
async def agentq(answer_stack):
    from worker.client import AgentqClient

    client = AgentqClient(answer_stack.redis.url)
    yield client
    await client.aclose()


async def _parked(http: httpx.AsyncClient, app: str) -> dict:
    user = "u-" + uuid.uuid4().hex[:8]
    session = (await http.post(f"/apps/{app}/users/{user}/sessions", json={})).json()["id"]
    response = await http.post(f"/apps/{app}/users/{user}/sessions/{session}/invocations", json={"newMessage": MESSAGE})
    assert response.status_code == 202, response.text
    return await _status(http, response.json()["invocationId"], "parked")


async def _status(http: httpx.AsyncClient, invocation_id: str, wanted: str) -> dict:
    async with asyncio.timeout(30):
        while (body := (await http.get(f"/invocations/{invocation_id}")).json())["status"] != wanted:
            await asyncio.sleep(0.05)
    return body


async def _final_text(agentq, body: dict) -> str:
    session = await agentq.session_service.get_session(app_name=body["appName"], user_id=body["userId"],
                                                       session_id=body["sessionId"])
    return [e for e in session.events if e.content and e.content.parts and e.content.parts[0].text][-1].text()


@pytest.mark.timeout(120)
async def test_schema_checked_answers_a_request_input_answer_is_refused_over_http_naming_the_field(http):
    body = await _parked(http, "asking")
    [call] = body["pendingCalls"]
    assert call["responseSchema"]["properties"]["city"] == {"type": "string"}
    refused = await http.post(f"/invocations/{body['invocationId']}/function-responses", json={
        "functionResponses": [{"id": call["id"], "name": call["name"], "response": {"city": 7}}]})
    assert refused.status_code == 400
    assert refused.json()["error"] == "AnswerSchemaError"
    assert "field 'city' must be a string, got 7" in refused.json()["detail"]
    after = (await http.get(f"/invocations/{body['invocationId']}")).json()
    assert (after["status"], after["pendingCalls"], after["updatedAt"]) == ("parked", body["pendingCalls"],
                                                                            body["updatedAt"])  # nothing changed
    accepted = await http.post(f"/invocations/{body['invocationId']}/function-responses", json={
        "functionResponses": [{"id": call["id"], "name": call["name"], "response": {"city": "Lyon"}}]})
    assert accepted.status_code == 202, accepted.text
    await _status(http, body["invocationId"], "completed")


@pytest.mark.timeout(120)
async def test_schema_checked_answers_a_declared_long_running_answer_is_refused_from_the_python_client(http, agentq):
    body = await _parked(http, "invoices")
    [call] = body["pendingCalls"]
    assert (call["kind"], call["args"]) == ("long_running", {"invoice": "INV-7", "amount": 1200})
    assert call["answerSchema"]["required"] == ["status"]
    assert call["quickAnswers"] == [{"label": "Approve", "response": {"status": "approved"}},
                                    {"label": "Reject", "response": {"status": "rejected",
                                                                     "note": "rejected with one click"}}]
    before = await agentq.get(body["invocationId"])
    with pytest.raises(AnswerSchemaError) as refused:
        await agentq.respond(body["invocationId"], [{"id": call["id"], "name": call["name"],
                                                     "response": {"status": "approved", "note": "x" * 300}}])
    assert refused.value.field == "note"
    assert "field 'note' must be at most 200 characters long" in str(refused.value)
    after = await agentq.get(body["invocationId"])
    assert after.model_dump() == before.model_dump()  # nothing changed: no response stored, still parked
    http_refused = await http.post(f"/invocations/{body['invocationId']}/function-responses", json={
        "functionResponses": [{"id": call["id"], "name": call["name"], "response": {"status": "ok"}}]})
    assert (http_refused.status_code, http_refused.json()["error"]) == (400, "AnswerSchemaError")
    assert "field 'status' must be one of \"approved\", \"rejected\", got \"ok\"" in http_refused.json()["detail"]
    await agentq.respond(body["invocationId"], [{"id": call["id"], "name": call["name"],
                                                 "response": {"status": "approved", "note": "within budget"}}])
    done = await _status(http, body["invocationId"], "completed")
    assert await _final_text(agentq, done) == "Invoice INV-7 approved (within budget)."


@pytest.mark.timeout(120)
async def test_schema_checked_answers_a_confirmation_payload_is_refused_unless_it_matches_its_declared_shape(
        http, agentq):
    body = await _parked(http, "releases")
    [call] = body["pendingCalls"]
    assert call["kind"] == "confirmation"
    assert call["payloadSchema"]["required"] == ["reference"]
    invocation_id = body["invocationId"]
    before = await agentq.get(invocation_id)
    with pytest.raises(AnswerSchemaError, match="field 'payload' is required"):
        await agentq.approve(invocation_id)
    with pytest.raises(AnswerSchemaError, match="field 'payload.reference' must match the pattern"):
        await agentq.approve(invocation_id, payload={"reference": "nope"})
    refused = await http.post(f"/invocations/{invocation_id}/function-responses", json={"functionResponses": [
        {"id": call["id"], "name": call["name"], "response": {"confirmed": True,
                                                              "payload": {"reference": "REF-1", "split": 9}}}]})
    assert refused.status_code == 400 and "field 'payload.split' must be at most 4" in refused.json()["detail"]
    assert (await agentq.get(invocation_id)).model_dump() == before.model_dump()  # nothing changed
    await agentq.approve(invocation_id, payload={"reference": "REF-42"})
    done = await _status(http, invocation_id, "completed")
    assert await _final_text(agentq, done) == "result: {'released': 900, 'reference': 'REF-42'}"
