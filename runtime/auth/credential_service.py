"""Credential services: where a user's credentials live, outside the session (never in an event or state).

``load_credential``/``save_credential`` are ADK's interface (keyed by the config's ``credential_key`` and the
context's app and user). A load of an expired OAuth 2 credential that holds a refresh token refreshes it at the
provider and keeps the new one. agentq adds the held requests: the full AuthConfig (client secret included)
of each ``adk_request_credential`` call an invocation parks on, which the event carries only redacted and which
whoever completes the flow (agentq's API) needs to exchange the code.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

from ..errors import CredentialError
from . import token_endpoint
from .auth_config import AuthConfig
from .credentials import AuthCredential

if TYPE_CHECKING:
    from ..contexts.callback_context import CallbackContext

log = logging.getLogger(__name__)


class BaseCredentialService(ABC):
    """Per (app, user, credential key) credentials, and the full configs of pending credential requests."""

    @abstractmethod
    async def read_credential(self, app_name: str, user_id: str, credential_key: str) -> AuthCredential | None:
        """The stored credential as it is (no refresh), or None."""

    @abstractmethod
    async def write_credential(self, app_name: str, user_id: str, credential_key: str,
                               credential: AuthCredential) -> None:
        """Keep ``credential`` (replacing the one stored)."""

    @abstractmethod
    async def hold_request(self, app_name: str, user_id: str, invocation_id: str, request_id: str,
                           auth_config: AuthConfig) -> None:
        """Keep the full config of the pending ``adk_request_credential`` call ``request_id``."""

    @abstractmethod
    async def held_request(self, app_name: str, user_id: str, invocation_id: str,
                           request_id: str) -> AuthConfig | None:
        """The full config held for ``request_id`` (None when none was held or it expired)."""

    @abstractmethod
    async def drop_request(self, app_name: str, user_id: str, invocation_id: str, request_id: str) -> None:
        """Forget the full config held for ``request_id`` once the run that the answer resumed has used it."""

    async def usable_credential(self, app_name: str, user_id: str, auth_config: AuthConfig) -> AuthCredential | None:
        """The stored credential, refreshed first when it expired and can be: None when there is none, or it
        expired and the refresh failed (the user has to consent again)."""
        key = auth_config.credential_key or ""
        credential = await self.read_credential(app_name, user_id, key)
        if credential is None or not token_endpoint.is_expired(credential):
            return credential
        if credential.oauth2 is None or not credential.oauth2.refresh_token:
            return None
        try:
            fresh = await token_endpoint.refresh(auth_config, credential)
        except CredentialError as exc:
            # Another process may have refreshed it first: a provider that rotates refresh tokens then refuses
            # this one, and the credential it stored meanwhile is the one to use.
            stored = await self.read_credential(app_name, user_id, key)
            if stored is not None and stored != credential and not token_endpoint.is_expired(stored):
                return stored
            log.warning("refreshing credential %s of user %r (app %r) failed: %s", key, user_id, app_name, exc)
            return None
        await self.write_credential(app_name, user_id, key, fresh)
        return fresh

    async def load_credential(self, auth_config: AuthConfig, callback_context: CallbackContext) -> AuthCredential | None:
        """ADK's load: the context's user's credential for ``auth_config`` (refreshed when expired), or None."""
        session = callback_context.session
        return await self.usable_credential(session.app_name, session.user_id, auth_config)

    async def save_credential(self, auth_config: AuthConfig, callback_context: CallbackContext) -> None:
        """ADK's save: keep ``auth_config.exchanged_auth_credential`` for the context's user."""
        if auth_config.exchanged_auth_credential is None:
            raise CredentialError("save_credential: the auth config has no exchanged_auth_credential to save")
        session = callback_context.session
        await self.write_credential(session.app_name, session.user_id, auth_config.credential_key or "",
                                    auth_config.exchanged_auth_credential)


class InMemoryCredentialService(BaseCredentialService):
    """Credentials in this process's memory (tests, local runs); copies in and out, so no caller shares one."""

    def __init__(self) -> None:
        self._credentials: dict[tuple[str, str, str], AuthCredential] = {}
        self._requests: dict[tuple[str, str, str, str], AuthConfig] = {}

    async def read_credential(self, app_name, user_id, credential_key):
        found = self._credentials.get((app_name, user_id, credential_key))
        return None if found is None else found.model_copy(deep=True)

    async def write_credential(self, app_name, user_id, credential_key, credential):
        self._credentials[(app_name, user_id, credential_key)] = credential.model_copy(deep=True)

    async def hold_request(self, app_name, user_id, invocation_id, request_id, auth_config):
        self._requests[(app_name, user_id, invocation_id, request_id)] = auth_config.model_copy(deep=True)

    async def held_request(self, app_name, user_id, invocation_id, request_id):
        found = self._requests.get((app_name, user_id, invocation_id, request_id))
        return None if found is None else found.model_copy(deep=True)

    async def drop_request(self, app_name, user_id, invocation_id, request_id):
        self._requests.pop((app_name, user_id, invocation_id, request_id), None)
