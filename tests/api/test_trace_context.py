"""A caller's W3C ``traceparent`` is stored with the invocation it enqueues, over HTTP (an API that exports no
spans itself) and through the Python client, on real Redis; a worker that exports then joins that trace."""

from __future__ import annotations

import pytest

from api import ApiSettings, create_app
from api.services import redis_services
from runtime.tracing import otel

from .conftest import make_client

CALLER = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
MESSAGE = {"role": "user", "parts": [{"text": "Weather in Oslo?"}]}


@pytest.fixture
async def backed(redis_url):
    services = redis_services(redis_url)
    yield services
    await services.aclose()


async def _enqueue_over_http(backed, headers: dict) -> str | None:
    app = create_app(ApiSettings(app_names=["weather"], max_body_bytes=100_000), backed.services)
    async with make_client(app) as http:
        await http.post("/apps/weather/users/alice/sessions", json={"sessionId": "s1"})
        response = await http.post("/apps/weather/users/alice/sessions/s1/invocations", headers=headers,
                                   json={"newMessage": MESSAGE})
    assert response.status_code == 202, response.text
    return (await backed.client.get(response.json()["invocationId"])).traceparent


async def test_an_enqueue_requests_traceparent_is_stored_with_the_invocation_when_the_api_exports_no_spans(backed):
    assert not otel.enabled()
    assert await _enqueue_over_http(backed, {"traceparent": CALLER}) == CALLER


async def test_an_enqueue_without_a_traceparent_or_with_a_malformed_one_stores_none(backed):
    assert await _enqueue_over_http(backed, {}) is None
    assert await _enqueue_over_http(backed, {"traceparent": "00-not-a-trace-01"}) is None


async def test_the_python_client_stores_the_trace_context_current_where_it_enqueues(backed):
    client = backed.client
    await client.create_session("weather", "bob", session_id="s2")
    token = otel.attach(otel.context_of(CALLER))
    try:
        invocation_id = await client.enqueue("weather", "bob", "s2", "Weather in Oslo?")
    finally:
        otel.detach(token)
    untraced = await client.enqueue("weather", "bob", "s2", "And in Bergen?")
    assert [(await client.get(i)).traceparent for i in (invocation_id, untraced)] == [CALLER, None]
