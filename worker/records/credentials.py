"""Users' credentials on Redis, encrypted, and the OAuth 2 authorization-code flow that fills them.

``RedisCredentialService`` is the worker's credential service (``runtime.auth.BaseCredentialService``): every
value it writes is sealed with ``AGENTQ_CREDENTIAL_KEY`` (``runtime.auth.sealing``), so no token or client
secret is readable in Redis, in an event, in a webhook or in a log line. ``OAuthAuthorizations`` is what the
HTTP API calls (it never touches Redis itself): ``start`` makes the provider URL of a pending
``adk_request_credential`` call (state + PKCE), ``finish`` takes the provider's redirect, exchanges the code,
keeps the credential and answers the call with ``{"authorized": true}``, which carries no token. A ``state`` is
bound to the browser that opened the sign-in link (a cookie the API sets, whose digest the state holds): a link
forwarded to someone else cannot store their account under this user. ``forget`` deletes what a deleted session
or user leaves here.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from runtime.auth import AuthConfig, AuthCredential, BaseCredentialService, token_endpoint
from runtime.auth.pkce import new_code_verifier, new_state, s256_challenge
from runtime.auth.requests import REQUEST_CREDENTIAL_FUNCTION_CALL_NAME
from runtime.auth.sealing import Sealer
from runtime.errors import CallNotPendingError, CredentialError
from runtime.redis_store import keys

log = logging.getLogger(__name__)

REQUEST_TTL_S = 7 * 24 * 3600
"""How long the full config of a pending credential request is kept: a parked invocation waits that long for
its user to sign in (after that the sign-in link answers that the request expired)."""

STATE_TTL_S = 600
"""How long a user has between opening the sign-in link and coming back from the provider."""

ANSWERED_REQUEST_TTL_S = 24 * 3600
"""How long the full config of a credential request is kept once the sign-in answered it: the resumed run (and a
run taken over after a worker died) refreshes a short-lived token with it, client secret included."""

AUTHORIZED = {"authorized": True}
"""The answer the API gives an ``adk_request_credential`` call once the credential is stored: no token."""


class RedisCredentialService(BaseCredentialService):
    """Credentials and held requests under ``keys.user_credential``/``keys.credential_request``, sealed.

    ``redis``: a callable returning the running loop's redis.asyncio client (``InvocationStore.redis`` is one),
    as each event loop of a process needs its own connections."""

    def __init__(self, redis: Callable[[], Any], sealer: Sealer):
        self._redis = redis
        self._sealer = sealer

    async def read_credential(self, app_name, user_id, credential_key):
        sealed = await self._redis().get(keys.user_credential(app_name, user_id, credential_key))
        return None if sealed is None else AuthCredential.model_validate_json(self._sealer.open(sealed))

    async def write_credential(self, app_name, user_id, credential_key, credential):
        # the whole model (its secret fields are hidden from repr, not from the dump)
        plain = credential.model_dump_json(by_alias=True, exclude_none=True)
        async with self._redis().pipeline(transaction=True) as pipe:  # one slot: the user's hash tag
            pipe.set(keys.user_credential(app_name, user_id, credential_key), self._sealer.seal(plain))
            pipe.sadd(keys.user_credential_keys(app_name, user_id), credential_key)  # deleted with the user
            await pipe.execute()

    async def hold_request(self, app_name, user_id, invocation_id, request_id, auth_config):
        plain = auth_config.model_dump_json(by_alias=True, exclude_none=True)
        await self._redis().set(keys.credential_request(app_name, user_id, invocation_id, request_id),
                                self._sealer.seal(plain), ex=REQUEST_TTL_S)

    async def held_request(self, app_name, user_id, invocation_id, request_id):
        sealed = await self._redis().get(keys.credential_request(app_name, user_id, invocation_id, request_id))
        return None if sealed is None else AuthConfig.model_validate_json(self._sealer.open(sealed))

    async def drop_request(self, app_name, user_id, invocation_id, request_id):
        await self._redis().delete(keys.credential_request(app_name, user_id, invocation_id, request_id))

    async def keep_answered_request(self, app_name: str, user_id: str, invocation_id: str, request_id: str) -> None:
        """Keep a request's full config ``ANSWERED_REQUEST_TTL_S`` more once its sign-in answered it (not dropped
        at once: the resumed run refreshes a short-lived token with it, then drops it)."""
        await self._redis().expire(keys.credential_request(app_name, user_id, invocation_id, request_id),
                                   ANSWERED_REQUEST_TTL_S)


async def forget(store: Any, app: str, user: str, requests: list[str], *, user_gone: bool) -> None:
    """Delete what a deleted session leaves here: the held configs of ``requests`` (``'invocation_id call_id'`` of
    the calls its cancelled invocations were parked on), and, when ``user_gone`` (the user's last session in the
    app was deleted), every credential stored for the user. ``store``: the worker's InvocationStore."""
    doomed = [keys.credential_request(app, user, *_text(request).split(" ", 1)) for request in requests]
    if user_gone:
        names = keys.user_credential_keys(app, user)
        stored = await store.mux.execute_command("SMEMBERS", names)
        doomed += [keys.user_credential(app, user, _text(key)) for key in stored] + [names]
    if doomed:
        await store.mux.execute_command("DEL", *doomed)  # one slot: the user's hash tag
        log.info("deleted %d credential keys of user %r (app %r)%s", len(doomed), user, app,
                 " with the user's last session" if user_gone else "")


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def credential_service_from_env(redis: Callable[[], Any]) -> RedisCredentialService | None:
    """The credential service for ``AGENTQ_CREDENTIAL_KEY``; None when the variable is not set (a tool's
    credential request then parks, and the API answers its sign-in link 503). A malformed key raises
    CredentialError naming the variable, so a process refuses to start with it."""
    sealer = Sealer.from_env()
    return None if sealer is None else RedisCredentialService(redis, sealer)


