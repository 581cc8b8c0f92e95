"""google-adk's own dev UI, served by ``agentq api --dev-ui-dir``, used in a real browser.

The dev UI (the Angular app bundled in the google-adk package, installed in bench/.adk-venv; agentq never
imports google-adk) runs in headless Chromium against real ``agentq api`` and ``agentq worker`` processes and
a real redis-server. A scripted model calls ``pay``, a tool declared ``require_confirmation=True``; the run
parks on an ``adk_request_confirmation`` call; the UI shows its confirmation form; the test ticks "Confirmed"
and submits, as a person would. The UI sends the answer to POST /run_sse as a functionResponse, the parked
invocation resumes under its own id, ``pay`` runs once and the model's final text shows in the page.

A second test drives the ``claims`` app through the UI: a small claim is paid at once, a large one parks on a
confirmation answered in the UI, the session is renamed in the UI and keeps its name across a reload, and the
Traces view shows each invocation's model and tool spans.

A third runs an ADK 2 workflow (``doc_review``): the UI lists the workflow's committed events (node outputs, a
failed attempt as an error, agentq's attempt markers as empty rows, each event's node path in its detail panel)
and offers its own answer form for the RequestInput's ``adk_request_input`` call (message, a form from
``response_schema``, the payload in a tab). The answer submitted there resumes the parked invocation under its
own id, once, and the resumed node outputs show in the same list.

Screenshots of each step go to the test's tmp dir (the path is printed; see them with ``pytest -s``).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
import pytest
import redis

from agentq.local_stack import LocalStack

from .browser import headless_chromium, unavailable
from .dev_ui_apps import (
    AMOUNT,
    FINAL_TEXT,
    REVIEW_MESSAGE,
    REVIEW_WORKFLOW,
    attempts_key,
    claim_paid_text,
    payments_key,
)

APP = "confirm_payment"
USER = "user"  # the dev UI's user id
CONFIRMATION = "adk_request_confirmation"
WAIT_S = 30


@pytest.fixture(scope="module")
def dev_ui_dir() -> Path:
    """google-adk's bundled dev UI (static files), from the pinned google-adk in bench/.adk-venv."""
    from bench.adk_env import VENV, ensure_adk_venv

    try:
        ensure_adk_venv()
    except Exception as exc:  # no network to PyPI, pip failed
        unavailable(f"cannot install google-adk into {VENV} for its dev UI: {exc}")
    found = sorted(VENV.glob("lib/python3*/site-packages/google/adk/cli/browser/index.html"))
    if not found:
        unavailable(f"google-adk in {VENV} has no bundled dev UI (google/adk/cli/browser)")
    return found[0].parent


@pytest.fixture(scope="module")
def ui_stack(tmp_path_factory, dev_ui_dir):
    """redis-server + a worker + the API serving the dev UI; no keys, as the UI sends none (loopback only)."""
    stack = LocalStack(
        tmp_path_factory.mktemp("dev-ui"),
        apps=["examples.weather:app", "tests.e2e.dev_ui_apps:confirm_app", "tests.e2e.dev_ui_apps:claims_app",
              "tests.e2e.dev_ui_apps:review_workflow_app"],
        extra_env={"AGENTQ_DEV_UI_DIR": str(dev_ui_dir), "GOOGLE_API_KEY": "", "GEMINI_API_KEY": ""},
    )
    with stack:
        yield stack


@pytest.fixture
def browser(tmp_path):
    """Headless Chromium with a fresh profile."""
    driver = headless_chromium(tmp_path / "chromium-profile")
    yield driver
    driver.quit()


class Page:
    """The dev UI in the browser, with screenshots of the steps."""

    def __init__(self, driver, shots: Path):
        from selenium.webdriver.support.ui import WebDriverWait

        self.driver = driver
        self.shots = shots
        self.wait = WebDriverWait(driver, WAIT_S)

    def shoot(self, name: str) -> None:
        self.driver.save_screenshot(str(self.shots / f"{name}.png"))

    def find(self, xpath: str):
        """The first visible element at ``xpath``, once there is one."""
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support import expected_conditions as ec

        return self.wait.until(ec.visibility_of_element_located((By.XPATH, xpath)))

    def text(self) -> str:
        """Everything the page shows, as text."""
        return self.driver.find_element("tag name", "body").text

    def pick_app(self, base_url: str, app: str) -> None:
        """Open the UI and pick ``app`` in its app selector, as a person would."""
        self.driver.get(base_url + "/dev-ui/")
        self.find(f"//button[{_has_class('selector-button')}]").click()
        self.find(f"//button[{_has_class('app-selector-item')}][.//span[normalize-space()='{app}']]").click()
        self.find(f"//button[{_has_class('selector-button')}][.//span[normalize-space()='{app}']]")

    def send(self, text: str) -> None:
        """Type ``text`` in the chat box and press Enter."""
        from selenium.webdriver.common.keys import Keys

        box = self.find(f"//textarea[{_has_class('chat-input-box')}]")
        box.send_keys(text)
        box.send_keys(Keys.ENTER)


