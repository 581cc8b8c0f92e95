"""The /run_sse fast lane answers exactly as the FastAPI route does, and leaves every refusal to the route."""

from __future__ import annotations

import httpx
import pytest
from fastapi import Request
from redis.exceptions import ConnectionError as RedisConnectionError

from api import ApiSettings, create_app
from api.access.auth import parse_keys
from api.deps import Services, get_caller
from runtime.artifacts import InMemoryArtifactService
from runtime.errors import SessionNotFoundError
from runtime.redis_store.streams import StreamEntry
from runtime.sessions import InMemorySessionService

from .conftest import ALICE_KEY, KEYS

MESSAGE = {"role": "user", "parts": [{"text": "What is the weather in Paris?"}]}
BODY = {"appName": "weather", "userId": "alice", "sessionId": "s1", "newMessage": MESSAGE}
MODEL_EVENT = {"author": "weather_agent", "id": "ev2", "content": {"role": "model", "parts": [{"text": "Sunny."}]}}


class FakeQueue:
    """Records enqueues; every invocation streams: queued, the user's event, a model event, completed."""

    def __init__(self, fail_with: Exception | None = None):
        self.enqueued: list[tuple] = []
        self.fail_with = fail_with

    async def enqueue(self, app, user, session, message, state_delta=None, run_config=None, principal=None):
        if self.fail_with is not None:
            raise self.fail_with
        self.enqueued.append((app, user, session, run_config))
        return f"e-{len(self.enqueued)}"

    async def events(self, invocation_id, after=None):
        def entry(n, kind, data):
            return StreamEntry(id=f"1-{n}", kind=kind, invocation_id=invocation_id, data=data)

        yield entry(0, "status", {"status": "queued", "detail": {}})
        yield entry(1, "event", {"author": "user", "id": "ev1", "content": MESSAGE})
        yield entry(2, "event", MODEL_EVENT)
        yield entry(3, "status", {"status": "completed", "detail": {}})


def _app(*, fast_lane: bool, keyed: bool = True, queue=None):
    services = Services(session_service=InMemorySessionService(), artifact_service=InMemoryArtifactService(),
                        queue=queue if queue is not None else FakeQueue())
    settings = ApiSettings(app_names=["weather"], keys=parse_keys(KEYS) if keyed else {}, max_body_bytes=10_000,
                           public_routes=frozenset({"metrics"}))
    app = create_app(settings, services, fast_lane=fast_lane)
    app.state.route_calls = 0

    async def counted_caller(request: Request):
        app.state.route_calls += 1
        return await get_caller(request)

    app.dependency_overrides[get_caller] = counted_caller
    return app


async def _post(app, *, key: str | None = ALICE_KEY, host: str = "127.0.0.1", **kwargs) -> httpx.Response:
    transport = httpx.ASGITransport(app=app, client=(host, 40000), raise_app_exceptions=False)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with httpx.AsyncClient(transport=transport, base_url="http://agentq.test", headers=headers) as http:
        return await http.post("/run_sse", **kwargs)


def _same(fast: httpx.Response, route: httpx.Response) -> None:
    assert (fast.status_code, dict(fast.headers), fast.content) == (
        route.status_code, dict(route.headers), route.content
    )


@pytest.mark.parametrize("keyed", [True, False], ids=["keys", "loopback"])
async def test_a_well_formed_request_is_served_by_the_fast_lane_with_the_routes_exact_answer(keyed):
    fast, route = _app(fast_lane=True, keyed=keyed), _app(fast_lane=False, keyed=keyed)
    key = ALICE_KEY if keyed else None
    answers = [await _post(app, key=key, json={**BODY, "streaming": True}) for app in (fast, route)]
    _same(*answers)
    assert answers[0].content == b'data: {"author":"weather_agent","id":"ev2","content":{"role":"model","parts":[{"text":"Sunny."}]}}\n\n'
    assert answers[0].headers["x-invocation-id"] == "e-1"
    assert (fast.state.route_calls, route.state.route_calls) == (0, 1)
    assert fast.state.services.queue.enqueued == [("weather", "alice", "s1", {"streaming_mode": "sse"})]


@pytest.mark.parametrize(
    "request_args",
    [
        {"content": b"{not json", "headers": {"content-type": "application/json"}},
        {"json": {**BODY, "newMessage": "hi"}},
        {"json": {**BODY, "newMessage": {"role": "user", "parts": [{"text": None, "thought": 3}]}}},
        {"json": {key: value for key, value in BODY.items() if key != "sessionId"}},
        {"json": [BODY]},
        {"content": b"", "headers": {"content-type": "application/json"}},
        {"content": b'{"appName": "weather"}', "headers": {"content-type": "text/plain"}},
        {"json": BODY, "key": None},
        {"json": BODY, "key": "not-a-configured-key"},
        {"json": {**BODY, "userId": "bob"}},
        {"json": {**BODY, "appName": "elsewhere"}},
        {"json": {**BODY, "x": "y" * 20_000}},
    ],
    ids=["bad-json", "wrong-type", "bad-part", "missing-field", "not-an-object", "empty", "text-plain",
         "no-key", "bad-key", "other-user", "unknown-app", "oversized"],
)
async def test_the_fast_lane_gives_every_other_request_the_routes_own_answer(request_args):
    fast, route = _app(fast_lane=True), _app(fast_lane=False)
    key = request_args.pop("key", ALICE_KEY)
    answers = [await _post(app, key=key, **request_args) for app in (fast, route)]
    _same(*answers)
    assert 400 <= answers[0].status_code < 500
    assert fast.state.services.queue.enqueued == []


