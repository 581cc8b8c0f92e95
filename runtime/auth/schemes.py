"""The OAuth 2 auth scheme a tool names (OpenAPI's security scheme object: ``type``, ``flows``).

Only the authorization-code flow is run by agentq (the other flows need no user consent); the others are
accepted so that a scheme copied from an OpenAPI document validates.
"""

from __future__ import annotations

from pydantic import Field

from .credentials import AuthModel


class OAuthFlowAuthorizationCode(AuthModel):
    """Where a user consents (``authorizationUrl``) and where a code becomes tokens (``tokenUrl``)."""

    authorization_url: str = Field(alias="authorizationUrl")
    token_url: str = Field(alias="tokenUrl")
    refresh_url: str | None = Field(default=None, alias="refreshUrl")
    scopes: dict[str, str] = Field(default_factory=dict)
    """Scope name -> what it grants (OpenAPI's shape); every scope listed is asked for."""


class OAuthFlowClientCredentials(AuthModel):
    """A machine-to-machine flow (not run by agentq; accepted for OpenAPI documents)."""

    token_url: str = Field(alias="tokenUrl")
    scopes: dict[str, str] = Field(default_factory=dict)


class OAuthFlows(AuthModel):
    """The flows a provider offers."""

    authorization_code: OAuthFlowAuthorizationCode | None = Field(default=None, alias="authorizationCode")
    client_credentials: OAuthFlowClientCredentials | None = Field(default=None, alias="clientCredentials")


class OAuth2(AuthModel):
    """An OAuth 2 security scheme."""

    type_: str = Field(default="oauth2", alias="type")
    flows: OAuthFlows
    description: str | None = None
