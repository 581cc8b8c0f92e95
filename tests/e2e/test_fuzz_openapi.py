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


@schema.parametrize()
@hypothesis.settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=list(hypothesis.HealthCheck),
    derandomize=True,
    database=None,
)
def test_no_request_gets_a_server_error(case, stack):
    response = case.call(base_url=stack.base_url, headers={"Authorization": f"Bearer {ADMIN_KEY}"}, timeout=10)
    assert response.status_code < 500, (
        f"{case.method} {case.formatted_path} -> {response.status_code}: {response.text}\n{stack.log_tail('api')}"
    )
    if response.status_code >= 400:
        body = response.json()
        assert set(body) >= {"error", "detail"}, body
