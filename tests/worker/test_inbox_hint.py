"""``agentq inbox`` shows how to answer each parked call, in the shape the call asks for."""

from __future__ import annotations

from types import SimpleNamespace

from agentq.inbox_command import example_answer, item
from worker.records.record import PendingCall

SCHEMA = {"type": "object", "required": ["decision"],
          "properties": {"decision": {"type": "string", "enum": ["approve", "changes", "reject"]},
                         "note": {"type": "string"}}}


def _record(call: PendingCall):
    return SimpleNamespace(id="e-1", app_name="app", user_id="u", session_id="s", new_message=None,
                           updated_at=1.0, pending_calls=[call])


def test_a_workflow_question_is_answered_in_the_shape_of_its_response_schema():
    call = PendingCall(id="review", name="adk_request_input",
                       args={"interruptId": "review", "message": "Publish?", "response_schema": SCHEMA})
    assert item(_record(call))["answerWith"] == "agentq respond e-1 review '{\"decision\": \"approve\"}'"


def test_an_example_answer_fills_required_fields_with_the_first_enum_value_or_a_placeholder_of_their_type():
    assert example_answer(SCHEMA) == {"decision": "approve"}
    assert example_answer({"type": "object", "properties": {"ok": {"type": "boolean"}, "n": {"type": "integer"}}}) \
        == {"ok": True, "n": 0}
    assert (example_answer({"type": "string"}), example_answer(None)) == ("...", "...")
