"""The approver's page (/ui) in headless Chromium against real ``agentq api`` and ``agentq worker`` processes.

Each test is a person at the page: they sign in with their key, watch the inbox, answer, and read the outcome,
while the test enqueues work (and plays a second approver) over HTTP. Nothing reloads the page: a marker set
in the page's window at the start must survive to the end.

Screenshots go to the test's tmp dir; with ``AGENTQ_UI_SCREENSHOTS=<dir>`` the inbox and invocation page are
also saved there as ``inbox.png`` and ``invocation.png`` (``docs/`` holds the ones the README shows).
"""

from __future__ import annotations

import os
import shutil
import time
import uuid
from pathlib import Path

import httpx
import pytest

from agentq.demo import EXAMPLE_APPS
from agentq.local_stack import LocalStack

from .browser import headless_chromium
from .conftest import ALICE_KEY, BOB_KEY, user_message

WAIT_S = 30


@pytest.fixture
def browser(tmp_path):
    """Headless Chromium with a fresh profile (so a fresh sessionStorage: no key yet)."""
    driver = headless_chromium(tmp_path / "chromium-profile")
    yield driver
    driver.quit()


class Approver:
    """A person at the page: signs in, finds things by what they show, clicks."""

    def __init__(self, driver, base_url: str, shots: Path):
        self.driver = driver
        self.base_url = base_url
        self.shots = shots

    def open(self, key: str, fragment: str = "#/inbox") -> None:
        """Open the page, sign in with ``key``, and wait until the inbox is live."""
        self.driver.get(f"{self.base_url}/ui{fragment}")
        self.sign_in(key)
        self.find("//div[@class='live'][contains(., 'live')]/span[contains(@class, 'on')]")
        self.driver.execute_script("window.notReloaded = true")

    def sign_in(self, key: str) -> None:
        field = self.find("//input[@id='api-key']")
        field.clear()
        field.send_keys(key)
        self.find("//button[normalize-space()='Use this key']").click()

    def find(self, xpath: str, timeout: float = WAIT_S):
        """The first visible element at ``xpath``, once there is one."""
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support import expected_conditions as ec
        from selenium.webdriver.support.ui import WebDriverWait

        return WebDriverWait(self.driver, timeout).until(ec.visibility_of_element_located((By.XPATH, xpath)))

    def item(self, invocation_id: str):
        """The inbox card of ``invocation_id``, once it shows."""
        return self.find(f"//li[@class='item'][@data-invocation='{invocation_id}']")

    def answered(self, invocation_id: str, status: str):
        """The "Answered here" line of ``invocation_id`` once it shows ``status``."""
        return self.find(f"//ul[@class='answered-list']/li[@data-invocation='{invocation_id}']"
                         f"[.//span[contains(@class, 'pill')][normalize-space()='{status}']]")

    def was_not_reloaded(self) -> bool:
        return self.driver.execute_script("return window.notReloaded === true")

    def shoot(self, name: str) -> None:
        """A screenshot of the whole page (the window grown to fit it, then put back)."""
        path = self.shots / f"{name}.png"
        width, height = self.driver.get_window_size().values()
        page_height = self.driver.execute_script("return document.documentElement.scrollHeight")
        self.driver.set_window_size(width, max(height, min(page_height + 140, 3000)))
        self.driver.save_screenshot(str(path))
        self.driver.set_window_size(width, height)
        if os.environ.get("AGENTQ_UI_SCREENSHOTS"):
            shutil.copy(path, Path(os.environ["AGENTQ_UI_SCREENSHOTS"]) / f"{name}.png")


@pytest.fixture
def approver(browser, stack, tmp_path) -> Approver:
    shots = tmp_path / "screenshots"
    shots.mkdir()
    print(f"inbox UI screenshots: {shots}")
    return Approver(browser, stack.base_url, shots)


def _http(stack, key: str) -> httpx.Client:
    return httpx.Client(base_url=stack.base_url, headers={"Authorization": f"Bearer {key}"}, timeout=10)


