"""The pure parts of OAuth credentials: PKCE, the redacted config an event carries, the credential key, the
sealing of stored values, and when a token counts as expired."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from cryptography.fernet import Fernet

from runtime.auth import AuthConfig, AuthCredential, AuthCredentialTypes, OAuth2, OAuth2Auth
from runtime.auth.pkce import new_code_verifier, new_state, s256_challenge
from runtime.auth.sealing import KEY_VARIABLE, Sealer
from runtime.auth.token_endpoint import EXPIRY_MARGIN_S, is_expired
from runtime.errors import CredentialError


def config(secret="s3cret", scopes=None, **oauth2) -> AuthConfig:
    return AuthConfig(
        auth_scheme=OAuth2(flows={"authorizationCode": {
            "authorizationUrl": "http://127.0.0.1:9/authorize", "tokenUrl": "http://127.0.0.1:9/token",
            "scopes": scopes if scopes is not None else {"profile": "name"}}}),
        raw_auth_credential=AuthCredential(auth_type=AuthCredentialTypes.OAUTH2,
                                           oauth2=OAuth2Auth(client_id="app", client_secret=secret, **oauth2)),
    )


def test_the_s256_challenge_is_the_unpadded_base64url_sha256_of_the_verifier():
    # SHA-256("abc") is FIPS 180-2's test vector ba7816bf...f20015ad; its base64url without padding:
    assert s256_challenge("abc") == "ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0"


def test_verifiers_and_states_are_long_random_and_url_safe():
    verifiers = {new_code_verifier() for _ in range(50)}
    assert len(verifiers) == 50
    for verifier in verifiers:
        assert 43 <= len(verifier) <= 128  # RFC 7636 section 4.1
        assert set(verifier) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
    assert len({new_state() for _ in range(50)}) == 50


def test_the_redacted_config_keeps_the_client_id_and_flow_but_no_secret_and_no_token():
    full = config(access_token="at-1", refresh_token="rt-1", auth_code="code-1")
    full.exchanged_auth_credential = AuthCredential(auth_type=AuthCredentialTypes.OAUTH2,
                                                    oauth2=OAuth2Auth(access_token="at-2", id_token="id-2"))
    wire = json.dumps(full.redacted().wire())
    for secret in ("s3cret", "at-1", "rt-1", "code-1", "at-2", "id-2"):
        assert secret not in wire
    assert full.redacted().raw_auth_credential.oauth2.client_id == "app"
    assert full.redacted().credential_key == full.credential_key
    assert full.raw_auth_credential.oauth2.client_secret == "s3cret"  # the original is left alone


def test_secrets_stay_out_of_repr():
    assert "s3cret" not in repr(config()) and "at-1" not in repr(config(access_token="at-1"))


def test_the_credential_key_ignores_per_consent_fields_and_the_secret_but_not_the_client_or_scopes():
    key = config().credential_key
    assert config(secret="rotated", state="x", access_token="y").credential_key == key
    assert config(scopes={"email": "mail"}).credential_key != key
    other = config()
    other.raw_auth_credential.oauth2.client_id = "other"
    assert AuthConfig.model_validate(other.model_dump(exclude={"credential_key"})).credential_key != key
    assert AuthConfig.model_validate(config().wire()).credential_key == key  # the JSON round trip keeps it
    assert config().model_copy(update={"credential_key": "mine"}).credential_key == "mine"


def test_the_credential_key_is_the_same_in_another_process_with_another_hash_seed():
    code = ("from tests.runtime.test_auth_parts import config; print(config().credential_key)")
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={"PYTHONHASHSEED": "12345", "PATH": ""}, cwd=str(__import__("pathlib").Path(
                               __file__).resolve().parents[2]))
    assert other.stdout.strip() == config().credential_key


def test_sealing_round_trips_and_hides_the_text():
    sealer = Sealer(Fernet.generate_key().decode())
    sealed = sealer.seal('{"accessToken": "at-secret"}')
    assert "at-secret" not in sealed
    assert sealer.seal("same") != sealer.seal("same")  # a fresh IV each time
    assert sealer.open(sealed) == '{"accessToken": "at-secret"}'


def test_a_value_sealed_with_another_key_or_altered_is_refused_by_name():
    sealer, other = Sealer(Fernet.generate_key().decode()), Sealer(Fernet.generate_key().decode())
    sealed = sealer.seal("text")
    with pytest.raises(CredentialError, match=KEY_VARIABLE):
        other.open(sealed)
    with pytest.raises(CredentialError, match="altered"):
        sealer.open(sealed[:-4] + ("AAAA" if not sealed.endswith("AAAA") else "BBBB"))


def test_keys_rotate_the_first_seals_every_one_opens():
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    sealed_before = Sealer(old).seal("kept")
    rotated = Sealer(f"{new},{old}")
    assert rotated.open(sealed_before) == "kept"
    assert Sealer(new).open(rotated.seal("fresh")) == "fresh"


@pytest.mark.parametrize("bad", ["", " , ", "not-a-key", "a" * 44])
def test_a_malformed_key_is_refused_naming_the_variable_and_how_to_make_one(bad):
    with pytest.raises(CredentialError, match=f"{KEY_VARIABLE}.*Fernet.generate_key"):
        Sealer(bad)


def test_from_env_is_none_without_the_variable():
    assert Sealer.from_env({}) is None
    assert Sealer.from_env({KEY_VARIABLE: Fernet.generate_key().decode()}) is not None


def test_a_token_counts_as_expired_within_the_margin():
    def credential(expires_at):
        return AuthCredential(auth_type="oauth2", oauth2=OAuth2Auth(access_token="t", expires_at=expires_at))

    assert not is_expired(credential(None), now=10**9)
    assert not is_expired(credential(1000 + EXPIRY_MARGIN_S + 1), now=1000)
    assert is_expired(credential(1000 + EXPIRY_MARGIN_S), now=1000)
    assert is_expired(credential(999), now=1000)


class _TokenEndpoint:
    """A loopback token endpoint that refuses every refresh (as a provider does for a rotated refresh token),
    running ``on_refresh`` first: what another process did meanwhile."""

    def __init__(self, on_refresh):
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's name
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                endpoint.refreshes += 1
                on_refresh()
                body = b'{"error": "invalid_grant"}'
                self.send_response(400)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.refreshes = 0
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/token"


def _expiring(token: str, expires_at: int) -> AuthCredential:
    return AuthCredential(auth_type="oauth2", oauth2=OAuth2Auth(access_token=token, refresh_token=f"r-{token}",
                                                               expires_at=expires_at))


@pytest.mark.parametrize("other_process_refreshed", [True, False])
async def test_a_refused_refresh_uses_what_another_process_stored_meanwhile_else_asks_again(other_process_refreshed):
    import time

    from runtime.auth import InMemoryCredentialService

    service = InMemoryCredentialService()
    cfg = config()
    key = cfg.credential_key

    def other_process():
        if other_process_refreshed:
            service._credentials[("app", "u", key)] = _expiring("newer", int(time.time()) + 3600)

    endpoint = _TokenEndpoint(other_process)
    try:
        cfg.auth_scheme.flows.authorization_code.token_url = endpoint.url
        await service.write_credential("app", "u", key, _expiring("old", int(time.time()) - 1))
        found = await service.usable_credential("app", "u", cfg)
    finally:
        endpoint.server.shutdown()
    assert endpoint.refreshes == 1
    if other_process_refreshed:
        assert found.oauth2.access_token == "newer"
    else:
        assert found is None


@pytest.mark.parametrize("exchanged", [{"accessToken": "t"}, {"authCode": "c"},
                                       {"authResponseUri": "https://app/cb?code=c&state=s"}])
def test_an_answer_carrying_a_credential_is_refused_and_a_plain_one_passes(exchanged):
    from runtime.auth.requests import refuse_credentials_in_answer

    wire = dict(config().redacted().wire(), exchangedAuthCredential={"authType": "oauth2", "oauth2": exchanged})
    with pytest.raises(CredentialError, match="call 'adk-1' carries a credential"):
        refuse_credentials_in_answer("adk-1", {"authConfig": wire})
    refuse_credentials_in_answer("adk-1", {"authorized": True})
    refuse_credentials_in_answer("adk-1", {"authConfig": config().redacted().wire()})
