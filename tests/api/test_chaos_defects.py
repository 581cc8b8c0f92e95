"""The chaos run's defects (issue 12), each against a real ``agentq api`` process, a real worker and real Redis.

Deep JSON refused at the door, resume ids past the end or out of range, who may read the operations routes,
slow and oversized clients cut off, and session status frames that name their invocation.
"""

from __future__ import annotations

import json
import socket
import uuid

import httpx
import pytest

from agentq.demo import EXAMPLE_APPS
from agentq.local_stack import LocalStack
from api import ApiSettings, create_app
from api.access.auth import parse_keys, parse_public_routes
from api.access.limits import MAX_JSON_DEPTH, json_depth
from api.streams.sse_client import read_frames
from runtime.errors import UsageError

from .conftest import make_client

ALICE_KEY = "chaos-alice-key"
ADMIN_KEY = "chaos-admin-key"
KEYS = {ALICE_KEY: {"users": ["alice"], "apps": ["weather"]}, ADMIN_KEY: {"users": ["*"], "apps": ["*"]}}
MESSAGE = {"role": "user", "parts": [{"text": "What is the weather in Paris?"}]}
SESSIONS = "/apps/weather/users/alice/sessions"
TIMEOUT_S = 10  # a stream that never ends fails the test instead of hanging it


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    """The API (keys, docs public) with short header and body deadlines, a worker and redis-server."""
    env = {"GOOGLE_API_KEY": "", "GEMINI_API_KEY": "", "AGENTQ_HEADER_TIMEOUT": "1", "AGENTQ_BODY_TIMEOUT": "1",
           "AGENTQ_API_PUBLIC_ROUTES": "health,docs"}
    local = LocalStack(tmp_path_factory.mktemp("chaos"), apps=EXAMPLE_APPS, api_keys_json=json.dumps(KEYS),
                       extra_env=env)
    with local:
        yield local


def client(stack: LocalStack, key: str | None = ALICE_KEY) -> httpx.AsyncClient:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.AsyncClient(base_url=stack.base_url, headers=headers, timeout=TIMEOUT_S)


def nested(depth: int) -> dict:
    """A JSON object whose objects nest ``depth`` levels deep, itself included."""
    value: dict = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


async def new_session(http: httpx.AsyncClient) -> str:
    session_id = f"s-{uuid.uuid4().hex[:8]}"
    assert (await http.post(SESSIONS, json={"sessionId": session_id})).status_code == 200
    return session_id


async def run_to_the_end(http: httpx.AsyncClient, session_id: str, **body) -> tuple[str, list]:
    """Enqueue on ``session_id`` and follow the invocation until it settles: its id and its frames."""
    started = await http.post(f"{SESSIONS}/{session_id}/invocations", json={"newMessage": MESSAGE, **body})
    assert started.status_code == 202, started.text
    invocation_id = started.json()["invocationId"]
    async with http.stream("GET", f"/invocations/{invocation_id}/events") as response:
        frames = [frame async for frame in read_frames(response)]
    return invocation_id, frames


# Deep JSON: refused at the door, never stored; what is accepted reads back.

DEEP = 256


def deep_bodies(session_id: str) -> dict[str, tuple[str, dict]]:
    return {
        "session state": (SESSIONS, {"sessionId": session_id, "state": nested(DEEP)}),
        "stateDelta": (f"{SESSIONS}/{session_id}/invocations", {"newMessage": MESSAGE, "stateDelta": nested(DEEP)}),
        "function response": ("/invocations/e-unknown/function-responses",
                              {"functionResponses": [{"id": "c1", "name": "f", "response": nested(DEEP)}]}),
        "/run_sse": ("/run_sse", {"appName": "weather", "userId": "alice", "sessionId": session_id,
                                  "newMessage": MESSAGE, "stateDelta": nested(DEEP)}),
    }


@pytest.mark.parametrize("what", ["session state", "stateDelta", "function response", "/run_sse"])
async def test_deep_json_is_refused_at_the_door_naming_the_limit_and_nothing_is_stored(stack, what):
    async with client(stack) as http:
        session_id = f"s-{uuid.uuid4().hex[:8]}"
        if what != "session state":
            assert (await http.post(SESSIONS, json={"sessionId": session_id})).status_code == 200
        path, body = deep_bodies(session_id)[what]
        refused = await http.post(path, json=body)
        session = await http.get(f"{SESSIONS}/{session_id}")
        invocations = await http.get("/apps/weather/users/alice/invocations", params={"sessionId": session_id})
    depth = json_depth(json.dumps(body).encode())
    assert (refused.status_code, refused.json()) == (400, {
        "error": "JsonTooDeepError",
        "detail": f"the request body nests JSON {depth} levels deep; the limit is {MAX_JSON_DEPTH} levels"})
    if what == "session state":
        assert session.status_code == 404
    else:
        assert (session.status_code, session.json()["state"], session.json()["events"]) == (200, {}, [])
        assert invocations.json()["invocations"] == []


