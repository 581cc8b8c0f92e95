"""Cursor pages of the list routes over HTTP: sessions (ADK's plain list, the cursor in a header) and invocations."""

from __future__ import annotations

import pytest

from api import ApiSettings, create_app
from api.services import redis_services

from .conftest import make_client

MESSAGE = {"role": "user", "parts": [{"text": "hello"}]}


@pytest.fixture
async def backed(redis_url):
    services = redis_services(redis_url)
    yield services
    await services.aclose()


@pytest.fixture
def queue_app(backed):
    return create_app(ApiSettings(app_names=["weather"]), backed.services)


async def _session_pages(http, page_size: int, between=None) -> tuple[list[str], list[str | None]]:
    seen, tokens, token = [], [], None
    while True:
        params = {"pageSize": page_size, **({"pageToken": token} if token else {})}
        response = await http.get("/apps/weather/users/alice/sessions", params=params)
        assert response.status_code == 200, response.text
        seen += [session["id"] for session in response.json()]
        token = response.headers.get("X-Next-Page-Token")
        tokens.append(token)
        if between is not None:
            await between()
        if token is None:
            return seen, tokens


@pytest.mark.parametrize("backend", ["redis", "memory"])
async def test_session_pages_neither_lose_nor_repeat_sessions_while_new_ones_are_created(
    backend, queue_app, open_app
):
    app = queue_app if backend == "redis" else open_app
    async with make_client(app) as http:
        for i in range(7):
            await http.post("/apps/weather/users/alice/sessions", json={"sessionId": f"s{i}"})
        created = iter(range(100))

        async def create_one() -> None:
            await http.post("/apps/weather/users/alice/sessions", json={"sessionId": f"a{next(created)}"})

        seen, tokens = await _session_pages(http, 3, between=create_one)
        everything = (await http.get("/apps/weather/users/alice/sessions")).json()
    assert seen == [f"s{i}" for i in range(7)]  # the new "a…" ids sort before every page read
    assert tokens[-1] is None and all(tokens[:-1])
    assert [s["id"] for s in everything] == sorted([*(f"a{i}" for i in range(len(tokens))), *seen])
    assert {(s["appName"], s["userId"], len(s["events"])) for s in everything} == {("weather", "alice", 0)}


async def test_invocation_pages_neither_lose_nor_repeat_invocations_while_new_ones_arrive(queue_app):
    async with make_client(queue_app) as http:
        await http.post("/apps/weather/users/alice/sessions", json={"sessionId": "s"})

        async def enqueue() -> str:
            response = await http.post("/apps/weather/users/alice/sessions/s/invocations", json={"newMessage": MESSAGE})
            return response.json()["invocationId"]

        before = [await enqueue() for _ in range(8)]
        seen, token = [], None
        while True:
            params = {"limit": 3, **({"pageToken": token} if token else {})}
            body = (await http.get("/apps/weather/users/alice/invocations", params=params)).json()
            seen += [item["invocationId"] for item in body["invocations"]]
            await enqueue()
            token = body["nextPageToken"]
            if token is None:
                break
    assert seen == list(reversed(before))


async def test_a_page_token_the_api_did_not_hand_out_is_a_400_naming_it(queue_app):
    async with make_client(queue_app) as http:
        invocations = await http.get("/apps/weather/users/alice/invocations", params={"pageToken": "nope"})
        sessions = await http.get("/apps/weather/users/alice/sessions", params={"pageToken": "nope"})
    expected = {"error": "UsageError", "detail": "page token 'nope' is not one this listing handed out"}
    assert (invocations.status_code, invocations.json()) == (400, expected)
    assert (sessions.status_code, sessions.json()) == (400, expected)