def _enqueue(http: httpx.Client, app: str, user: str, text: str) -> str:
    session_id = "ui-" + uuid.uuid4().hex[:8]
    assert http.post(f"/apps/{app}/users/{user}/sessions/{session_id}").status_code == 200
    response = http.post(f"/apps/{app}/users/{user}/sessions/{session_id}/invocations",
                         json={"newMessage": user_message(text)})
    assert response.status_code == 202, response.text
    return response.json()["invocationId"]


def _status(http: httpx.Client, invocation_id: str, wanted: str) -> dict:
    deadline = time.monotonic() + WAIT_S
    while (record := http.get(f"/invocations/{invocation_id}").json())["status"] != wanted:
        assert time.monotonic() < deadline, f"{invocation_id} is {record['status']}, not {wanted}"
        time.sleep(0.05)
    return record


@pytest.mark.timeout(300)
def test_an_approver_sees_a_new_parked_transfer_appear_approves_it_and_sees_it_complete(stack, approver):
    approver.open(BOB_KEY, "#/inbox?user=bob")
    with _http(stack, BOB_KEY) as http:
        approver.item(_enqueue(http, "reimbursement", "bob", "Reimburse $250 for a train ticket."))
        invocation_id = _enqueue(http, "transfers", "bob", "Please send $300 to carol.")
        item = approver.item(invocation_id)  # appears by itself: the page was open before it parked
        assert all(text in item.text for text in (
            "transfers", "bob", "CONFIRMATION", "transfer_money", "amount", "300", "to", "carol", "waiting",
            "Please approve or reject the tool call transfer_money()", "no deadline"))
        approver.shoot("inbox")

        item.find_element("xpath", ".//button[normalize-space()='Approve']").click()
        line = approver.answered(invocation_id, "completed")
        assert "Transferred $300 to carol." in line.text
        assert _status(http, invocation_id, "completed")["pendingCalls"] == []

        line.find_element("xpath", f".//a[normalize-space()='{invocation_id}']").click()
        approver.find("//table[@class='timeline']//td[normalize-space()='Transferred $300 to carol.']")
        timeline = approver.find("//table[@class='timeline']").text
        for step in ("queued", "user message", "Please send $300 to carol.", "transfer_agent calls transfer_money",
                     "parked waiting on 1 call", "queued again, after an answer", "adk_request_confirmation answered",
                     "completed"):
            assert step in timeline, f"{step!r} missing from the timeline:\n{timeline}"
        approver.shoot("invocation")

        session_id = http.get(f"/invocations/{invocation_id}").json()["sessionId"]
        approver.find(f"//div[@class='summary']//a[normalize-space()='{session_id}']").click()
        row = approver.find(f"//table[@class='invocations']//tr[@data-invocation='{invocation_id}']")
        assert "completed" in row.text
    assert approver.was_not_reloaded()


@pytest.mark.timeout(300)
def test_a_rejected_transfer_is_shown_as_not_made(stack, approver):
    approver.open(BOB_KEY, "#/inbox?app=transfers")
    with _http(stack, BOB_KEY) as http:
        invocation_id = _enqueue(http, "transfers", "bob", "Please send $900 to dan.")
        approver.item(invocation_id).find_element("xpath", ".//button[normalize-space()='Reject']").click()
        line = approver.answered(invocation_id, "completed")
        assert "Rejected" in line.text and "The transfer was not made: This tool call is rejected." in line.text
        _status(http, invocation_id, "completed")
    assert approver.was_not_reloaded()