def _has_class(name: str) -> str:
    return f"contains(concat(' ', normalize-space(@class), ' '), ' {name} ')"


def _wait_for(predicate, what: str, timeout: float = WAIT_S):
    """Poll ``predicate`` until it returns something truthy.

    The dev UI is an Angular page that re-renders lists while we read them: an element found a moment ago can
    be gone by the time we ask for its text. That is "not yet", so a stale element is polled again.
    """
    from selenium.common.exceptions import StaleElementReferenceException

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            value = predicate()
        except StaleElementReferenceException:
            value = None
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def _payments(stack: LocalStack, invocation_id: str) -> dict[str, str]:
    import redis

    with redis.Redis.from_url(stack.redis.url, decode_responses=True) as client:
        return client.hgetall(payments_key(invocation_id))


@pytest.mark.timeout(900)  # a fresh machine installs Chromium and google-adk first
def test_the_adk_dev_ui_approves_a_confirmation_and_the_parked_invocation_resumes_once(
    ui_stack, browser, tmp_path
):
    shots = tmp_path / "screenshots"
    shots.mkdir()
    print(f"dev UI screenshots: {shots}")
    with httpx.Client(base_url=ui_stack.base_url, timeout=10) as http:
        _approve_in_the_dev_ui(ui_stack, Page(browser, shots), http)


def _approve_in_the_dev_ui(stack: LocalStack, page: Page, http: httpx.Client) -> None:
    page.pick_app(stack.base_url, APP)
    page.shoot("1-app-picked")
    page.send(f"Please pay {AMOUNT} euros")

    # The run parks on the confirmation request and the UI shows its confirmation form.
    form = page.find(f"//div[{_has_class('confirmation-container')}]")
    parked = _wait_for(
        lambda: http.get(f"/apps/{APP}/users/{USER}/invocations", params={"status": "parked"}).json()["invocations"],
        "the invocation to park",
    )
    page.shoot("2-confirmation-form")
    assert len(parked) == 1
    invocation_id, session_id = parked[0]["invocationId"], parked[0]["sessionId"]
    events = http.get(f"/apps/{APP}/users/{USER}/sessions/{session_id}").json()["events"]
    asking = next(e for e in events if _calls(e, CONFIRMATION))
    pay_call = next(call for event in events for call in _calls(event, "pay"))
    request = _calls(asking, CONFIRMATION)[0]
    assert [c["id"] for c in parked[0]["pendingCalls"]] == [request["id"]] == asking["longRunningToolIds"]
    assert request["args"]["originalFunctionCall"] == {"id": pay_call["id"], "name": "pay", "args": {"amount": AMOUNT}}
    assert request["args"]["toolConfirmation"]["confirmed"] is False
    hint = request["args"]["toolConfirmation"]["hint"]
    assert hint and hint in form.text and "Confirmed" in form.text
    assert _payments(stack, invocation_id) == {}  # held: pay has not run

    # Approve in the UI's own form: tick "Confirmed", then Submit.
    checkbox = form.find_element("xpath", ".//input[@type='checkbox']")
    checkbox.click()
    assert checkbox.is_selected()
    page.shoot("3-confirmed-ticked")
    form.find_element("xpath", f".//button[{_has_class('form-submit-button')}]").click()

    page.find(f"//*[normalize-space()='{FINAL_TEXT}']")
    status = _wait_for(lambda: _settled(http, invocation_id), "the invocation to settle")
    page.shoot("4-resumed-and-answered")

    assert (status["status"], status["pendingCalls"]) == ("completed", [])
    assert _payments(stack, invocation_id) == {pay_call["id"]: "1"}  # ran exactly once, for that call
    events = http.get(f"/apps/{APP}/users/{USER}/sessions/{session_id}").json()["events"]
    assert {e["invocationId"] for e in events} == {invocation_id}  # resumed under the same id
    answers = [p["functionResponse"] for e in events if e["author"] == "user"
               for p in e["content"]["parts"] if "functionResponse" in p]
    assert [(a["id"], a["name"], _confirmation(a["response"])) for a in answers] == [
        (request["id"], CONFIRMATION, {"confirmed": True, "payload": {"amount": AMOUNT}})]
    texts = [p["text"] for e in events if e.get("content") for p in e["content"]["parts"] if p.get("text")]
    assert texts == [f"Please pay {AMOUNT} euros", FINAL_TEXT]
    assert page.text().count(FINAL_TEXT) == 1


