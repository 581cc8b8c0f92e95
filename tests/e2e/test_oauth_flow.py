"""OAuth 2 credentials end to end, over real HTTP against real agentq api and worker processes and real Redis,
with an OAuth provider on loopback written here (authorization code + PKCE S256, refresh grant, userinfo).

A tool asks for the user's consent; the invocation parks on ``adk_request_credential``; the sign-in link
sends the user to the provider, which sends them back to agentq's callback; the code is exchanged and the
invocation completes with the user's name. A later invocation, once the token expired, runs on a refreshed
token without asking again. Then every Redis key and value, the AOF, the webhooks delivered and the api/worker
logs are searched for every token the provider issued and for the client secret: none is there.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import secrets
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest
import redis
from cryptography.fernet import Fernet

from agentq.local_stack import LocalStack
from runtime.auth.token_endpoint import EXPIRY_MARGIN_S

from .conftest import user_message
from .oauth_apps import CLIENT_ID, CLIENT_SECRET

APP = "oauth_demo"
NAME = "Ada Lovelace"
USABLE_S = 8
"""How long a token the provider issues is used before agentq counts it as expired (its lifetime is this plus
agentq's expiry margin): the first invocation finishes within it, the second starts after it."""


class Provider:
    """A small OAuth 2 provider: what it issued and what it was asked, for the test to check."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.codes: dict[str, dict] = {}
        self.access: dict[str, str] = {}
        """Live access token -> the grant that issued it (``authorization_code`` or ``refresh_token``)."""
        self.refresh: set[str] = set()
        self.issued: list[str] = []
        """Every token and code it ever issued (the secrets the scan looks for)."""
        self.verifiers: list[str] = []
        self.grants: list[str] = []
        self.userinfo_tokens: list[str] = []
        self.deny = False
        self.webhooks: list[str] = []
        """The bodies of agentq's webhook notifications (this server is the app's webhook receiver too)."""
        self.last_issue = 0.0
        """When it last issued tokens (time.time())."""
        self.usable_s = USABLE_S
        """How long the tokens it issues are usable by agentq (0: short-lived, expired for agentq at once)."""

    def authorize(self, query: dict[str, str]) -> tuple[int, dict[str, str], dict]:
        if query.get("client_id") != CLIENT_ID or query.get("code_challenge_method") != "S256" or \
                query.get("response_type") != "code" or not query.get("code_challenge"):
            return 400, {}, {"error": "invalid_request"}
        redirect = query["redirect_uri"]
        if self.deny:
            return 302, {"Location": f"{redirect}?{urlencode({'error': 'access_denied', 'state': query['state']})}"}, {}
        code = "code-" + secrets.token_urlsafe(16)
        with self.lock:
            self.codes[code] = {"challenge": query["code_challenge"], "redirect_uri": redirect}
            self.issued.append(code)
        return 302, {"Location": f"{redirect}?{urlencode({'code': code, 'state': query['state']})}"}, {}

    def token(self, form: dict[str, str], authorization: str) -> tuple[int, dict, dict]:
        expected = "Basic " + base64.b64encode(f"{CLIENT_ID}:{CLIENT_SECRET}".encode()).decode()
        if authorization != expected:
            return 401, {}, {"error": "invalid_client"}
        grant = form.get("grant_type")
        with self.lock:
            self.grants.append(grant)
            if grant == "authorization_code":
                issued = self.codes.pop(form.get("code", ""), None)  # a code is used once
                verifier = form.get("code_verifier", "")
                self.verifiers.append(verifier)
                challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
                if issued is None or issued["redirect_uri"] != form.get("redirect_uri") or \
                        issued["challenge"] != challenge:
                    return 400, {}, {"error": "invalid_grant"}
            elif grant == "refresh_token":
                if form.get("refresh_token") not in self.refresh:
                    return 400, {}, {"error": "invalid_grant"}
                self.refresh.discard(form["refresh_token"])  # rotated: the old pair stops working
                self.access = {token: how for token, how in self.access.items() if how != "revoked"}
                for token in list(self.access):
                    self.access[token] = "revoked"
            else:
                return 400, {}, {"error": "unsupported_grant_type"}
            access, refresh = "at-" + secrets.token_urlsafe(24), "rt-" + secrets.token_urlsafe(24)
            self.access[access] = grant
            self.refresh.add(refresh)
            self.issued += [access, refresh]
            self.last_issue = time.time()
        return 200, {}, {"access_token": access, "refresh_token": refresh, "token_type": "Bearer",
                         "expires_in": EXPIRY_MARGIN_S + self.usable_s}

    def userinfo(self, authorization: str) -> tuple[int, dict, dict]:
        token = authorization.removeprefix("Bearer ")
        with self.lock:
            self.userinfo_tokens.append(token)
            if self.access.get(token) in (None, "revoked"):
                return 401, {}, {"error": "invalid_token"}
        return 200, {}, {"name": NAME}


def serve(provider: Provider) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def _answer(self, status, headers, body):
            import json

            payload = json.dumps(body).encode()
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def do_GET(self):  # noqa: N802 - http.server's name
            url = urlsplit(self.path)
            query = {k: v[0] for k, v in parse_qs(url.query).items()}
            if url.path == "/authorize":
                self._answer(*provider.authorize(query))
            elif url.path == "/userinfo":
                self._answer(*provider.userinfo(self.headers.get("Authorization", "")))
            else:
                self._answer(404, {}, {})

        def do_POST(self):  # noqa: N802
            length = int(self.headers.get("Content-Length", 0))
            raw = self.rfile.read(length).decode()
            form = {k: v[0] for k, v in parse_qs(raw).items()}
            if urlsplit(self.path).path == "/token":
                self._answer(*provider.token(form, self.headers.get("Authorization", "")))
            elif urlsplit(self.path).path == "/hook":
                with provider.lock:
                    provider.webhooks.append(raw)
                self._answer(200, {}, {})
            else:
                self._answer(404, {}, {})

        def log_message(self, *args):  # quiet
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture(scope="module")
def provider():
    state = Provider()
    server = serve(state)
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}"
    yield state
    server.shutdown()


@pytest.fixture(scope="module")
def oauth_stack(tmp_path_factory, provider):
    local = LocalStack(tmp_path_factory.mktemp("oauth"), apps=["tests.e2e.oauth_apps:app", "tests.e2e.oauth_apps:adk_style_app"], extra_env={
        "AGENTQ_CREDENTIAL_KEY": Fernet.generate_key().decode(), "OAUTH_TEST_PROVIDER": provider.base_url,
        "AGENTQ_WEBHOOKS": f"{APP}={provider.base_url}/hook",
        "GOOGLE_API_KEY": "", "GEMINI_API_KEY": ""})
    with local:
        yield local


async def _enqueue(http: httpx.AsyncClient, user: str, text: str, app: str = APP) -> str:
    session_id = "s-" + uuid.uuid4().hex[:8]
    created = await http.post(f"/apps/{app}/users/{user}/sessions", json={"sessionId": session_id})
    assert created.status_code == 200, created.text
    answer = await http.post(f"/apps/{app}/users/{user}/sessions/{session_id}/invocations",
                             json={"newMessage": user_message(text)})
    assert answer.status_code == 202, answer.text
    return answer.json()["invocationId"]


async def _settled(http: httpx.AsyncClient, invocation_id: str, wanted: str) -> dict:
    """The record once its status is ``wanted`` (polled; fails on another settled status)."""
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        record = (await http.get(f"/invocations/{invocation_id}")).json()
        if record["status"] == wanted:
            return record
        assert record["status"] in ("queued", "running", "parked"), record
        await asyncio.sleep(0.1)
    raise AssertionError(f"invocation {invocation_id} never became {wanted}: {record}")


async def _final_text(http: httpx.AsyncClient, user: str, record: dict, app: str = APP) -> str:
    session = (await http.get(f"/apps/{app}/users/{user}/sessions/{record['sessionId']}")).json()
    texts = [part["text"] for event in session["events"] if event["author"] == "assistant"
             for part in (event.get("content") or {}).get("parts", []) if "text" in part]
    return texts[-1]


def _everything_in_redis(url: str) -> str:
    """Every key and every value (by type, and DUMPed) as one text."""
    chunks = []
    with redis.Redis.from_url(url) as client:
        for key in client.scan_iter(count=1000):
            kind = client.type(key).decode()
            chunks.append(repr(key))
            if kind == "string":
                chunks.append(repr(client.get(key)))
            elif kind == "hash":
                chunks.append(repr(client.hgetall(key)))
            elif kind == "list":
                chunks.append(repr(client.lrange(key, 0, -1)))
            elif kind == "set":
                chunks.append(repr(client.smembers(key)))
            elif kind == "zset":
                chunks.append(repr(client.zrange(key, 0, -1, withscores=True)))
            elif kind == "stream":
                chunks.append(repr(client.xrange(key)))
            chunks.append(repr(client.dump(key)))
    return "\n".join(chunks)


@pytest.mark.timeout(300)
async def test_a_parked_oauth_request_is_signed_in_resumed_refreshed_later_and_no_token_is_stored_or_logged(
        oauth_stack, provider):
    async with httpx.AsyncClient(base_url=oauth_stack.base_url, timeout=30) as http:
        invocation_id = await _enqueue(http, "ada", "Who am I?")
        parked = await _settled(http, invocation_id, "parked")
        [pending] = parked["pendingCalls"]
        assert pending["name"] == "adk_request_credential"
        assert pending["args"]["authConfig"]["rawAuthCredential"]["oauth2"]["clientId"] == CLIENT_ID

        started = time.monotonic()
        authorize = await http.get(f"/invocations/{invocation_id}/oauth/{pending['id']}/authorize")
        assert authorize.status_code == 302, authorize.text
        to_provider = urlsplit(authorize.headers["location"])
        asked = {k: v[0] for k, v in parse_qs(to_provider.query).items()}
        assert (asked["client_id"], asked["code_challenge_method"], asked["scope"]) == (CLIENT_ID, "S256", "profile")
        assert "code_verifier" not in asked and CLIENT_SECRET not in authorize.headers["location"]
        back = httpx.get(authorize.headers["location"])  # the user's browser at the provider, consenting
        assert back.status_code == 302
        callback_url = back.headers["location"]
        assert callback_url.startswith(f"{oauth_stack.base_url}/oauth/callback?")
        signed_in = await http.get(callback_url)
        assert signed_in.status_code == 200, signed_in.text
        assert "Signed in" in signed_in.text
        done = await _settled(http, invocation_id, "completed")
        print(f"sign-in to completed: {time.monotonic() - started:.2f} s")
        assert await _final_text(http, "ada", done) == f"You are {NAME}."
        assert provider.grants == ["authorization_code"]
        assert provider.access[provider.userinfo_tokens[0]] == "authorization_code"

        replayed = await http.get(callback_url)  # the state is single use
        assert replayed.status_code == 400 and "already used" in replayed.json()["detail"]

        # a later invocation, once agentq counts the token as expired: refreshed, not asked again
        await asyncio.sleep(max(0.0, provider.last_issue + USABLE_S + 1 - time.time()))
        later = await _enqueue(http, "ada", "Who am I, again?")
        later_done = await _settled(http, later, "completed")
        assert await _final_text(http, "ada", later_done) == f"You are {NAME}."
        assert provider.grants == ["authorization_code", "refresh_token"]
        assert provider.access[provider.userinfo_tokens[-1]] == "refresh_token"

        deadline = time.monotonic() + 60  # the webhook of the completed invocation is delivered
        while not any(later in body and "completed" in body for body in provider.webhooks):
            assert time.monotonic() < deadline, f"no webhook for {later}: {provider.webhooks}"
            await asyncio.sleep(0.2)

    secrets_to_hide = [*provider.issued, *provider.verifiers, CLIENT_SECRET]
    tokens = [value for value in provider.issued if value.startswith(("at-", "rt-"))]
    assert len(tokens) == 4  # two access and two refresh tokens, every one searched for below
    everything = _everything_in_redis(oauth_stack.redis.url)
    aof = b"".join(path.read_bytes() for path in (oauth_stack.data_dir / "redis").rglob("*") if path.is_file())
    logs = {name: oauth_stack.log_tail(name, chars=10**8) for name in ("api", "worker0")}
    print(f"searched {len(everything)} chars of Redis values, {len(aof)} AOF bytes, "
          f"{sum(map(len, logs.values()))} log chars")
    assert "adk_request_credential" in everything and "cred:" in everything  # the scan sees the right keys
    hooks = "\n".join(provider.webhooks)
    assert "adk_request_credential" in hooks  # the parked notification names the pending call
    for secret in secrets_to_hide:
        assert secret not in everything, "a secret is readable in Redis"
        assert secret not in hooks, "a secret is in a webhook"
        assert secret.encode() not in aof, "a secret is readable in the AOF"
        assert secret not in logs["worker0"], "a secret is in the worker's log"
    for secret in [*tokens, CLIENT_SECRET]:
        assert secret not in logs["api"], "a token is in the api's log"


@pytest.mark.timeout(300)
async def test_a_refused_consent_a_forged_state_and_an_unknown_call_are_clear_4xx_and_store_nothing(
        oauth_stack, provider):
    async with httpx.AsyncClient(base_url=oauth_stack.base_url, timeout=30) as http:
        invocation_id = await _enqueue(http, "bob", "Who am I?")
        [pending] = (await _settled(http, invocation_id, "parked"))["pendingCalls"]

        unknown = await http.get(f"/invocations/{invocation_id}/oauth/adk-no-such-call/authorize")
        assert unknown.status_code == 409 and "no pending adk_request_credential" in unknown.json()["detail"]
        forged = await http.get("/oauth/callback", params={"state": "forged", "code": "whatever"})
        assert forged.status_code == 400 and "unknown, already used or expired OAuth state" in forged.json()["detail"]
        missing = await http.get("/oauth/callback")
        assert missing.status_code == 400 and "no state" in missing.json()["detail"]
        smuggled = dict(pending["args"]["authConfig"], exchangedAuthCredential={
            "authType": "oauth2", "oauth2": {"accessToken": "at-smuggled-into-the-history"}})
        answered = await http.post(f"/invocations/{invocation_id}/function-responses", json={"functionResponses": [
            {"id": pending["id"], "name": pending["name"], "response": {"authConfig": smuggled}}]})
        assert answered.status_code == 400 and "carries a credential" in answered.json()["detail"]

        provider.deny = True
        try:
            authorize = await http.get(f"/invocations/{invocation_id}/oauth/{pending['id']}/authorize")
            back = httpx.get(authorize.headers["location"])
        finally:
            provider.deny = False
        refused = await http.get(back.headers["location"])
        assert refused.status_code == 400 and "access_denied" in refused.json()["detail"]
        still = (await http.get(f"/invocations/{invocation_id}")).json()
        assert (still["status"], [c["id"] for c in still["pendingCalls"]]) == ("parked", [pending["id"]])

        # the user tries again and consents: the same request completes
        authorize = await http.get(f"/invocations/{invocation_id}/oauth/{pending['id']}/authorize")
        signed_in = await http.get(httpx.get(authorize.headers["location"]).headers["location"])
        assert signed_in.status_code == 200, signed_in.text
        assert await _final_text(http, "bob", await _settled(http, invocation_id, "completed")) == f"You are {NAME}."
        again = await http.get(f"/invocations/{invocation_id}/oauth/{pending['id']}/authorize")
        assert again.status_code == 409  # answered: no second sign-in for it
    with redis.Redis.from_url(oauth_stack.redis.url) as client:
        # bob's only credential is the one of the consent he gave; the refused attempt left no state behind
        assert len(list(client.scan_iter(match="agentq:{oauth_demo/bob}:cred:*"))) == 1
        assert list(client.scan_iter(match="agentq:oauth-state:*")) == []
    assert "at-smuggled-into-the-history" not in _everything_in_redis(oauth_stack.redis.url)


@pytest.mark.parametrize("key", [None, "not-a-fernet-key"])
async def test_the_sign_in_routes_answer_404_when_the_key_is_missing_and_503_when_malformed_naming_it(
        oauth_stack, monkeypatch, key):
    from api.app import create_app
    from api.deps import Services
    from api.settings import ApiSettings
    from tests.api.conftest import make_client
    from worker.client import AgentqClient

    if key is None:
        monkeypatch.delenv("AGENTQ_CREDENTIAL_KEY", raising=False)
    else:
        monkeypatch.setenv("AGENTQ_CREDENTIAL_KEY", key)
    queue = AgentqClient(oauth_stack.redis.url)
    app = create_app(ApiSettings(app_names=[APP]), Services(
        session_service=queue.session_service, artifact_service=queue.artifact_service, queue=queue))
    try:
        async with make_client(app) as http:
            answers = [await http.get("/invocations/e-x/oauth/adk-x/authorize"),
                       await http.get("/oauth/callback", params={"state": "s", "code": "c"})]
    finally:
        await queue.aclose()
    for answer in answers:
        assert answer.status_code == (404 if key is None else 503)
        assert "AGENTQ_CREDENTIAL_KEY" in answer.json()["detail"] and "Fernet.generate_key" in answer.json()["detail"]


async def _until(http: httpx.AsyncClient, invocation_id: str, *statuses: str) -> dict:
    """The record once its status is one of ``statuses`` (polled)."""
    async with asyncio.timeout(90):
        while (record := (await http.get(f"/invocations/{invocation_id}")).json())["status"] not in statuses:
            await asyncio.sleep(0.1)
    return record


async def _sign_in(http: httpx.AsyncClient, invocation_id: str, call_id: str) -> httpx.Response:
    """Open the sign-in link in ``http`` (a browser: it keeps its cookies), consent at the provider, come back."""
    authorize = await http.get(f"/invocations/{invocation_id}/oauth/{call_id}/authorize")
    assert authorize.status_code == 302, authorize.text
    return await http.get(httpx.get(authorize.headers["location"]).headers["location"])


def _credential_keys(url: str, app: str, user: str) -> list[bytes]:
    with redis.Redis.from_url(url) as client:
        return sorted(client.scan_iter(match=f"agentq:{{{app}/{user}}}:cred*"))


@pytest.mark.timeout(300)
async def test_after_a_sign_in_with_a_short_lived_token_a_tool_reading_only_get_auth_response_gets_a_refreshed_one(
        oauth_stack, provider):
    adk_style = "oauth_adk_style"
    provider.usable_s = 0  # the token it issues counts as expired for agentq at once: the resumed run refreshes it
    try:
        async with httpx.AsyncClient(base_url=oauth_stack.base_url, timeout=30) as http:
            invocation_id = await _enqueue(http, "cy", "Who am I?", app=adk_style)
            [pending] = (await _settled(http, invocation_id, "parked"))["pendingCalls"]
            grants_before = len(provider.grants)
            signed_in = await _sign_in(http, invocation_id, pending["id"])
            assert signed_in.status_code == 200, signed_in.text
            record = await _until(http, invocation_id, "completed", "parked", "failed")
            assert (record["status"], record["pendingCalls"]) == ("completed", [])  # not asked to sign in again
            assert await _final_text(http, "cy", record, app=adk_style) == f"You are {NAME}."
    finally:
        provider.usable_s = USABLE_S
    # refreshed with the full config (client secret included), not the redacted one of the event
    assert provider.grants[grants_before:] == ["authorization_code", "refresh_token"]
    assert provider.access.get(provider.userinfo_tokens[-1]) == "refresh_token"
    worker_log = oauth_stack.log_tail("worker0", chars=10**8)
    assert f"invocation {invocation_id} answered, but no credential is stored" not in worker_log
    assert "refreshing credential" not in worker_log


@pytest.mark.timeout(300)
async def test_a_sign_in_link_opened_in_another_browser_is_refused_403_and_stores_nothing(oauth_stack, provider):
    async with httpx.AsyncClient(base_url=oauth_stack.base_url, timeout=30) as dan:
        invocation_id = await _enqueue(dan, "dan", "Who am I?")
        [pending] = (await _settled(dan, invocation_id, "parked"))["pendingCalls"]
        authorize = await dan.get(f"/invocations/{invocation_id}/oauth/{pending['id']}/authorize")
        cookie = authorize.headers["set-cookie"]
        attributes = {part.strip().split("=")[0].lower() for part in cookie.split(";")[1:]}
        assert cookie.startswith("agentq_oauth_browser=") and "path=/oauth/callback" in cookie.lower()
        assert ({"httponly", "samesite"} <= attributes, "secure" in attributes) == (True, False)  # http here
        assert "samesite=lax" in cookie.lower()

        # dan forwards the provider's link; someone else signs in there with their account, in their browser
        forwarded = httpx.get(authorize.headers["location"]).headers["location"]
        async with httpx.AsyncClient(base_url=oauth_stack.base_url, timeout=30) as other:
            refused = await other.get(forwarded)
            assert refused.status_code == 403, refused.text
            assert refused.json()["error"] == "SignInFromOtherBrowserError"
            assert "not started in this browser" in refused.json()["detail"]
            assert "'agentq_oauth_browser' is missing" in refused.json()["detail"]

            # a browser with a sign-in cookie of its own (it opened some other sign-in link) is refused too
            other.cookies.set("agentq_oauth_browser", "its-own-sign-in", path="/oauth/callback")
            authorize = await dan.get(f"/invocations/{invocation_id}/oauth/{pending['id']}/authorize")
            different = await other.get(httpx.get(authorize.headers["location"]).headers["location"])
            assert different.status_code == 403 and "is different" in different.json()["detail"], different.text
        assert [key for key in _credential_keys(oauth_stack.redis.url, APP, "dan") if b":cred-req:" not in key] == []
        still = (await dan.get(f"/invocations/{invocation_id}")).json()
        assert (still["status"], [c["id"] for c in still["pendingCalls"]]) == ("parked", [pending["id"]])

        signed_in = await _sign_in(dan, invocation_id, pending["id"])  # in dan's own browser: it completes
        assert signed_in.status_code == 200, signed_in.text
        assert await _final_text(dan, "dan", await _settled(dan, invocation_id, "completed")) == f"You are {NAME}."


async def test_the_sign_in_cookie_is_secure_when_the_api_is_reached_over_https(oauth_stack, monkeypatch):
    from api.app import create_app
    from api.deps import Services
    from api.settings import ApiSettings
    from worker.client import AgentqClient

    async with httpx.AsyncClient(base_url=oauth_stack.base_url, timeout=30) as http:
        invocation_id = await _enqueue(http, "gus", "Who am I?")
        [pending] = (await _settled(http, invocation_id, "parked"))["pendingCalls"]
    monkeypatch.setenv("AGENTQ_CREDENTIAL_KEY", oauth_stack.extra_env["AGENTQ_CREDENTIAL_KEY"])
    queue = AgentqClient(oauth_stack.redis.url)
    app = create_app(ApiSettings(app_names=[APP]), Services(
        session_service=queue.session_service, artifact_service=queue.artifact_service, queue=queue))
    try:
        transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 40000))
        async with httpx.AsyncClient(transport=transport, base_url="https://agentq.test") as https:
            authorize = await https.get(f"/invocations/{invocation_id}/oauth/{pending['id']}/authorize")
    finally:
        await queue.aclose()
    assert authorize.status_code == 302, authorize.text
    attributes = [part.strip().lower() for part in authorize.headers["set-cookie"].split(";")[1:]]
    assert {"httponly", "samesite=lax", "secure", "path=/oauth/callback"} <= set(attributes), attributes


@pytest.mark.timeout(300)
async def test_stored_credentials_go_with_the_users_last_session_and_held_requests_with_their_session(
        oauth_stack, provider):
    url = oauth_stack.redis.url
    async with httpx.AsyncClient(base_url=oauth_stack.base_url, timeout=30) as http:
        signed = await _enqueue(http, "eve", "Who am I?")
        [pending] = (await _settled(http, signed, "parked"))["pendingCalls"]
        assert (await _sign_in(http, signed, pending["id"])).status_code == 200
        first = await _settled(http, signed, "completed")
        second = await _settled(http, await _enqueue(http, "eve", "Who am I, again?"), "completed")  # no sign-in
        stored = _credential_keys(url, APP, "eve")
        assert len([key for key in stored if key.startswith(b"agentq:{oauth_demo/eve}:cred:")]) == 1  # her token

        # a parked request's held config (client secret included) goes with its session
        parked = await _enqueue(http, "fay", "Who am I?")
        [request] = (await _settled(http, parked, "parked"))["pendingCalls"]
        held = f"agentq:{{oauth_demo/fay}}:cred-req:{parked}:{request['id']}".encode()
        assert _credential_keys(url, APP, "fay") == [held]
        fay_session = (await http.get(f"/invocations/{parked}")).json()["sessionId"]
        assert (await http.delete(f"/apps/{APP}/users/fay/sessions/{fay_session}")).status_code == 200
        assert _credential_keys(url, APP, "fay") == []

        # eve's credential is hers while she has a session, and goes with her last one
        assert (await http.delete(f"/apps/{APP}/users/eve/sessions/{first['sessionId']}")).status_code == 200
        assert _credential_keys(url, APP, "eve") == stored
        assert (await http.delete(f"/apps/{APP}/users/eve/sessions/{second['sessionId']}")).status_code == 200
        assert _credential_keys(url, APP, "eve") == []
