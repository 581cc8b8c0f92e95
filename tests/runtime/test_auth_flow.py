"""A tool that needs its user's consent, in-process: ``request_credential`` parks the invocation on an
``adk_request_credential`` call (google-adk 2.13's order and shapes), the answer runs the tool again with the
credential, and no token or client secret is ever in an event. The HTTP/OAuth half is tests/e2e/test_oauth_flow.py."""

from __future__ import annotations

import json
import time

import pytest

from runtime.agents import LlmAgent
from runtime.auth import (
    AuthConfig,
    AuthCredential,
    AuthCredentialTypes,
    InMemoryCredentialService,
    OAuth2,
    OAuth2Auth,
)
from runtime.errors import UsageError
from runtime.models import ScriptedLlm, call
from runtime.runners import Runner, pending_long_running_calls
from runtime.sessions import InMemorySessionService
from runtime.tools import ToolContext

from .helpers import function_response, new_session, run, stored, summaries, user_text

SECRET = "client-secret-never-in-events"
TOKEN = "access-token-never-in-events"
WAITING = {"status": "waiting for the user to sign in"}


def auth_config() -> AuthConfig:
    return AuthConfig(
        auth_scheme=OAuth2(flows={"authorizationCode": {
            "authorizationUrl": "http://127.0.0.1:9/authorize", "tokenUrl": "http://127.0.0.1:9/token",
            "scopes": {"profile": "your name"}}}),
        raw_auth_credential=AuthCredential(auth_type=AuthCredentialTypes.OAUTH2,
                                           oauth2=OAuth2Auth(client_id="agentq-app", client_secret=SECRET)),
    )


def make_runner(credentials=None):
    seen: list[str] = []

    async def whoami(tool_context: ToolContext) -> dict:
        """Who the user is at the provider."""
        config = auth_config()
        credential = tool_context.get_auth_response(config) or await tool_context.load_credential(config)
        if credential is None:
            tool_context.request_credential(config)
            return WAITING
        seen.append(credential.oauth2.access_token)
        return {"name": "Ada"}

    agent = LlmAgent(name="assistant", model=ScriptedLlm(turns=[call("whoami"), "You are Ada."]), tools=[whoami])
    runner = Runner(app_name="app", agent=agent, session_service=InMemorySessionService(),
                    credential_service=credentials)
    return runner, seen


def token(value: str = TOKEN, expires_at: int | None = None) -> AuthCredential:
    return AuthCredential(auth_type=AuthCredentialTypes.OAUTH2,
                          oauth2=OAuth2Auth(access_token=value, refresh_token="refresh-never-in-events",
                                            expires_at=expires_at))


def request_of(events):
    return next(c for e in events for c in e.get_function_calls() if c.name == "adk_request_credential")


async def test_a_credential_request_parks_the_invocation_on_an_adk_request_credential_call_made_first():
    runner, seen = make_runner(InMemoryCredentialService())
    session = await new_session(runner)
    events = await run(runner, session, user_text("who am I?"))
    original = events[0].get_function_calls()[0]
    request = request_of(events)
    assert seen == []
    # google-adk 2.13's order: the call, the credential request, then the tool's own answer; no model call after
    assert [s[1][0][:2] for s in summaries(events)] == [
        ("call", "whoami"), ("call", "adk_request_credential"), ("response", "whoami")]
    assert events[1].long_running_tool_ids == {request.id}
    assert request.args["functionCallId"] == original.id
    asked = request.args["authConfig"]
    assert asked["authScheme"]["flows"]["authorizationCode"]["tokenUrl"] == "http://127.0.0.1:9/token"
    assert asked["rawAuthCredential"]["oauth2"] == {"clientId": "agentq-app",
                                                    "tokenEndpointAuthMethod": "client_secret_basic"}
    assert asked["credentialKey"] == auth_config().credential_key
    assert events[2].actions.requested_auth_configs[original.id]["credentialKey"] == asked["credentialKey"]
    fresh = await runner.session_service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert [c.id for c in pending_long_running_calls(fresh, events[0].invocation_id)] == [request.id]
    assert SECRET not in json.dumps([e.model_dump(mode="json") for e in fresh.events])
    held = await runner.credential_service.held_request("app", "u", events[0].invocation_id, request.id)
    assert held.raw_auth_credential.oauth2.client_secret == SECRET  # the full config, for the code exchange


async def test_an_answer_after_the_credential_was_stored_runs_the_tool_again_with_it_and_no_token_is_committed():
    credentials = InMemoryCredentialService()
    runner, seen = make_runner(credentials)
    session = await new_session(runner)
    first = await run(runner, session, user_text("who am I?"))
    request = request_of(first)
    await credentials.write_credential("app", "u", auth_config().credential_key, token())  # what the API does
    second = await run(runner, session, function_response(request.id, "adk_request_credential", {"authorized": True}),
                       invocation_id=first[0].invocation_id)
    assert seen == [TOKEN]
    assert summaries(second) == [("assistant", [("response", "whoami", {"name": "Ada"})]),
                                 ("assistant", ["You are Ada."])]
    history = await stored(runner, session)
    dumped = json.dumps([e.model_dump(mode="json") for e in history])
    assert TOKEN not in dumped and "refresh-never-in-events" not in dumped and SECRET not in dumped
    fresh = await runner.session_service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert TOKEN not in json.dumps(fresh.state)  # not in state either (google-adk puts it under temp:)