@pytest.mark.timeout(300)
def test_an_approval_after_another_approver_answered_shows_the_409_never_success(stack, approver):
    approver.open(BOB_KEY, "#/inbox?app=transfers")
    with _http(stack, BOB_KEY) as http:
        invocation_id = _enqueue(http, "transfers", "bob", "Please send $400 to erin.")
        item = approver.item(invocation_id)
        # This page has not heard of the other answer yet: its inbox reloads are held back while the other
        # approver answers and the invocation moves on.
        approver.driver.execute_cdp_cmd("Network.enable", {})
        approver.driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["*/inbox?*"]})
        call_id = http.get(f"/invocations/{invocation_id}").json()["pendingCalls"][0]["id"]
        other = http.post(f"/invocations/{invocation_id}/function-responses", json={"functionResponses": [
            {"id": call_id, "name": "adk_request_confirmation", "response": {"confirmed": True}}]})
        assert other.status_code == 202
        _status(http, invocation_id, "completed")

        item.find_element("xpath", ".//button[normalize-space()='Approve']").click()
        message = approver.find(f"//li[@data-invocation='{invocation_id}']//p[contains(@class, 'conflict')]")
        assert message.text.startswith("Already answered elsewhere: this call is no longer waiting for an answer")
        assert message.get_attribute("role") == "alert"
        assert not approver.driver.find_elements("xpath", f"//li[@data-invocation='{invocation_id}']"
                                                          "//p[contains(@class, 'success')]")
        assert not approver.driver.find_elements("xpath", "//section[@class='answered']//li")
    assert approver.was_not_reloaded()


@pytest.mark.timeout(300)
def test_a_key_sees_only_its_own_users_items_and_a_wrong_key_is_refused_in_words(stack, approver):
    with _http(stack, ALICE_KEY) as alice, _http(stack, BOB_KEY) as bob:
        bobs = _enqueue(bob, "reimbursement", "bob", "Reimburse $700 for a desk.")
        alices = _enqueue(alice, "reimbursement", "alice", "Reimburse $800 for a chair.")
        _status(bob, bobs, "parked")

        approver.driver.get(f"{approver.base_url}/")  # / leads to the page
        approver.sign_in("not-a-key-at-all")
        assert "This key is not accepted" in approver.find("//form[@class='key-form']//p[@role='alert']").text
        approver.sign_in(ALICE_KEY)
        item = approver.item(alices)
        assert "ask_for_approval" in item.text and "800" in item.text
        users = [u.text for u in approver.driver.find_elements("xpath", "//li[@class='item']//span[@class='who']")]
        assert users and set(users) == {"user alice"}
        assert not approver.driver.find_elements("xpath", f"//li[@data-invocation='{bobs}']")

        # The reimbursement's approval declares its answer (answer_schema, quick_answers): one-click buttons,
        # no JSON box to type into.
        assert item.find_elements("xpath", ".//textarea") == []
        quick = item.find_elements("xpath", ".//div[contains(@class, 'quick-answers')]/button")
        assert [button.text for button in quick] == ["Approve", "Reject"]
        quick[0].click()
        assert "Paid $800.00 for a chair." in approver.answered(alices, "completed").text

        approver.driver.get(f"{approver.base_url}/ui#/invocations/{bobs}")  # another user's: as if it did not exist
        assert "Not found" in approver.find("//p[@role='alert']").text
        assert bob.get(f"/invocations/{bobs}").json()["status"] == "parked"


@pytest.mark.timeout(300)
def test_an_invocation_page_follows_a_parked_invocation_live_and_cancels_it(stack, approver):
    with _http(stack, BOB_KEY) as http:
        invocation_id = _enqueue(http, "transfers", "bob", "Please send $500 to fay.")
        approver.open(BOB_KEY, f"#/invocations/{invocation_id}")
        approver.find("//div[@class='pending']//button[normalize-space()='Approve']")
        approver.find("//form[@class='cancel']//input[@name='reason']").send_keys("wrong amount")
        approver.find("//button[normalize-space()='Cancel invocation']").click()
        approver.find("//div[@class='summary']//span[contains(@class, 'pill')][normalize-space()='cancelled']")
        approver.find("//table[@class='timeline']//tr[contains(@class, 'status-cancelled')]"
                      "[.//td[normalize-space()='wrong amount']]")
        assert not approver.driver.find_elements("xpath", "//div[@class='pending']//button")
        assert http.get(f"/invocations/{invocation_id}").json()["cancelReason"] == "wrong amount"
    assert approver.was_not_reloaded()