async def test_a_non_loopback_client_without_keys_is_refused_by_the_route():
    fast, route = _app(fast_lane=True, keyed=False), _app(fast_lane=False, keyed=False)
    answers = [await _post(app, key=None, host="10.1.2.3", json=BODY) for app in (fast, route)]
    _same(*answers)
    assert answers[0].status_code == 403


@pytest.mark.parametrize(
    "error",
    [SessionNotFoundError("session 's1' of user 'alice' in app 'weather' does not exist"),
     RedisConnectionError("connection refused")],
    ids=["no-session", "redis-down"],
)
async def test_an_error_while_starting_the_run_gets_the_handlers_answer(error):
    fast, route = (_app(fast_lane=lane, queue=FakeQueue(fail_with=error)) for lane in (True, False))
    answers = [await _post(app, json=BODY) for app in (fast, route)]
    _same(*answers)
    assert answers[0].status_code in (404, 503)


async def test_the_fast_lane_is_counted_under_the_run_sse_route_in_metrics():
    app = _app(fast_lane=True)
    await _post(app, json=BODY)
    transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 40000))
    async with httpx.AsyncClient(transport=transport, base_url="http://agentq.test") as http:
        text = (await http.get("/metrics")).text
    assert 'agentq_api_requests_total{method="POST",route="/run_sse",status="200"} 1.0' in text
    assert "agentq_api_first_event_seconds_count 1.0" in text


# POST /apps/{app}/users/{user}/sessions: the session fast lane


def _sessions_app(*, fast_lane: bool):
    app = _app(fast_lane=fast_lane)
    app.state.services = Services(session_service=InMemorySessionService(), artifact_service=InMemoryArtifactService(),
                                  queue=None)
    return app


async def _create_session(app, path: str = "/apps/weather/users/alice/sessions", *, key: str | None = ALICE_KEY,
                          **kwargs) -> httpx.Response:
    transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 40000), raise_app_exceptions=False)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with httpx.AsyncClient(transport=transport, base_url="http://agentq.test", headers=headers) as http:
        return await http.post(path, **kwargs)


def _same_but_the_clock(fast: httpx.Response, route: httpx.Response) -> None:
    """As ``_same``, with the session's lastUpdateTime (when each was made) taken out of both bodies."""
    bodies = [response.json() for response in (fast, route)]
    for body in bodies:
        assert body.pop("lastUpdateTime") > 0
    # the two clocks can print with a different number of digits: the lengths may differ by that alone
    headers = [{k: v for k, v in response.headers.items() if k != "content-length"} for response in (fast, route)]
    assert (fast.status_code, headers[0]) == (route.status_code, headers[1])
    assert bodies[0] == bodies[1]


async def test_a_session_created_with_an_id_and_state_is_served_by_the_fast_lane_with_the_routes_answer():
    fast, route = _sessions_app(fast_lane=True), _sessions_app(fast_lane=False)
    body = {"sessionId": "mine", "state": {"city": "Paris"}}
    answers = [await _create_session(app, json=body) for app in (fast, route)]
    _same_but_the_clock(*answers)
    assert answers[0].json()["id"] == "mine" and answers[0].json()["state"] == {"city": "Paris"}
    assert (fast.state.route_calls, route.state.route_calls) == (0, 1)
    stored = await fast.state.services.session_service.get_session(app_name="weather", user_id="alice",
                                                                   session_id="mine")
    assert stored.state == {"city": "Paris"}


async def test_a_session_created_without_a_body_is_served_by_the_fast_lane():
    app = _sessions_app(fast_lane=True)
    answer = await _create_session(app)
    assert answer.status_code == 200 and app.state.route_calls == 0
    assert answer.json()["appName"] == "weather" and answer.json()["userId"] == "alice"
    assert answer.json()["events"] == []


@pytest.mark.parametrize(
    "request_args",
    [
        {"content": b"{not json", "headers": {"content-type": "application/json"}},
        {"json": {"sessionId": ""}},
        {"json": ["mine"]},
        {"content": b'{"sessionId": "mine"}', "headers": {"content-type": "text/plain"}},
        {"json": {"sessionId": "mine"}, "key": None},
        {"json": {"sessionId": "mine"}, "key": "not-a-configured-key"},
        {"json": {"sessionId": "mine"}, "path": "/apps/weather/users/bob/sessions"},
        {"json": {"sessionId": "mine"}, "path": "/apps/elsewhere/users/alice/sessions"},
    ],
    ids=["bad-json", "empty-id", "not-an-object", "text-plain", "no-key", "bad-key", "other-user", "unknown-app"],
)
async def test_the_session_fast_lane_gives_every_other_request_the_routes_own_answer(request_args):
    fast, route = _sessions_app(fast_lane=True), _sessions_app(fast_lane=False)
    key = request_args.pop("key", ALICE_KEY)
    answers = [await _create_session(app, key=key, **request_args) for app in (fast, route)]
    _same(*answers)
    assert 400 <= answers[0].status_code < 500


async def test_a_session_id_taken_already_gets_the_handlers_conflict_answer():
    fast, route = _sessions_app(fast_lane=True), _sessions_app(fast_lane=False)
    for app in (fast, route):
        await _create_session(app, json={"sessionId": "mine"})
    answers = [await _create_session(app, json={"sessionId": "mine"}) for app in (fast, route)]
    _same(*answers)
    assert answers[0].status_code == 409 and fast.state.route_calls == 0


async def test_a_session_seeded_with_events_is_left_to_the_route():
    app = _sessions_app(fast_lane=True)
    seed = {"author": "user", "invocationId": "e-0", "content": {"role": "user", "parts": [{"text": "hi"}]}}
    answer = await _create_session(app, json={"sessionId": "seeded", "events": [seed]})
    assert answer.status_code == 200 and app.state.route_calls == 1
    assert [event["content"]["parts"][0]["text"] for event in answer.json()["events"]] == ["hi"]