@dataclass(frozen=True)
class _Authorization:
    """What a ``state`` stands for, kept sealed until the provider redirects back."""

    invocation_id: str
    call_id: str
    app_name: str
    user_id: str
    code_verifier: str
    redirect_uri: str
    actor: dict
    browser: str
    """The digest of the sign-in cookie of the browser that opened the link (``browser_digest``)."""


SIGN_IN_COOKIE = "agentq_oauth_browser"
"""The cookie that binds a sign-in to the browser that opened its link (set by the API's authorize route)."""


class OtherBrowserError(CredentialError):
    """Raised when the provider's redirect comes back to a browser that did not open the sign-in link."""


def new_browser_id() -> str:
    """A fresh value for ``SIGN_IN_COOKIE``."""
    return new_state()


def browser_digest(browser_id: str) -> str:
    """What a state holds of the browser's cookie (not the cookie itself: a dump of the state does not forge it)."""
    return hashlib.sha256(browser_id.encode()).hexdigest()


class OAuthAuthorizations:
    """The authorization-code flow (with PKCE) for pending ``adk_request_credential`` calls."""

    def __init__(self, client: Any, credentials: RedisCredentialService, sealer: Sealer):
        """``client``: the worker.client.AgentqClient that reads records and answers calls."""
        self._client = client
        self._credentials = credentials
        self._sealer = sealer

    @classmethod
    def from_env(cls, client: Any) -> OAuthAuthorizations | None:
        """The flow on ``client``'s Redis with ``AGENTQ_CREDENTIAL_KEY``; None when that is not set."""
        sealer = Sealer.from_env()
        if sealer is None:
            return None
        return cls(client, RedisCredentialService(lambda: client._store.redis, sealer), sealer)

    async def _pending_request(self, record, call_id: str) -> AuthConfig:
        call = next((c for c in record.pending_calls if c.id == call_id), None)
        if call is None or call.name != REQUEST_CREDENTIAL_FUNCTION_CALL_NAME:
            raise CallNotPendingError(f"invocation {record.id!r} has no pending {REQUEST_CREDENTIAL_FUNCTION_CALL_NAME}"
                                      f" call {call_id!r} (answered already, or another kind of call)")
        config = await self._credentials.held_request(record.app_name, record.user_id, record.id, call_id)
        if config is None:
            raise CredentialError(f"the auth config of credential request {call_id!r} is not held (it expired, or "
                                  "the worker that parked the invocation had no AGENTQ_CREDENTIAL_KEY)")
        if config.authorization_code_flow is None:
            raise CredentialError(f"credential request {call_id!r} names no authorizationCode flow to run")
        token_endpoint.client_of(config)  # a client_id, or a clear error now rather than at the provider
        return config

    async def start(self, record, call_id: str, redirect_uri: str, actor: dict, browser_id: str) -> str:
        """The provider's authorization URL for the pending call ``call_id`` of ``record`` (an
        InvocationRecord the caller may answer); its state is kept sealed for ``STATE_TTL_S``, single use, and
        only the browser whose ``SIGN_IN_COOKIE`` is ``browser_id`` may complete it."""
        config = await self._pending_request(record, call_id)
        flow = config.authorization_code_flow
        verifier, state = new_code_verifier(), new_state()
        held = _Authorization(record.id, call_id, record.app_name, record.user_id, verifier, redirect_uri, actor,
                              browser_digest(browser_id))
        await self._client._store.redis.set(keys.oauth_state(state), self._sealer.seal(json.dumps(held.__dict__)),
                                            ex=STATE_TTL_S)
        query = {"response_type": "code", "client_id": config.raw_auth_credential.oauth2.client_id,
                 "redirect_uri": redirect_uri, "state": state, "code_challenge": s256_challenge(verifier),
                 "code_challenge_method": "S256"}
        if flow.scopes:
            query["scope"] = " ".join(flow.scopes)
        separator = "&" if "?" in flow.authorization_url else "?"
        return f"{flow.authorization_url}{separator}{urlencode(query)}"

    async def finish(self, state: str, code: str | None, error: str | None, error_description: str | None = None,
                     *, browser_id: str | None):
        """Complete the flow of ``state`` (the provider's redirect to the browser whose ``SIGN_IN_COOKIE`` is
        ``browser_id``): the credential is stored and the call answered; returns the invocation's record.
        OtherBrowserError when that browser did not open the sign-in link; CredentialError for an unknown, used
        or expired state, a provider's error, or a failed exchange (the state is spent either way: nothing
        stored)."""
        if not state:
            raise CredentialError("the callback has no state parameter")
        sealed = await self._client._store.redis.getdel(keys.oauth_state(state))
        if sealed is None:
            raise CredentialError("unknown, already used or expired OAuth state; start the sign-in again")
        held = _Authorization(**json.loads(self._sealer.open(sealed)))
        if not browser_id or not hmac.compare_digest(held.browser, browser_digest(browser_id)):
            log.warning("credential request %s of invocation %s: the sign-in came back to another browser "
                        "(its cookie %s %s); nothing stored", held.call_id, held.invocation_id, SIGN_IN_COOKIE,
                        "missing" if not browser_id else "different")
            raise OtherBrowserError(
                "this sign-in was not started in this browser (its cookie "
                f"{SIGN_IN_COOKIE!r} is {'missing' if not browser_id else 'different'}): nothing was stored. A "
                "sign-in link works only in the browser that opened it; open it again there")
        if error:
            raise CredentialError(f"the provider refused the authorization: {error}"
                                  + (f" ({error_description})" if error_description else ""))
        if not code:
            raise CredentialError("the provider's redirect carries neither a code nor an error")
        record = await self._client.get(held.invocation_id)
        config = await self._pending_request(record, held.call_id)
        credential = await token_endpoint.exchange_code(config, code=code, code_verifier=held.code_verifier,
                                                        redirect_uri=held.redirect_uri)
        await self._credentials.write_credential(held.app_name, held.user_id, config.credential_key, credential)
        answer = {"id": held.call_id, "name": REQUEST_CREDENTIAL_FUNCTION_CALL_NAME, "response": AUTHORIZED}
        record = await self._client.respond(held.invocation_id, [answer], actor=held.actor)
        await self._credentials.keep_answered_request(held.app_name, held.user_id, held.invocation_id, held.call_id)
        log.info("credential request %s of invocation %s authorized", held.call_id, held.invocation_id)
        return record