def _calls(event: dict, name: str) -> list[dict]:
    parts = (event.get("content") or {}).get("parts") or []
    return [p["functionCall"] for p in parts if (p.get("functionCall") or {}).get("name") == name]


def _settled(http: httpx.Client, invocation_id: str) -> dict | None:
    status = http.get(f"/invocations/{invocation_id}").json()
    return status if status["status"] in ("completed", "failed", "cancelled") else None


def _confirmation(response: dict) -> dict:
    """The answer as sent: ADK's web client may wrap it as ``{"response": "<json>"}``."""
    if set(response) == {"response"} and isinstance(response["response"], str):
        return json.loads(response["response"])
    return response


CLAIMS = "claims"
CHAIR = "Office chair claims"


@pytest.mark.timeout(900)
def test_the_adk_dev_ui_pays_claims_renames_the_session_and_shows_the_traces(ui_stack, browser, tmp_path):
    shots = tmp_path / "screenshots"
    shots.mkdir()
    print(f"dev UI screenshots: {shots}")
    page = Page(browser, shots)
    try:
        with httpx.Client(base_url=ui_stack.base_url, timeout=10) as http:
            _claims_in_the_dev_ui(ui_stack, page, http)
    except Exception:
        (shots / "page.html").write_text(browser.page_source)
        page.shoot("failed")
        raise


def _claims_in_the_dev_ui(stack: LocalStack, page: Page, http: httpx.Client) -> None:
    page.pick_app(stack.base_url, CLAIMS)
    page.shoot("1-app-picked")

    # A small claim is paid at once.
    page.send("Claim 40 euros")
    page.find(f"//*[normalize-space()='{claim_paid_text(40)}']")
    page.shoot("2-small-claim-paid")

    # A large one parks on a confirmation; it is answered in the UI's own form.
    page.send("Claim 500 euros")
    form = page.find(f"//div[{_has_class('confirmation-container')}]")
    checkbox = form.find_element("xpath", ".//input[@type='checkbox']")
    checkbox.click()
    form.find_element("xpath", f".//button[{_has_class('form-submit-button')}]").click()
    page.find(f"//*[normalize-space()='{claim_paid_text(500)}']")
    page.shoot("3-large-claim-confirmed-and-paid")

    [session] = http.get(f"/apps/{CLAIMS}/users/{USER}/sessions").json()
    session_id = session["id"]
    invocations = _wait_for(lambda: _all_settled(http, session_id), "both claims to settle")
    assert [(i["status"], i["pendingCalls"]) for i in invocations] == [("completed", [])] * 2
    paid = [sorted(_payments(stack, i["invocationId"]).values()) for i in invocations]
    assert paid == [["1"], ["1"]]  # each claim paid exactly once

    # Rename the session in the UI; the name is kept in the session's state, so it survives a reload.
    page.find("//button[@mattooltip='Select a session']").click()
    page.find("//app-inline-edit//button[@aria-label='Edit']").click()
    name_box = page.find("//app-inline-edit//input")
    name_box.clear()
    name_box.send_keys(CHAIR + "\n")
    state = _wait_for(lambda: _display_name(http, session_id) == CHAIR and _state(http, session_id), "the rename")
    assert state["__session_metadata__"] == {"displayName": CHAIR}
    page.driver.refresh()
    page.find(f"//button[@mattooltip='Select a session']//span[{_has_class('selector-label')}]"
              f"[normalize-space()='{CHAIR}']")
    page.find(f"//*[normalize-space()='{claim_paid_text(500)}']")  # the same session, reloaded
    page.shoot("4-renamed-and-reloaded")

    # The Traces view shows a trace per invocation (the agent's span heads it) with its model and tool calls.
    spans = http.get(f"/dev/apps/{CLAIMS}/debug/trace/session/{session_id}").json()
    assert {span["trace_id"] for span in spans} == {i["invocationId"] for i in invocations}
    assert {span["name"] for span in spans} == {"invoke_agent claims_clerk", "call_llm", "execute_tool pay_claim"}
    page.find("//mat-button-toggle[.//*[normalize-space()='Traces']]//button").click()
    rows = _wait_for(lambda: [row.text for row in page.driver.find_elements(
        "xpath", "//app-trace-tree//*[starts-with(@id, 'trace-node-')]") if row.text], "the trace rows")
    page.shoot("5-traces")
    shown = " ".join(rows)
    for expected in ("call_llm", "pay_claim", *(i["invocationId"] for i in invocations)):
        assert expected in shown, (expected, rows)


