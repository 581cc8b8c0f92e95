"""/ui with principals: a requester signed in with a named key sees no Approve button on their own transfer,
and an approver signing in with an OIDC token (a local JWKS) sees it in the inbox and approves it.

Real ``agentq api`` and ``agentq worker`` processes, headless Chromium (``tests/e2e/browser.py``).
"""

from __future__ import annotations

import json
import time

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

from agentq.demo import EXAMPLE_APPS
from agentq.local_stack import LocalStack
from api.access.auth import hash_secret

from .browser import headless_chromium
from .conftest import user_message
from .test_inbox_ui import Approver

ISSUER, AUDIENCE = "https://idp.example.test", "agentq-ui"
REQUESTER_KEY = "requester-secret-0001"
SIGNING = rsa.generate_private_key(public_exponent=65537, key_size=2048)


def approver_token() -> str:
    now = int(time.time())
    return jwt.encode({"iss": ISSUER, "aud": AUDIENCE, "sub": "approver-1", "exp": now + 3600,
                       "agentq_users": ["bob"], "agentq_roles": ["read", "answer"]},
                      SIGNING, algorithm="RS256", headers={"kid": "ui-key"})


@pytest.fixture(scope="module")
def principal_stack(tmp_path_factory):
    """The stack with a named requester key (enqueue, read) and OIDC tokens from a local JWKS file."""
    root = tmp_path_factory.mktemp("principals")
    jwks = root / "jwks.json"
    jwks.write_text(json.dumps({"keys": [{**json.loads(RSAAlgorithm.to_jwk(SIGNING.public_key())), "kid": "ui-key",
                                          "use": "sig", "alg": "RS256"}]}))
    keys = {"requester": {"sha256": hash_secret(REQUESTER_KEY), "users": ["bob"], "roles": ["enqueue", "read"]}}
    local = LocalStack(root, apps=EXAMPLE_APPS, api_keys_json=json.dumps(keys), extra_env={
        "GOOGLE_API_KEY": "", "GEMINI_API_KEY": "", "AGENTQ_OIDC_ISSUER": ISSUER, "AGENTQ_OIDC_AUDIENCE": AUDIENCE,
        "AGENTQ_OIDC_JWKS_FILE": str(jwks)})
    with local:
        yield local


@pytest.fixture
def browser(tmp_path):
    driver = headless_chromium(tmp_path / "chromium-profile")
    yield driver
    driver.quit()


def _parked_transfer(http: httpx.Client) -> str:
    assert http.post("/apps/transfers/users/bob/sessions/ui-principals").status_code in (200, 409)
    response = http.post("/apps/transfers/users/bob/sessions/ui-principals/invocations",
                         json={"newMessage": user_message("Please send $300 to carol.")})
    assert response.status_code == 202, response.text
    invocation_id = response.json()["invocationId"]
    deadline = time.monotonic() + 30
    while http.get(f"/invocations/{invocation_id}").json()["status"] != "parked":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    return invocation_id


@pytest.mark.timeout(300)
def test_a_requester_sees_no_approve_button_and_an_approver_signs_in_with_a_token_and_approves(
        principal_stack, browser, tmp_path):
    page = Approver(browser, principal_stack.base_url, tmp_path)
    with httpx.Client(base_url=principal_stack.base_url, timeout=10,
                      headers={"Authorization": f"Bearer {REQUESTER_KEY}"}) as requester:
        invocation_id = _parked_transfer(requester)

        # The requester, on their own invocation: the confirmation shows, its buttons do not.
        browser.get(f"{principal_stack.base_url}/ui#/invocations/{invocation_id}")
        page.sign_in(REQUESTER_KEY)
        card = page.find("//div[@class='pending']//section[contains(@class, 'kind-confirmation')]")
        assert "transfer_money" in card.text and "Not yours to answer" in card.text
        assert not browser.find_elements("xpath", "//button[normalize-space()='Approve']")
        assert not browser.find_elements("xpath", "//button[normalize-space()='Reject']")
        assert "signed in as requester" in page.find("//*[@id='key']").text

        # The approver signs in with a bearer token and answers it from the inbox.
        page.find("//button[normalize-space()='Forget key']").click()
        page.sign_in(approver_token())
        browser.get(f"{principal_stack.base_url}/ui#/inbox")
        assert "signed in as approver-1" in page.find("//*[@id='key'][contains(., 'approver-1')]").text
        page.item(invocation_id).find_element("xpath", ".//button[normalize-space()='Approve']").click()
        assert "Transferred $300 to carol." in page.answered(invocation_id, "completed").text
        assert requester.get(f"/invocations/{invocation_id}").json()["status"] == "completed"
