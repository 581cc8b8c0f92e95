"""OAuth 2 sign-in for tools that asked for a user's credential (``adk_request_credential`` calls).

``GET /invocations/{id}/oauth/{call_id}/authorize`` sends the caller to the provider (302; state and PKCE made
and kept by ``worker.records.credentials.OAuthAuthorizations``). ``GET /oauth/callback`` is where the provider sends
the user back: the code is exchanged, the credential stored encrypted, the call answered with
``{"authorized": true}`` (no token), and a short page says so. The callback needs no API key: the single-use
``state`` is what authorizes it, together with the sign-in cookie ``/authorize`` sets (HttpOnly, SameSite=Lax,
Secure over https): a provider's redirect reaching a browser that did not open the link (a forwarded link, whose
account would be stored under this user) is refused 403. Both answer 404 while ``AGENTQ_CREDENTIAL_KEY`` is unset
(503 if malformed).
"""

from __future__ import annotations

import html
import os
from urllib.parse import urlsplit

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from api.access.auth import Caller, ForbiddenError
from api.deps import Services, get_caller, get_services, get_settings
from api.doors import actor_of
from api.routes.invocations import queue_of, visible_record
from api.settings import ApiSettings
from runtime.auth.sealing import GENERATE_HINT, KEY_VARIABLE
from runtime.errors import CredentialError, NotFoundError

router = APIRouter(tags=["oauth"])

REDIRECT_URL_VARIABLE = "AGENTQ_OAUTH_REDIRECT_URL"
"""The callback URL registered with the providers (default: this API's own ``/oauth/callback``, as the request
that starts the sign-in reached it)."""


class OAuthNotConfiguredError(NotFoundError):
    """Raised (answered 404) when ``AGENTQ_CREDENTIAL_KEY`` is unset: this server offers no OAuth sign-in."""


class SignInFromOtherBrowserError(ForbiddenError):
    """Raised (answered 403) when the provider sends back a browser that did not open the sign-in link."""


def _authorizations(request: Request, services: Services):
    """The flow of this API (made on first use); 404 naming the variable to set when it is unset, 503 when the
    key is malformed (the deployment's fault)."""
    from worker.records.credentials import OAuthAuthorizations

    flow = getattr(request.app.state, "oauth", None)
    if flow is None:
        try:
            flow = OAuthAuthorizations.from_env(queue_of(services))
        except CredentialError as exc:  # a malformed key is the deployment's fault, not the caller's
            raise HTTPException(503, str(exc)) from None
        if flow is None:  # a feature this server does not offer, as an unserved ADK dev-server route is
            raise OAuthNotConfiguredError(f"OAuth sign-in is not configured: set {KEY_VARIABLE} on the API and "
                                          f"the workers (make a key with {GENERATE_HINT})")
        request.app.state.oauth = flow
    return flow


@router.get("/invocations/{invocation_id}/oauth/{call_id}/authorize")
async def authorize(
    invocation_id: str,
    call_id: str,
    request: Request,
    caller: Caller = Depends(get_caller),
    settings: ApiSettings = Depends(get_settings),
    services: Services = Depends(get_services),
) -> RedirectResponse:
    """302 to the provider's consent page for the pending credential request ``call_id``. 409: not pending;
    400: its auth config expired or names no authorization-code flow."""
    from worker.records.credentials import SIGN_IN_COOKIE, STATE_TTL_S, new_browser_id

    flow = _authorizations(request, services)
    record = await visible_record(services, settings, caller, invocation_id)
    redirect_uri = os.environ.get(REDIRECT_URL_VARIABLE) or str(request.url_for("oauth_callback"))
    # One cookie per browser, kept across its sign-ins: two sign-ins in flight in one browser both complete.
    browser_id = request.cookies.get(SIGN_IN_COOKIE) or new_browser_id()
    url = await flow.start(record, call_id, redirect_uri, actor_of(caller), browser_id)
    response = RedirectResponse(url, status_code=302, headers={"Cache-Control": "no-store"})
    # Lax: sent on the provider's top-level redirect back to the callback, not on other sites' subrequests.
    secure = request.url.scheme == "https" or redirect_uri.startswith("https://")
    response.set_cookie(SIGN_IN_COOKIE, browser_id, max_age=STATE_TTL_S, path=urlsplit(redirect_uri).path or "/",
                        httponly=True, samesite="lax", secure=secure)
    return response


@router.get("/oauth/callback", name="oauth_callback", response_class=HTMLResponse)
async def callback(
    request: Request,
    state: str = "",
    code: str | None = None,
    error: str | None = None,
    error_description: str | None = None,
    services: Services = Depends(get_services),
) -> HTMLResponse:
    """Where the provider sends the user back. 403 when this browser did not open the sign-in link (no or another
    sign-in cookie); 400 for an unknown, used or expired state, a provider's error (``error=access_denied``) or a
    failed code exchange; nothing is stored then."""
    from worker.records.credentials import SIGN_IN_COOKIE, OtherBrowserError

    flow = _authorizations(request, services)
    try:
        record = await flow.finish(state, code, error, error_description,
                                   browser_id=request.cookies.get(SIGN_IN_COOKIE))
    except OtherBrowserError as exc:
        raise SignInFromOtherBrowserError(str(exc)) from None
    page = (f"<!doctype html><title>Signed in</title><p>Signed in. Invocation <code>{html.escape(record.id)}</code>"
            " continues; you may close this page.</p>")
    return HTMLResponse(page, headers={"Cache-Control": "no-store"})
