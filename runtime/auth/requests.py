"""The ``adk_request_credential`` call: how a tool's request for a user's consent parks an invocation, and how
the answer to it brings the credential back into the run.

1. A tool calls ``tool_context.request_credential(auth_config)``. Its answer event records the redacted config
   in ``actions.requested_auth_configs`` (call id -> config); the full config stays in this run's memory.
2. ``request_event`` makes one long-running ``adk_request_credential`` call per credential key (args
   ``functionCallId``, ``authConfig`` without the client secret or any token), committed before the answer, as
   google-adk does; the flow then ends the invocation, which parks on that call. ``hold_requests`` gives the
   full configs to the credential service for whoever completes the flow (agentq's API: code exchange).
3. The call is answered: by agentq's API with ``{"authorized": true}`` once it stored the credential in the
   credential service, or by an ADK client with the ``authConfig`` whose ``exchangedAuthCredential`` holds the
   token. ``answered`` finds the tool calls to run again; ``load_answers`` puts their credentials into the run,
   where ``tool_context.get_auth_response`` reads them. The credential never goes into session state.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from google.genai import types
from pydantic import ValidationError

from ..errors import CredentialError
from ..events import Event
from ..ids import new_client_call_id
from .auth_config import AuthConfig

if TYPE_CHECKING:
    from ..contexts.invocation_context import InvocationContext

REQUEST_CREDENTIAL_FUNCTION_CALL_NAME = "adk_request_credential"
"""The name of the function call that asks a client for a user's credential (ADK's name)."""

log = logging.getLogger(__name__)


def request_event(ctx: InvocationContext, author: str, requested: dict[str, Any], role: str | None) -> Event:
    """One long-running ``adk_request_credential`` call per credential key among ``requested`` (call id ->
    redacted config); two calls needing the same credential share one request (and both run again)."""
    parts, seen = [], set()
    for call_id, wire in requested.items():
        config = AuthConfig.model_validate(wire)
        if config.credential_key in seen:
            continue
        seen.add(config.credential_key)
        call = types.FunctionCall(id=new_client_call_id(), name=REQUEST_CREDENTIAL_FUNCTION_CALL_NAME,
                                  args={"functionCallId": call_id, "authConfig": config.redacted().wire()})
        parts.append(types.Part(function_call=call))
    return Event(invocation_id=ctx.invocation_id, author=author, branch=ctx.branch,
                 content=types.Content(role=role, parts=parts),
                 long_running_tool_ids={part.function_call.id for part in parts})


async def hold_requests(ctx: InvocationContext, request: Event) -> None:
    """Give the credential service the full config (client secret included) of each request in ``request``."""
    service = ctx.credential_service
    if service is None:
        return
    for call in request.get_function_calls():
        full = ctx.run.auth_configs.get((call.args or {}).get("functionCallId"))
        if full is not None:
            await service.hold_request(ctx.app_name, ctx.user_id, ctx.invocation_id, call.id, full)


@dataclass(frozen=True)
class AnsweredRequest:
    """An answered ``adk_request_credential`` call: its id, the (redacted) config asked for, the answer."""

    request_id: str
    config: AuthConfig
    response: dict[str, Any]


def answered(events: list[Event], answer: Event) -> tuple[list[AnsweredRequest], dict[str, types.FunctionCall]]:
    """The credential requests among ``events`` that ``answer`` (a client's message) answers, and the tool calls
    to run again: every call that asked for an answered request's credential, by id."""
    requests = {call.id: call for event in events for call in event.get_function_calls()
                if call.name == REQUEST_CREDENTIAL_FUNCTION_CALL_NAME}
    found = []
    for response in answer.get_function_responses():
        request = requests.get(response.id)
        if request is None:
            continue
        try:
            config = AuthConfig.model_validate((request.args or {}).get("authConfig") or {})
        except ValidationError:
            continue  # not a request this runtime made: nothing to load, nothing to run again
        found.append(AnsweredRequest(response.id, config, response.response or {}))
    if not found:
        return [], {}
    keys = {request.config.credential_key for request in found}
    asking = {call_id for event in events for call_id, wire in event.actions.requested_auth_configs.items()
              if isinstance(wire, dict) and _key_of(wire) in keys}
    calls = {call.id: call for event in events for call in event.get_function_calls() if call.id in asking}
    return found, calls


def _key_of(wire: dict[str, Any]) -> str | None:
    try:
        return AuthConfig.model_validate(wire).credential_key
    except ValidationError:
        return None


async def load_answers(ctx: InvocationContext, found: list[AnsweredRequest]) -> None:
    """Put the credentials of the answered requests into the run, where ``get_auth_response`` reads them.

    An answer carrying the token itself (an ADK client's ``authConfig.exchangedAuthCredential``) is used, and kept
    in the credential service if there is one; otherwise the credential service has it (agentq's API stored it
    before answering), refreshed if it expired meanwhile, using the full config held for the request (client
    secret included); one that expired and cannot be refreshed is still given as it is, as google-adk does."""
    service = ctx.credential_service
    for request in found:
        key = request.config.credential_key or ""
        given = _credential_in(request.response)
        if given is not None:
            ctx.run.credentials[key] = given
            if service is not None:
                await service.write_credential(ctx.app_name, ctx.user_id, key, given)
            continue
        if service is None:
            continue
        full = await service.held_request(ctx.app_name, ctx.user_id, ctx.invocation_id, request.request_id)
        if full is None:  # the event's config is redacted: an expired token cannot be refreshed with it
            log.warning("credential request %s of invocation %s: its full auth config is not held any more; "
                        "an expired credential cannot be refreshed", request.request_id, ctx.invocation_id)
        credential = await service.usable_credential(ctx.app_name, ctx.user_id, full or request.config)
        if credential is not None and full is not None:
            # Used: a refreshed token is stored already, so a run taken over later reads it without the config.
            await service.drop_request(ctx.app_name, ctx.user_id, ctx.invocation_id, request.request_id)
        if credential is None:
            credential = await service.read_credential(ctx.app_name, ctx.user_id, key)
            if credential is None:
                log.info("credential request %s of invocation %s answered, but no credential is stored for it",
                         request.request_id, ctx.invocation_id)
                continue
            # google-adk's get_auth_response is the credential the user just gave, as it is: the tool gets it
            # rather than asking them to sign in again right after they did (the failed refresh is logged).
            log.warning("credential request %s of invocation %s: the credential the user just gave has expired "
                        "and was not refreshed; the tool gets it as given", request.request_id, ctx.invocation_id)
        ctx.run.credentials[key] = credential


def refuse_credentials_in_answer(call_id: str, response: Any) -> None:
    """CredentialError when an answer to credential request ``call_id`` carries a credential (a token, a code, the
    provider's redirect URL): it would be committed to the session history and kept in the invocation record.
    For a deployment with a credential store (agentq's workers), the sign-in goes through its API instead."""
    if not isinstance(response, dict):
        return
    wire = response.get("authConfig", response.get("auth_config"))
    try:
        exchanged = AuthConfig.model_validate(wire).exchanged_auth_credential if isinstance(wire, dict) else None
    except ValidationError:
        return  # not an auth config: nothing of a credential to keep out
    oauth2 = exchanged.oauth2 if exchanged is not None else None
    if (exchanged is not None and exchanged.has_token()) or (oauth2 and (oauth2.auth_code or oauth2.auth_response_uri)):
        raise CredentialError(
            f"the answer to {REQUEST_CREDENTIAL_FUNCTION_CALL_NAME} call {call_id!r} carries a credential, which "
            "would be stored with the session's history; sign in through GET "
            f"/invocations/{{invocation_id}}/oauth/{call_id}/authorize instead (it answers the call itself)")


def _credential_in(response: dict[str, Any]):
    wire = response.get("authConfig", response.get("auth_config"))
    if not isinstance(wire, dict):
        return None
    try:
        exchanged = AuthConfig.model_validate(wire).exchanged_auth_credential
    except ValidationError:
        return None
    return exchanged if exchanged is not None and exchanged.has_token() else None
