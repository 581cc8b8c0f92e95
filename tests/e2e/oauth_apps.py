"""The app of ``test_oauth_flow``: an assistant whose ``whoami`` tool needs the user's consent at an OAuth 2
provider (the test's own, on loopback, at ``OAUTH_TEST_PROVIDER``), then asks the provider's /userinfo who the
user is with the bearer token. The model is a ScriptedLlm: it calls ``whoami``, then says the name."""

from __future__ import annotations

import os

import httpx
from google.genai import types

from runtime.agents import LlmAgent
from runtime.apps import App
from runtime.auth import AuthConfig, AuthCredential, AuthCredentialTypes, OAuth2, OAuth2Auth
from runtime.models import LlmRequest, LlmResponse, ScriptedLlm, call
from runtime.tools import ToolContext

CLIENT_ID = "agentq-e2e"
CLIENT_SECRET = "e2e-client-secret-7f3a9c"
"""Known to the test's provider too; like every token it must never be stored or logged in clear."""

WAITING = {"status": "waiting for the user to sign in"}


def provider_config() -> AuthConfig:
    """The provider's authorization-code flow and agentq's client there (read when the tool runs: the provider's
    port is chosen by the test)."""
    base = os.environ["OAUTH_TEST_PROVIDER"]
    return AuthConfig(
        auth_scheme=OAuth2(flows={"authorizationCode": {
            "authorizationUrl": f"{base}/authorize", "tokenUrl": f"{base}/token", "scopes": {"profile": "name"}}}),
        raw_auth_credential=AuthCredential(auth_type=AuthCredentialTypes.OAUTH2,
                                           oauth2=OAuth2Auth(client_id=CLIENT_ID, client_secret=CLIENT_SECRET)),
    )


async def whoami(tool_context: ToolContext) -> dict:
    """Who the user is at the provider (asks the user to sign in there first)."""
    config = provider_config()
    credential = tool_context.get_auth_response(config) or await tool_context.load_credential(config)
    if credential is None:
        tool_context.request_credential(config)
        return WAITING
    async with httpx.AsyncClient(timeout=10) as http:
        answer = await http.get(f"{os.environ['OAUTH_TEST_PROVIDER']}/userinfo",
                                headers={"Authorization": f"Bearer {credential.oauth2.access_token}"})
    if answer.status_code != 200:
        return {"error": f"userinfo answered {answer.status_code}"}
    return {"name": answer.json()["name"]}


def _turn(request: LlmRequest):
    """Call whoami; once it answered with a name (or an error), say it."""
    answers = [part.function_response.response for content in request.contents for part in content.parts or ()
               if part.function_response is not None and part.function_response.name == "whoami"]
    settled = [answer for answer in answers if answer != WAITING]
    if not settled:
        return call("whoami")
    last = settled[-1]
    text = f"You are {last['name']}." if "name" in last else f"Sign-in failed: {last.get('error')}"
    return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))


app = App(name="oauth_demo", root_agent=LlmAgent(
    name="assistant", model=ScriptedLlm(responder=_turn), instruction="Tell the user who they are.",
    tools=[whoami]))


async def whoami_reading_the_answer(tool_context: ToolContext) -> dict:
    """``whoami`` as google-adk's samples write it: the credential comes only from ``get_auth_response`` (the answer
    to the sign-in), never from the credential service."""
    config = provider_config()
    credential = tool_context.get_auth_response(config)
    if credential is None:
        tool_context.request_credential(config)
        return WAITING
    async with httpx.AsyncClient(timeout=10) as http:
        answer = await http.get(f"{os.environ['OAUTH_TEST_PROVIDER']}/userinfo",
                                headers={"Authorization": f"Bearer {credential.oauth2.access_token}"})
    if answer.status_code != 200:
        return {"error": f"userinfo answered {answer.status_code}"}
    return {"name": answer.json()["name"]}


whoami_reading_the_answer.__name__ = "whoami"  # the same tool name, so the scripted model calls it alike

adk_style_app = App(name="oauth_adk_style", root_agent=LlmAgent(
    name="assistant", model=ScriptedLlm(responder=_turn), instruction="Tell the user who they are.",
    tools=[whoami_reading_the_answer]))
"""The same assistant with the google-adk-style tool."""
