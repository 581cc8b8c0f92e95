"""Bad input never gives a 500: malformed JSON, wrong types, oversized bodies, bad resume ids."""

from __future__ import annotations

from api.errors import status_for
from api.routes.run import RunTimeoutError
from runtime import errors

from .conftest import make_client


async def test_malformed_json_is_a_400_naming_the_line_and_column(open_app):
    async with make_client(open_app) as http:
        response = await http.post(
            "/apps/weather/users/alice/sessions", content=b'{\n  "state": {"a": 1,}\n}',
            headers={"content-type": "application/json"})
    assert (response.status_code, response.json()) == (400, {
        "error": "JSONDecodeError", "line": 2, "column": 20,
        "detail": "the body is not valid JSON: Expecting property name enclosed in double quotes at line 2 column "
                  "20 (char 21)"})


async def test_a_json_body_sent_without_a_content_type_is_told_to_send_one(open_app):
    async with make_client(open_app) as http:
        response = await http.post("/apps/weather/users/alice/sessions", content=b'{"state": {}}')
    assert (response.status_code, response.json()["detail"]) == (422, (
        "body: Input should be a valid dictionary or object to extract fields from (the body was not read as JSON: "
        "send it with the header Content-Type: application/json, e.g. curl -H 'Content-Type: application/json' "
        "-d '{...}')"))


async def test_a_wrong_type_is_a_422_naming_the_field(open_app):
    async with make_client(open_app) as http:
        response = await http.post("/apps/weather/users/alice/sessions", json={"state": [1, 2]})
    body = response.json()
    assert (response.status_code, body["detail"]) == (422, "body.state: Input should be a valid dictionary")


async def test_an_oversized_body_is_a_413_before_it_is_parsed(open_app):
    async with make_client(open_app) as http:
        response = await http.post("/apps/weather/users/alice/sessions", json={"state": {"x": "y" * 20_000}})
    assert (response.status_code, response.json()["error"]) == (413, "PayloadTooLargeError")
    assert "exceeds the limit of 10000 bytes" in response.json()["detail"]


async def test_an_oversized_chunked_body_is_a_413(open_app):
    async def chunks():
        for _ in range(20):
            yield b"x" * 1000

    async with make_client(open_app) as http:
        response = await http.post("/apps/weather/users/alice/sessions", content=chunks())
    assert response.status_code == 413


async def test_an_unknown_route_is_a_json_404(open_app):
    async with make_client(open_app) as http:
        response = await http.get("/nope")
    assert (response.status_code, response.json()) == (404, {"error": "HTTPError", "detail": "Not Found"})


async def test_a_bad_version_query_is_a_422(open_app):
    async with make_client(open_app) as http:
        response = await http.get("/apps/weather/users/alice/sessions/s/artifacts/a.txt", params={"version": "x"})
    assert response.status_code == 422


def test_error_classes_map_to_their_status_codes():
    cases = [
        errors.InvalidMessageError("m"),
        errors.PayloadTooLargeError("m"),
        errors.SessionNotFoundError("m"),
        errors.CallNotPendingError("m"),
        errors.RetryableError("m"),
        errors.ModelError("m"),
        RunTimeoutError("m"),
        RuntimeError("m"),
    ]
    assert [status_for(exc) for exc in cases] == [400, 413, 404, 409, 503, 502, 504, 500]


async def test_metrics_count_requests_by_route_template(open_app):
    async with make_client(open_app) as http:
        await http.get("/apps/weather/users/alice/sessions/s9")
        text = (await http.get("/metrics")).text
    assert (
        'agentq_api_requests_total{method="GET",route="/apps/{app_name}/users/{user_id}/sessions/{session_id}",'
        'status="404"} 1.0'
    ) in text