def _all_settled(http: httpx.Client, session_id: str) -> list[dict] | None:
    listed = http.get(f"/apps/{CLAIMS}/users/{USER}/invocations", params={"sessionId": session_id}).json()
    invocations = sorted(listed["invocations"], key=lambda i: i["createdAt"])
    done = len(invocations) == 2 and all(i["status"] in ("completed", "failed", "cancelled") for i in invocations)
    return invocations if done else None


def _state(http: httpx.Client, session_id: str) -> dict:
    return http.get(f"/apps/{CLAIMS}/users/{USER}/sessions/{session_id}").json()["state"]


def _display_name(http: httpx.Client, session_id: str) -> str | None:
    return (_state(http, session_id).get("__session_metadata__") or {}).get("displayName")


WORKFLOW = REVIEW_WORKFLOW


@pytest.mark.timeout(900)
def test_the_adk_dev_ui_runs_a_workflow_and_its_request_input_answered_there_resumes_it_once(
    ui_stack, browser, tmp_path
):
    shots = tmp_path / "screenshots"
    shots.mkdir()
    print(f"dev UI screenshots: {shots}")
    page = Page(browser, shots)
    try:
        with httpx.Client(base_url=ui_stack.base_url, timeout=10) as http:
            _workflow_in_the_dev_ui(ui_stack, page, http)
    except Exception:
        (shots / "page.html").write_text(browser.page_source)
        (shots / "page.txt").write_text(page.text())
        page.shoot("failed")
        raise