async def test_an_adk_client_may_answer_with_the_token_in_the_auth_config_and_it_is_kept_for_later_invocations():
    credentials = InMemoryCredentialService()
    runner, seen = make_runner(credentials)
    session = await new_session(runner)
    first = await run(runner, session, user_text("who am I?"))
    request = request_of(first)
    answer = dict(request.args["authConfig"], exchangedAuthCredential=token("from-the-client").wire())
    await run(runner, session, function_response(request.id, "adk_request_credential", {"authConfig": answer}),
              invocation_id=first[0].invocation_id)
    later = await run(runner, await new_session(runner), user_text("who am I, again?"))
    assert seen == ["from-the-client", "from-the-client"]  # the later invocation loads it, no new request
    assert not any(c.name == "adk_request_credential" for e in later for c in e.get_function_calls())


async def test_without_a_credential_service_an_answer_without_the_token_asks_again():
    runner, seen = make_runner(None)
    session = await new_session(runner)
    first = await run(runner, session, user_text("who am I?"))
    again = await run(runner, session, function_response(request_of(first).id, "adk_request_credential",
                                                         {"authorized": True}), invocation_id=first[0].invocation_id)
    assert seen == []
    assert request_of(again).id != request_of(first).id


async def test_an_expired_credential_that_cannot_be_refreshed_is_not_handed_to_the_tool():
    credentials = InMemoryCredentialService()
    # the token endpoint is unreachable (nothing listens on port 9): the refresh fails, the user consents again
    await credentials.write_credential("app", "u", auth_config().credential_key, token(expires_at=int(time.time()) - 5))
    runner, seen = make_runner(credentials)
    events = await run(runner, await new_session(runner), user_text("who am I?"))
    assert seen == []
    assert request_of(events) is not None


async def test_request_credential_refuses_what_is_not_an_auth_config():
    runner, _ = make_runner()
    session = await new_session(runner)
    from runtime.contexts.invocation_context import InvocationContext

    ctx = InvocationContext(invocation_id="e-1", agent=runner.agent, session=session,
                            session_service=runner.session_service)
    with pytest.raises(UsageError, match="takes a runtime.auth.AuthConfig"):
        ToolContext(ctx, function_call_id="c1").request_credential({"authScheme": {}})
    with pytest.raises(UsageError, match="needs the function call id"):
        ToolContext(ctx).request_credential(auth_config())


async def test_a_journaled_answer_reused_after_a_lost_commit_still_parks_on_the_credential_request():
    from google.genai import types

    from runtime.tools import InMemoryToolJournal

    journal = InMemoryToolJournal()
    runs = []

    async def whoami(tool_context: ToolContext) -> dict:
        """Who the user is."""
        runs.append(tool_context.function_call_id)
        tool_context.request_credential(auth_config())
        return WAITING

    def runner():  # a fresh session service each time: the first run's commits are lost, the journal is not
        model = ScriptedLlm(turns=[types.FunctionCall(id="call-1", name="whoami", args={})])
        return Runner(app_name="app", agent=LlmAgent(name="assistant", model=model, tools=[whoami]),
                      session_service=InMemorySessionService(), tool_journal=journal,
                      credential_service=InMemoryCredentialService())

    for attempt in (runner(), runner()):
        events = await run(attempt, await new_session(attempt), user_text("who am I?"), invocation_id="e-fixed")
        assert request_of(events).args["functionCallId"] == "call-1"
    assert runs == ["call-1"]  # the second run reused the journaled answer, and still asked for the credential


async def test_a_workflow_agent_node_parks_on_the_credential_request_and_its_successor_runs_after_sign_in():
    from runtime.tools import InMemoryToolJournal
    from runtime.workflow import START, Workflow

    credentials = InMemoryCredentialService()
    plain, seen = make_runner(credentials)

    def done(node_input) -> str:
        return f"done: {node_input}"

    workflow = Workflow(name="signin", edges=[(START, plain.agent, done)])
    runner = Runner(app_name="app", agent=workflow, session_service=InMemorySessionService(),
                    tool_journal=InMemoryToolJournal(), credential_service=credentials)  # as the workers run it
    session = await new_session(runner)
    first = await run(runner, session, user_text("who am I?"))
    assert [e.output for e in first if e.output is not None] == []  # parked: the successor has not run
    await credentials.write_credential("app", "u", auth_config().credential_key, token())
    second = await run(runner, session, function_response(request_of(first).id, "adk_request_credential",
                                                          {"authorized": True}))
    assert seen == [TOKEN]
    assert [e.output for e in second if e.output is not None][-1] == "done: You are Ada."
