"""How /run and /run_sse read status entries and which events they pass on to an ADK client."""

from __future__ import annotations

import pytest

from api.routes.invocations import run_config_dict
from api.routes.run import failure_message, is_user_input
from api.views.schemas import EnqueueRequest

MESSAGE = {"role": "user", "parts": [{"text": "hi"}]}


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        ({"status": "completed", "detail": {}}, None),
        ({"status": "parked", "detail": {"pending": ["c1"]}}, None),
        ({"status": "failed", "detail": {"error": {"type": "ModelError", "message": "model said no"}}}, "model said no"),
        ({"status": "failed", "detail": {"error": "boom"}}, "boom"),
        ({"status": "cancelled", "detail": {"reason": "changed my mind"}}, "changed my mind"),
        ({"status": "cancelled", "detail": {}}, "invocation cancelled"),
    ],
)
def test_failure_message_names_why_a_run_ended_badly(status, expected):
    assert failure_message(status) == expected


def test_only_the_users_own_input_is_held_back_from_adk_clients():
    assert [is_user_input({"author": a}) for a in ("user", "weather_agent")] == [True, False]


@pytest.mark.parametrize(
    ("run_config", "expected"),
    [
        (None, None),
        ({"streamingMode": "SSE"}, {"streaming_mode": "sse"}),
        ({"streaming_mode": "none", "maxLlmCalls": 3}, {"max_llm_calls": 3}),
    ],
)
def test_the_run_config_sent_to_workers_uses_runconfig_values(run_config, expected):
    body = EnqueueRequest.model_validate({"newMessage": MESSAGE, "runConfig": run_config})
    assert run_config_dict(body) == expected
