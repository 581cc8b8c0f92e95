"""A workflow invocation on the approver's page (/ui) in headless Chromium, against real agentq processes.

The ``doc_review`` workflow (tests/e2e/dev_ui_apps.py) fetches, polishes (its first attempt fails; the retry is
held until the test lets it go), then asks a person through a RequestInput. The page shows each node run with
where it stands, live: fetch done, polish retrying after a failed attempt, then review waiting for a person with
the answer form built from the request's message, payload and response schema. The answer sent from that form
resumes the same invocation, and the page shows every node done.

Screenshots go to the test's tmp dir (printed); with ``AGENTQ_UI_SCREENSHOTS=<dir>`` also there.
"""

from __future__ import annotations

import json

import httpx
import pytest
import redis

from agentq.local_stack import LocalStack

from .conftest import BOB_KEY, KEYS, user_message
from .dev_ui_apps import HOLD, REVIEW_MESSAGE, REVIEW_WORKFLOW, attempts_key, release_key
from .test_inbox_ui import Approver, _status

APP = REVIEW_WORKFLOW
ROOT = f"{APP}@1"


@pytest.fixture(scope="module")
def workflow_stack(tmp_path_factory):
    """redis-server, a worker and the API running the doc_review workflow and the doc pipeline (keys configured)."""
    local = LocalStack(tmp_path_factory.mktemp("workflow-ui"), apps=["tests.e2e.dev_ui_apps:review_workflow_app", "examples.doc_pipeline:app"],
                       api_keys_json=json.dumps(KEYS), extra_env={"GOOGLE_API_KEY": "", "GEMINI_API_KEY": ""})
    with local:
        yield local


@pytest.fixture
def approver(browser, workflow_stack, tmp_path) -> Approver:
    shots = tmp_path / "screenshots"
    shots.mkdir()
    print(f"workflow UI screenshots: {shots}")
    return Approver(browser, workflow_stack.base_url, shots)


@pytest.fixture
def browser(tmp_path):
    from .browser import headless_chromium

    driver = headless_chromium(tmp_path / "chromium-profile")
    yield driver
    driver.quit()


def _node(approver: Approver, name: str, status: str):
    """The node run ``name`` (under the root workflow) once the page shows it with ``status``."""
    return approver.find(f"//li[@data-path='{ROOT}/{name}@1'][@data-status='{status}']")


@pytest.mark.timeout(300)
def test_a_workflow_page_shows_its_nodes_live_and_the_request_input_answered_there_completes_it(
    workflow_stack, approver
):
    store = redis.Redis.from_url(workflow_stack.redis.url, decode_responses=True)
    with httpx.Client(base_url=workflow_stack.base_url, headers={"Authorization": f"Bearer {BOB_KEY}"},
                      timeout=10) as http:
        session_id = "wf-ui"
        assert http.post(f"/apps/{APP}/users/bob/sessions/{session_id}").status_code == 200
        invocation_id = http.post(f"/apps/{APP}/users/bob/sessions/{session_id}/invocations",
                                  json={"newMessage": user_message(f"launch plan {HOLD}")}).json()["invocationId"]
        approver.open(BOB_KEY, f"#/invocations/{invocation_id}")

        # polish's first attempt failed; its second is held: the page shows it retrying, fetch done.
        assert "→ {\"topic\": \"launch plan [hold]\"" in _node(approver, "fetch", "done").text
        polish = _node(approver, "polish", "retrying")
        assert "attempt 2" in polish.text
        assert "an attempt failed: ValueError: the spell checker timed out" in polish.text
        assert approver.find(f"//li[@data-path='{ROOT}']").get_attribute("data-status") == "running"
        approver.shoot("workflow-retrying")

        store.set(release_key(invocation_id), "1")
        review = _node(approver, "review", "waiting")
        card = review.find_element("xpath", ".//section[contains(@class, 'kind-input')]")
        for text in (
            "QUESTION", "adk_request_input", REVIEW_MESSAGE, '"draft": "Notes on launch plan."', "approved",
            "tick to publish", "note", "what to change"):
            assert text in card.text, f"{text!r} missing from the card:\n{card.text}"
        _node(approver, "polish", "done")
        approver.find(f"//li[@data-path='{ROOT}'][@data-status='waiting']")
        assert approver.find("//section[@class='workflow']/h2").text == (
            "Workflow 1 waiting for a person · 2 done")
        assert not approver.driver.find_elements("xpath", "//div[@class='pending']//section")  # not shown twice
        approver.shoot("workflow-waiting")

        card.find_element("xpath", ".//input[@name='approved']").click()
        card.find_element("xpath", ".//input[@name='note']").send_keys("ship it")
        card.find_element("xpath", ".//button[normalize-space()='Send answer']").click()

        approver.find("//div[@class='summary']//span[contains(@class, 'pill')][normalize-space()='completed']")
        _node(approver, "publish", "done")
        approver.find("//section[@class='workflow']/h2[normalize-space()='Workflow 5 done']")
        shown = {li.get_attribute("data-path"): li.get_attribute("data-status")
                 for li in approver.driver.find_elements("xpath", "//li[contains(@class, 'node')]")}
        assert shown == {ROOT: "done", **{f"{ROOT}/{name}@1": "done"
                                          for name in ("fetch", "polish", "review", "decide", "publish")}}
        timeline = approver.find("//table[@class='timeline']").text
        for step in (f"{APP} › polish failed", f"{APP} › polish: attempt 2 begins",
                     f"{APP} › review calls adk_request_input", "adk_request_input answered",
                     "queued again, after an answer", f"{APP} › publish output", "completed"):
            assert step in timeline, f"{step!r} missing from the timeline:\n{timeline}"
        approver.shoot("workflow-done")

        record = _status(http, invocation_id, "completed")
        assert record["pendingCalls"] == []
        events = http.get(f"/apps/{APP}/users/bob/sessions/{session_id}").json()["events"]
        assert {e["invocationId"] for e in events} == {invocation_id}  # resumed under the same id
        answers = [p["functionResponse"] for e in events if e["author"] == "user"
                   for p in e["content"]["parts"] if "functionResponse" in p]
        assert [(a["id"], a["response"]) for a in answers] == [("review", {"approved": True, "note": "ship it"})]
        assert store.hgetall(attempts_key(invocation_id)) == {"polish": "2"}  # not run again after the answer
        nodes = http.get(f"/invocations/{invocation_id}/nodes").json()
        assert [(n["name"], n["status"], n["attempts"], n["output"]) for n in nodes["nodes"]] == [
            (APP, "done", 1, "published"), ("fetch", "done", 1, '{"topic": "launch plan [hold]", '
                                                                    '"text": "notes on launch plan"}'),
            ("polish", "done", 2, "Notes on launch plan."), ("review", "done", 1, '{"approved": true, "note": "ship it"}'),
            ("decide", "done", 1, '{"approved": true, "note": "ship it"}'), ("publish", "done", 1, "published")]
    store.close()
    assert approver.was_not_reloaded()