async def test_json_nested_to_the_limit_round_trips_through_a_run_and_the_session_stays_readable(stack):
    delta = nested(MAX_JSON_DEPTH - 1)  # the body itself is the one level more
    async with client(stack) as http:
        session_id = await new_session(http)
        invocation_id, _ = await run_to_the_end(http, session_id, stateDelta=delta)
        one_more = await http.post(f"{SESSIONS}/{session_id}/invocations",
                                   json={"newMessage": MESSAGE, "stateDelta": {"b": delta}})
        record = await http.get(f"/invocations/{invocation_id}")
        session = await http.get(f"{SESSIONS}/{session_id}")
    assert (record.json()["status"], one_more.status_code) == ("completed", 400)
    assert (session.status_code, session.json()["state"]) == (200, delta)


def test_json_depth_counts_objects_and_arrays_but_not_brackets_in_strings():
    texts = ['"x"', "{}", '[{"a": [1]}]', '{"a": "[[[{{{\\"]]"}']
    assert [json_depth(text.encode()) for text in texts] == [0, 1, 3, 1]


# Last-Event-ID: past the end of a settled invocation ends the stream; out of range or past a stream: 400.

async def test_last_event_id_past_the_end_of_a_settled_invocation_ends_the_stream(stack):
    async with client(stack) as http:
        invocation_id, frames = await run_to_the_end(http, await new_session(http))
        events_url = f"/invocations/{invocation_id}/events"
        far = await http.get(events_url, headers={"Last-Event-ID": "9999999999999-0"})
        at_last = await http.get(events_url, headers={"Last-Event-ID": frames[-1].id})
        async with http.stream("GET", events_url, headers={"Last-Event-ID": frames[-2].id}) as response:
            rest = [frame async for frame in read_frames(response)]
    assert (far.status_code, far.content, at_last.status_code) == (204, b"", 204)
    assert [(frame.id, frame.data) for frame in rest] == [(frames[-1].id, frames[-1].data)]


@pytest.mark.parametrize("route", ["invocation", "session"])
async def test_last_event_id_beyond_64_bits_is_a_400_naming_the_header(stack, route):
    async with client(stack) as http:
        session_id = await new_session(http)
        invocation_id, _ = await run_to_the_end(http, session_id)
        url = f"/invocations/{invocation_id}/events" if route == "invocation" else f"{SESSIONS}/{session_id}/events"
        response = await http.get(url, headers={"Last-Event-ID": "99999999999999999999-0"})
    assert (response.status_code, response.json()) == (400, {
        "error": "InvalidLastEventIdError",
        "detail": "Last-Event-ID '99999999999999999999-0' is out of range: each part of a stream entry id is at "
                  "most 18446744073709551615"})


async def test_last_event_id_past_the_end_of_a_session_stream_is_a_400(stack):
    async with client(stack) as http:
        session_id = await new_session(http)
        _, frames = await run_to_the_end(http, session_id)
        async with http.stream("GET", f"{SESSIONS}/{session_id}/events",
                               headers={"Last-Event-ID": "9999999999999-0"}) as response:
            await response.aread()
    assert (response.status_code, response.json()) == (400, {
        "error": "InvalidLastEventIdError",
        "detail": f"Last-Event-ID (or ?after=) '9999999999999-0' is past the newest entry of the stream "
                  f"({frames[-1].id!r}): resume after an id the stream sent"})


# Session SSE status frames name their invocation.

async def test_session_sse_status_frames_name_their_invocation(stack):
    async with client(stack) as http:
        session_id = await new_session(http)
        first, _ = await run_to_the_end(http, session_id)
        second, _ = await run_to_the_end(http, session_id)
        statuses = []
        async with http.stream("GET", f"{SESSIONS}/{session_id}/events") as response:
            async for frame in read_frames(response):
                if frame.event == "status":
                    statuses.append((frame.data["invocationId"], frame.data["status"]))
                if statuses[-1:] == [(second, "completed")]:
                    break
    assert statuses == [(first, "queued"), (first, "running"), (first, "completed"),
                        (second, "queued"), (second, "running"), (second, "completed")]


