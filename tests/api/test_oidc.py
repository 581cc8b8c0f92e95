"""OIDC bearer tokens checked against a local JWKS file: each way a token can be wrong is a 401 naming it."""

from __future__ import annotations

import json
import time

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

from api import ApiSettings, create_app
from api.access.oidc import OidcSettings, OidcVerifier

from .conftest import make_client

ISSUER, AUDIENCE = "https://idp.example.test", "agentq-api"


def _rsa_key():
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


SIGNING, STRANGER = _rsa_key(), _rsa_key()


def _jwks(*pairs) -> dict:
    keys = []
    for kid, private in pairs:
        jwk = json.loads(RSAAlgorithm.to_jwk(private.public_key()))
        keys.append({**jwk, "kid": kid, "use": "sig", "alg": "RS256"})
    return {"keys": keys}


def token(*, key=SIGNING, kid="k1", **claims) -> str:
    now = int(time.time())
    body = {"iss": ISSUER, "aud": AUDIENCE, "sub": "carol", "iat": now, "exp": now + 300,
            "agentq_users": ["alice", "bob"], "agentq_apps": ["weather"], "agentq_roles": ["read", "answer"], **claims}
    return jwt.encode(body, key, algorithm="RS256", headers={"kid": kid})


@pytest.fixture
def jwks_file(tmp_path):
    path = tmp_path / "jwks.json"
    path.write_text(json.dumps(_jwks(("k1", SIGNING))))
    return str(path)


@pytest.fixture
def oidc_app(memory_services, jwks_file):
    verifier = OidcVerifier(OidcSettings(issuer=ISSUER, audience=AUDIENCE, jwks_file=jwks_file, leeway_s=5))
    return create_app(ApiSettings(app_names=["weather", "reimbursement"], oidc=verifier), memory_services)


async def _me(app, bearer: str):
    async with make_client(app, key=bearer, host="10.0.0.7") as http:
        return await http.get("/me")


async def test_a_good_token_is_accepted_with_its_mapped_principal_users_apps_and_roles(oidc_app):
    response = await _me(oidc_app, token())
    assert (response.status_code, response.json()) == (200, {
        "principalId": "carol", "roles": ["read", "answer"], "users": ["alice", "bob"], "apps": ["weather"]})


async def test_a_tokens_roles_and_users_are_enforced_like_a_keys(oidc_app):
    async with make_client(oidc_app, key=token(), host="10.0.0.7") as http:
        enqueue = await http.post("/apps/weather/users/alice/sessions", json={})
        other_user = await http.get("/apps/weather/users/dan/sessions/s1")
    assert (enqueue.status_code, enqueue.json()["error"]) == (403, "MissingRoleError")
    assert other_user.status_code == 404


@pytest.mark.parametrize(("name", "bearer", "detail"), [
    ("expired", lambda: token(exp=int(time.time()) - 60), "Signature has expired"),
    ("wrong audience", lambda: token(aud="someone-else"), "Audience doesn't match"),
    ("wrong issuer", lambda: token(iss="https://evil.example.test"), "Invalid issuer"),
    ("unknown kid", lambda: token(kid="k9"), "no key with kid 'k9' in the JWKS"),
    ("signed by another key", lambda: token(key=STRANGER), "Signature verification failed"),
    ("tampered", lambda: _tampered(token()), "Signature verification failed"),
    ("no subject", lambda: _without_sub(), 'Token is missing the "sub" claim'),
])
async def test_a_bad_token_is_refused_with_401_naming_what_is_wrong(oidc_app, name, bearer, detail):
    response = await _me(oidc_app, bearer())
    assert (response.status_code, response.json()) == (401, {
        "error": "UnauthorizedError", "detail": f"the bearer token is not valid: {detail}"}), name


def _tampered(good: str) -> str:
    """The same signature on a body that now grants every role."""
    header, body, signature = good.split(".")
    claims = json.loads(jwt.utils.base64url_decode(body))
    claims["agentq_roles"] = ["enqueue", "read", "answer", "operate"]
    forged = jwt.utils.base64url_encode(json.dumps(claims).encode()).decode()
    return f"{header}.{forged}.{signature}"


def _without_sub() -> str:
    now = int(time.time())
    return jwt.encode({"iss": ISSUER, "aud": AUDIENCE, "exp": now + 300}, SIGNING, algorithm="RS256",
                      headers={"kid": "k1"})


async def test_clock_skew_within_the_leeway_is_allowed(oidc_app):
    assert (await _me(oidc_app, token(exp=int(time.time()) - 2))).status_code == 200


async def test_with_only_oidc_configured_remote_clients_need_a_token(oidc_app):
    async with make_client(oidc_app, host="10.0.0.7") as http:
        response = await http.get("/list-apps")
    assert (response.status_code, response.json()["error"]) == (401, "UnauthorizedError")


def test_oidc_settings_from_the_environment(jwks_file):
    env = {"AGENTQ_OIDC_ISSUER": ISSUER, "AGENTQ_OIDC_AUDIENCE": AUDIENCE, "AGENTQ_OIDC_JWKS_FILE": jwks_file,
           "AGENTQ_OIDC_ROLES_CLAIM": "groups", "AGENTQ_OIDC_LEEWAY_S": "10"}
    settings = OidcSettings.from_env(env)
    assert (settings.roles_claim, settings.leeway_s, settings.users_claim) == ("groups", 10.0, "agentq_users")
    assert OidcSettings.from_env({}) is None
