"""Approvers never type JSON (issue 18 item 10): a long-running tool that declares its answer (``answer_schema``,
``quick_answers``; tests/worker/answer_apps.py) is answered on /ui with one click, in headless Chromium against
real ``agentq api`` and ``agentq worker`` processes. The page runs under the /ui CSP (no inline script or style).

Screenshots go to the test's tmp dir (printed); with ``AGENTQ_UI_SCREENSHOTS=<dir>`` also there.
"""

from __future__ import annotations

import json

import httpx
import pytest
from selenium.common.exceptions import StaleElementReferenceException

from agentq.local_stack import LocalStack

from .conftest import BOB_KEY, KEYS, user_message
from .test_inbox_ui import Approver, _status

APP = "invoices"


@pytest.fixture(scope="module")
def quick_stack(tmp_path_factory):
    local = LocalStack(tmp_path_factory.mktemp("quick-answers-ui"), apps=["tests.worker.answer_apps:invoice_app",
                                                                      "tests.worker.answer_apps:release_app"],
                       api_keys_json=json.dumps(KEYS), extra_env={"GOOGLE_API_KEY": "", "GEMINI_API_KEY": ""})
    with local:
        yield local


@pytest.fixture
def browser(tmp_path):
    from .browser import headless_chromium

    driver = headless_chromium(tmp_path / "chromium-profile")
    yield driver
    driver.quit()


@pytest.fixture
def approver(browser, quick_stack, tmp_path) -> Approver:
    shots = tmp_path / "screenshots"
    shots.mkdir()
    print(f"quick answers UI screenshots: {shots}")
    return Approver(browser, quick_stack.base_url, shots)


@pytest.mark.timeout(300)
def test_quick_answers_render_as_buttons_and_one_click_answers_the_call(quick_stack, approver):
    with httpx.Client(base_url=quick_stack.base_url, headers={"Authorization": f"Bearer {BOB_KEY}"},
                      timeout=10) as http:
        page = http.get("/ui")
        assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
        session_id = "quick-ui"
        assert http.post(f"/apps/{APP}/users/bob/sessions/{session_id}").status_code == 200
        invocation_id = http.post(f"/apps/{APP}/users/bob/sessions/{session_id}/invocations",
                                  json={"newMessage": user_message("review INV-7")}).json()["invocationId"]
        _status(http, invocation_id, "parked")
        approver.open(BOB_KEY, f"#/invocations/{invocation_id}")

        # The card is drawn once the record is read, and drawn again where the node list puts it once that is
        # read too (every agent run has a node path): look at it afresh until it stands still.
        for attempt in range(5):
            try:
                card = approver.find("//section[contains(@class, 'kind-long_running')]")
                assert all(text in card.text for text in ("review_invoice", "INV-7", "1200"))
                quick = card.find_elements("xpath", ".//div[contains(@class, 'quick-answers')]/button")
                assert [button.text for button in quick] == ["Approve", "Reject"]
                # the declared schema is a form (status as a choice, note as text), and there is no JSON textarea
                assert card.find_element("xpath", ".//select[@name='status']").is_displayed()
                assert card.find_element("xpath", ".//input[@name='note']").is_displayed()
                assert card.find_elements("xpath", ".//textarea") == []
                # a required choice is never made for the approver: sending the form untouched says what is missing
                card.find_element("xpath", ".//button[normalize-space()='Send this answer']").click()
                assert card.find_element("xpath", ".//p[@role='alert']").text == "“Status” is required."
                approver.shoot("quick-answers")
                quick[1].click()  # Reject: one click sends its declared answer
                break
            except StaleElementReferenceException:
                if attempt == 4:
                    raise
        body = _status(http, invocation_id, "completed")
        assert body["pendingCalls"] == []
        approver.find("//table[@class='timeline']//td[contains(., 'Invoice INV-7 rejected (rejected with one click).')]")
        approver.shoot("quick-answers-answered")
    assert approver.was_not_reloaded()


@pytest.mark.timeout(300)
def test_confirmation_payload_form_is_filled_and_sent_with_the_approval(quick_stack, approver):
    with httpx.Client(base_url=quick_stack.base_url, headers={"Authorization": f"Bearer {BOB_KEY}"},
                      timeout=10) as http:
        session_id = "release-ui"
        assert http.post(f"/apps/releases/users/bob/sessions/{session_id}").status_code == 200
        invocation_id = http.post(f"/apps/releases/users/bob/sessions/{session_id}/invocations",
                                  json={"newMessage": user_message("release 900")}).json()["invocationId"]
        _status(http, invocation_id, "parked")
        approver.open(BOB_KEY, f"#/invocations/{invocation_id}")
        card = approver.find("//section[contains(@class, 'kind-confirmation')]")
        reference = card.find_element("xpath", ".//div[@class='payload-form']//input[@name='reference']")
        reference.send_keys("wrong")
        card.find_element("xpath", ".//button[normalize-space()='Approve']").click()
        # the server refuses the payload, naming the field, and the invocation stays parked
        error = approver.find("//section[contains(@class, 'kind-confirmation')]//p[contains(@class, 'error')]")
        assert "payload.reference" in error.text
        assert _status(http, invocation_id, "parked")["pendingCalls"]
        approver.shoot("confirmation-payload-refused")
        reference.clear()
        reference.send_keys("REF-42")
        card.find_element("xpath", ".//button[normalize-space()='Approve']").click()
        _status(http, invocation_id, "completed")
        approver.find("//table[@class='timeline']//td[contains(., \"'reference': 'REF-42'\")]")
        approver.shoot("confirmation-payload-approved")
    assert approver.was_not_reloaded()
