"""Credentials a tool needs from its user: OAuth 2 (authorization code with PKCE), kept outside the session.

A tool asks with ``tool_context.request_credential(auth_config)``; the invocation parks on an
``adk_request_credential`` call (``requests``); once answered, the tool runs again and reads the credential
with ``tool_context.get_auth_response(auth_config)`` (or, in a later invocation,
``await tool_context.load_credential(auth_config)``, which refreshes an expired token). The shapes are ADK's.
"""

from .auth_config import AuthConfig
from .credential_service import BaseCredentialService, InMemoryCredentialService
from .credentials import AuthCredential, AuthCredentialTypes, HttpAuth, HttpCredentials, OAuth2Auth
from .requests import REQUEST_CREDENTIAL_FUNCTION_CALL_NAME
from .schemes import OAuth2, OAuthFlowAuthorizationCode, OAuthFlowClientCredentials, OAuthFlows

__all__ = [
    "REQUEST_CREDENTIAL_FUNCTION_CALL_NAME",
    "AuthConfig",
    "AuthCredential",
    "AuthCredentialTypes",
    "BaseCredentialService",
    "HttpAuth",
    "HttpCredentials",
    "InMemoryCredentialService",
    "OAuth2",
    "OAuth2Auth",
    "OAuthFlowAuthorizationCode",
    "OAuthFlowClientCredentials",
    "OAuthFlows",
]