# Who may read /metrics, /docs and /openapi.json.

async def test_with_keys_metrics_need_a_key_reaching_every_user_and_docs_are_public_only_when_configured(stack):
    async with client(stack, key=None) as anyone, client(stack) as alice, client(stack, ADMIN_KEY) as admin:
        answers = {
            "metrics, no key": (await anyone.get("/metrics")).status_code,
            "metrics, alice": (await alice.get("/metrics")).json(),
            "metrics, admin": (await admin.get("/metrics")).status_code,
            "docs, no key": (await anyone.get("/docs")).status_code,
            "openapi, no key": (await anyone.get("/openapi.json")).status_code,
            "health, no key": (await anyone.get("/health")).status_code,
        }
    assert answers == {
        "metrics, no key": 401,
        "metrics, alice": {"error": "KeyTooNarrowError", "detail": "/metrics counts across every user and app: it "
                           "needs a key with users ['*'] and apps ['*'] (or add metrics to AGENTQ_API_PUBLIC_ROUTES)"},
        "metrics, admin": 200,
        "docs, no key": 200,
        "openapi, no key": 200,
        "health, no key": 200,
    }


@pytest.mark.parametrize("path", ["/metrics", "/docs", "/openapi.json", "/redoc"])
async def test_by_default_ops_routes_need_a_key_and_without_keys_only_loopback_peers_get_them(memory_services, path):
    keyed = create_app(ApiSettings(app_names=["weather"], keys=parse_keys(KEYS)), memory_services)
    open_app = create_app(ApiSettings(app_names=["weather"]), memory_services)
    async with make_client(keyed) as no_key, make_client(keyed, key=ADMIN_KEY) as admin:
        keyed_answers = ((await no_key.get(path)).status_code, (await admin.get(path)).status_code)
    async with make_client(open_app, host="203.0.113.7") as remote, make_client(open_app) as local:
        open_answers = ((await remote.get(path)).json()["error"], (await local.get(path)).status_code)
    assert (keyed_answers, open_answers) == ((401, 200), ("NotLoopbackError", 200))


def test_public_routes_parse_from_names_and_an_unknown_one_is_refused_naming_it():
    assert parse_public_routes("health, Metrics,docs") == frozenset({"health", "metrics", "docs"})
    assert parse_public_routes("none") == frozenset()
    with pytest.raises(UsageError) as caught:
        parse_public_routes("health,admin")
    assert str(caught.value) == "AGENTQ_API_PUBLIC_ROUTES names 'admin': use any of health, metrics, docs (or none)"


# Slow and oversized clients.

def raw_exchange(stack: LocalStack, request: bytes) -> bytes:
    """Send ``request`` as is and read until the server closes (a server that never answers: socket timeout)."""
    with socket.create_connection(("127.0.0.1", stack.api_port), timeout=TIMEOUT_S) as sock:
        sock.sendall(request)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


def status_and_json(answer: bytes) -> tuple[bytes, dict]:
    head, _, body = answer.partition(b"\r\n\r\n")
    return head.split(b"\r\n", 1)[0], json.loads(body)


def test_slow_headers_get_a_408_and_the_connection_is_closed(stack):
    answer = raw_exchange(stack, b"GET /health HTTP/1.1\r\nHost: agentq\r\n")  # the blank line never comes
    assert status_and_json(answer) == (b"HTTP/1.1 408 Request Timeout", {
        "error": "RequestTimeoutError", "detail": "the request headers did not arrive within 1 seconds"})


def test_an_oversized_header_gets_a_431(stack):
    request = b"GET /health HTTP/1.1\r\nHost: agentq\r\nX-Padding: " + b"a" * 1_000_000 + b"\r\n\r\n"
    assert status_and_json(raw_exchange(stack, request)) == (b"HTTP/1.1 431 Request Header Fields Too Large", {
        "error": "HeadersTooLargeError", "detail": "the request headers exceed the limit of 65536 bytes"})


def test_a_slow_body_gets_a_408_and_the_connection_is_closed(stack):
    request = (f"POST {SESSIONS} HTTP/1.1\r\nHost: agentq\r\nAuthorization: Bearer {ALICE_KEY}\r\n"
               "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{").encode()  # 99 bytes never come
    assert status_and_json(raw_exchange(stack, request)) == (b"HTTP/1.1 408 Request Timeout", {
        "error": "RequestTimeoutError", "detail": "the request body did not arrive within 1 seconds"})