@pytest.fixture(scope="module")
def idle_stack(tmp_path_factory):
    """redis-server and the API with no worker at all, and no keys (so loopback only, no sign-in)."""
    local = LocalStack(tmp_path_factory.mktemp("idle"), apps=EXAMPLE_APPS, workers=0,
                       extra_env={"GOOGLE_API_KEY": "", "GEMINI_API_KEY": ""})
    with local:
        yield local


@pytest.mark.timeout(300)
def test_the_page_says_plainly_when_no_worker_is_alive_and_work_only_queues(idle_stack, browser, tmp_path):
    approver = Approver(browser, idle_stack.base_url, tmp_path)
    approver.driver.get(f"{idle_stack.base_url}/ui")
    banner = approver.find("//div[@id='banner']")
    assert banner.text.startswith("No worker is alive")
    with httpx.Client(base_url=idle_stack.base_url, timeout=10) as http:
        assert http.get("/health").json()["workers"] == 0  # /health says it too
        _enqueue(http, "weather", "ann", "What is the weather in Paris?")
    approver.find("//div[@id='ops']//span[contains(@class, 'status-queued')][normalize-space()='1 queued']", 15)
    approver.find("//div[@id='ops']//span[normalize-space()='1 in queue']")
    assert approver.find("//div[@id='ops']//span[contains(@class, 'bad')]").text == "0 workers alive"
    approver.shoot("no-worker")


_INPUT_CALL = """
const done = arguments[arguments.length - 1];
window.sent = [];
const fetchAsUsual = window.fetch;
window.fetch = (url, init) => {
  if (init && init.method === "POST") window.sent.push(JSON.parse(init.body));
  return fetchAsUsual(url, init);
};
import("/ui/static/calls.js").then(({ pendingCall }) => {
  const schema = { type: "object", required: ["city", "nights"], properties: {
    city: { type: "string" }, nights: { type: "integer", description: "how many" },
    breakfast: { type: "boolean" }, room: { enum: ["single", "double"] } } };
  const call = { id: "call-1", name: "adk_request_input", kind: "input", args: {},
                 question: "Which city, and for how many nights?", responseSchema: schema };
  const card = pendingCall({ invocationId: "e-not-there", pendingCalls: [call] }, call);
  card.id = "probe";
  document.getElementById("view").prepend(card);
  done(true);
});
"""


@pytest.mark.timeout(300)
def test_an_input_request_is_answered_with_a_form_built_from_its_response_schema(approver):
    from selenium.webdriver.support.ui import Select

    approver.open(BOB_KEY)
    assert approver.driver.execute_async_script(_INPUT_CALL)
    probe = approver.find("//section[@id='probe']")
    assert "Which city, and for how many nights?" in probe.text
    send = probe.find_element("xpath", ".//button[normalize-space()='Send answer']")
    send.click()
    assert probe.find_element("xpath", ".//p[@role='alert']").text == "“city” is required."

    probe.find_element("xpath", ".//input[@name='city']").send_keys("Oslo")
    probe.find_element("xpath", ".//input[@name='nights']").send_keys("3")
    probe.find_element("xpath", ".//input[@name='breakfast']").click()
    Select(probe.find_element("xpath", ".//select[@name='room']")).select_by_visible_text("double")
    send.click()
    # The invocation does not exist: the API's 404 is shown in words, and what was sent matches the schema.
    problem = approver.find("//section[@id='probe']//p[contains(@class, 'error')]")
    assert problem.text.startswith("Not found: it does not exist, or this key may not see it")
    assert approver.driver.execute_script("return window.sent") == [{"functionResponses": [{
        "id": "call-1", "name": "adk_request_input",
        "response": {"city": "Oslo", "nights": 3, "breakfast": True, "room": "double"}}]}]