def _workflow_in_the_dev_ui(stack: LocalStack, page: Page, http: httpx.Client) -> None:
    page.pick_app(stack.base_url, WORKFLOW)
    page.send("launch plan")

    # The workflow runs on a worker and parks on the RequestInput; the UI shows the committed events and, for
    # the adk_request_input call, its own answer form (message, a form from response_schema, the payload).
    form = page.find("//app-long-running-response")
    [parked] = _wait_for(lambda: http.get(f"/apps/{WORKFLOW}/users/{USER}/invocations",
                                          params={"status": "parked"}).json()["invocations"], "the workflow to park")
    invocation_id, session_id = parked["invocationId"], parked["sessionId"]
    assert [(c["id"], c["kind"], c["question"], c["payload"]) for c in parked["pendingCalls"]] == [
        ("review", "input", REVIEW_MESSAGE, {"draft": "Notes on launch plan."})]
    assert [line.strip() for line in form.text.splitlines()] == [
        REVIEW_MESSAGE, "Form", "JSON", "Payload", "Schema", "approved *", "tick to publish", "note",
        "what to change", "Submit"]
    # The event list, in order: the user's message, fetch's output, polish's attempt marker (an empty row), its
    # failed attempt (shown as an error), the second marker, its output, then review's adk_request_input call.
    shown = " ".join(page.text().split())
    assert ('#1 launch plan person #2 F topic : "launch plan" text : "notes on launch plan" #3 P #4 P ERROR '
            'errorCode : "ValueError" errorMessage : "the spell checker timed out" #5 P #6 P '
            f'"Notes on launch plan." #7 robot_2 bolt adk_request_input {REVIEW_MESSAGE} Form') in shown, shown
    # The selected event's graph: the workflow's nodes and routed edges, drawn by the dev UI from agentq's
    # /dev/apps/{app}/build_graph_image (before, it said "Graph is not available for this agent"); the nodes the
    # invocation went through are marked by the dev UI from the events' node paths.
    node = f"//*[local-name()='svg']//*[local-name()='g'][{_has_class('node')}]"
    _wait_for(lambda: page.driver.find_elements("xpath", f"{node}/*[local-name()='title'][.='review']"), "the graph")
    labels = [e.get_attribute("textContent") for e in page.driver.find_elements("xpath", f"{node}/*[local-name()='text']")]
    not_run = "Not run in this invocation"  # the dev UI's own mark on a node no event of the invocation reached
    assert [label.removesuffix(not_run) for label in labels] == [
        "START", "fetch", "polish", "review", "decide", "publish", "revise"], labels
    assert [label.endswith(not_run) for label in labels] == [False] * 4 + [True] * 3, labels
    assert "Graph is not available" not in page.text()
    page.shoot("1a-workflow-graph")
    # The event's detail panel (its info tab) shows its node path (the dev UI reads node_info).
    page.find("//div[contains(@class, 'vertical-tabs-sidebar')]//button[.//mat-icon[normalize-space()='info']]").click()
    _wait_for(lambda: f"Node Path {WORKFLOW}@1/review@1" in " ".join(page.text().split()), "the event's node path")
    page.shoot("1-workflow-parked-on-request-input")


    # The payload tab shows what the request is about.
    form.find_element("xpath", f".//div[{_has_class('tab-link')}][normalize-space()='Payload']").click()
    assert '"draft": "Notes on launch plan."' in page.find("//app-long-running-response").text
    form.find_element("xpath", f".//div[{_has_class('tab-link')}][normalize-space()='Form']").click()

    # Answer in the UI's form: tick "approved", write a note, Submit.
    form = page.find("//app-long-running-response")
    form.find_element("xpath", ".//input[@id='approved']").click()
    form.find_element("xpath", ".//input[@id='note']").send_keys("ship it")
    page.shoot("2-answer-filled")
    form.find_element("xpath", f".//button[{_has_class('form-submit-button')}]").click()

    status = _wait_for(lambda: _settled(http, invocation_id), "the workflow to settle")
    assert (status["status"], status["pendingCalls"]) == ("completed", [])
    page.find("//*[normalize-space()='\"published\"']")
    page.shoot("3-resumed-and-published")

    events = http.get(f"/apps/{WORKFLOW}/users/{USER}/sessions/{session_id}").json()["events"]
    assert {e["invocationId"] for e in events} == {invocation_id}  # resumed under the same id
    listed = http.get(f"/apps/{WORKFLOW}/users/{USER}/invocations", params={"sessionId": session_id}).json()
    assert [i["invocationId"] for i in listed["invocations"]] == [invocation_id]  # and no other was started
    answers = [p["functionResponse"] for e in events if e["author"] == "user"
               for p in e["content"]["parts"] if "functionResponse" in p]
    assert [(a["id"], a["name"], a["response"]) for a in answers] == [
        ("review", "adk_request_input", {"approved": True, "note": "ship it"})]
    outputs = [(e["nodeInfo"]["path"], e.get("output")) for e in events if (e.get("nodeInfo") or {}).get("outputFor")]
    assert outputs == [(f"{WORKFLOW}@1/fetch@1", {"topic": "launch plan", "text": "notes on launch plan"}),
                       (f"{WORKFLOW}@1/polish@1", "Notes on launch plan."),
                       (f"{WORKFLOW}@1/decide@1", {"approved": True, "note": "ship it"}),
                       (f"{WORKFLOW}@1/publish@1", "published")]
    with redis.Redis.from_url(stack.redis.url, decode_responses=True) as client:
        assert client.hgetall(attempts_key(invocation_id)) == {"polish": "2"}  # nothing ran again on resume
    # The resumed events follow in the same list: the answer (#8), decide's output and route, publish's output;
    # the request (#7) no longer offers its form.
    shown = _wait_for(lambda: (text := " ".join(page.text().split())).endswith("add videocam call send") and text,
                      "the resumed events")
    assert ('#7 robot_2 bolt adk_request_input #8 check adk_request_input person #9 D approved : true '
            'note : "ship it" route route: approved #10 P "published"') in shown, shown
    assert not page.driver.find_elements("xpath", "//app-long-running-response//button")
