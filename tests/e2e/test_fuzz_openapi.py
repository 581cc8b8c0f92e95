"""Fuzz every operation of the OpenAPI schema against the running API: no input may give a 5xx."""

from __future__ import annotations

import hypothesis
import schemathesis

from api import ApiSettings, create_app
from api.deps import Services
from runtime.artifacts import InMemoryArtifactService
from runtime.sessions import InMemorySessionService

from .conftest import ADMIN_KEY

# The schema is the one the served app publishes; building it needs no Redis.
_SCHEMA_APP = create_app(
    ApiSettings(app_names=["weather"]),
    Services(session_service=InMemorySessionService(), artifact_service=InMemoryArtifactService()),
)
schema = schemathesis.openapi.from_dict(_SCHEMA_APP.openapi())


def aim_at_a_served_app(case) -> None:
    """Point the case at a served app and a real user so it reaches past the 404 of an unknown app.

    Streams are left alone: a fuzzed session that happens to exist would stream forever.
    """
    if case.path.endswith("/events"):
        return
    if case.path_parameters and "app_name" in case.path_parameters:
        case.path_parameters["app_name"] = "weather"
        case.path_parameters["user_id"] = "fuzzer"
    if isinstance(case.body, dict) and "appName" in case.body:
        case.body["appName"] = "weather"
        case.body["userId"] = "fuzzer"


@schema.parametrize()
@hypothesis.settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=list(hypothesis.HealthCheck),
    derandomize=True,
    database=None,
)
def test_no_request_gets_a_server_error(case, stack):
    aim_at_a_served_app(case)
    response = case.call(base_url=stack.base_url, headers={"Authorization": f"Bearer {ADMIN_KEY}"}, timeout=10)
    assert response.status_code < 500, (
        f"{case.method} {case.formatted_path} -> {response.status_code}: {response.text}\n{stack.log_tail('api')}"
    )
    if response.status_code >= 400:
        body = response.json()
        assert set(body) >= {"error", "detail"}, body