@pytest.mark.timeout(300)
def test_each_review_run_of_the_doc_pipeline_shows_its_own_answer_and_the_timeline_says_which_run_it_answered(
    workflow_stack, approver
):
    pipeline = "doc_pipeline@1"
    changes = {"decision": "changes", "note": "Mention that it survives a worker crash."}
    with httpx.Client(base_url=workflow_stack.base_url, headers={"Authorization": f"Bearer {BOB_KEY}"},
                      timeout=10) as http:
        base = "/apps/doc_pipeline/users/bob/sessions/review-loop"
        assert http.post(base).status_code == 200
        invocation_id = http.post(f"{base}/invocations",
                                  json={"newMessage": user_message("workflows")}).json()["invocationId"]
        _status(http, invocation_id, "parked")
        answer = {"functionResponses": [{"id": "review", "name": "adk_request_input", "response": changes}]}
        assert http.post(f"/invocations/{invocation_id}/function-responses", json=answer).status_code == 202
        approver.open(BOB_KEY, f"#/invocations/{invocation_id}")

        first = approver.find(f"//li[@data-path='{pipeline}/review@1'][@data-status='done']")
        assert f"→ {json.dumps(changes)}" in first.text
        second = approver.find(f"//li[@data-path='{pipeline}/review@2'][@data-status='waiting']")
        assert "→" not in second.find_element("xpath", "./div[@class='node-line']").text
        card = second.find_element("xpath", ".//section[contains(@class, 'kind-input')]")
        assert "(Revised: Mention that it survives a worker crash.)" in card.text
        approver.shoot("review-loop-waiting")

        card.find_element("xpath", ".//select[@name='decision']/option[normalize-space()='approve']").click()
        card.find_element("xpath", ".//button[normalize-space()='Send answer']").click()

        approver.find("//div[@class='summary']//span[contains(@class, 'pill')][normalize-space()='completed']")
        second = approver.find(f"//li[@data-path='{pipeline}/review@2'][@data-status='done']")
        assert '→ {"decision": "approve"}' in second.text
        first = approver.find(f"//li[@data-path='{pipeline}/review@1'][@data-status='done']")
        assert f"→ {json.dumps(changes)}" in first.text
        answers = [row.text for row in approver.driver.find_elements(
            "xpath", "//table[@class='timeline']//tr[contains(., 'adk_request_input answered')]")]
        assert [text.split(" (")[1].split(", took")[0] for text in answers] == [
            "for doc_pipeline › review", "for doc_pipeline › review #2"], answers
        approver.shoot("review-loop-done")
        _status(http, invocation_id, "completed")
    assert approver.was_not_reloaded()
