"""/ui in headless Chromium against real ``agentq api`` and ``agentq worker`` processes: many pages in one
browser, and a long argument in the timeline.

A browser opens at most 6 HTTP/1.1 connections to one host, and each /ui page holds a stream open: a page
left for the back-forward cache must close its stream, or the 7th page's requests wait behind the others.
"""

from __future__ import annotations

import uuid

import httpx
import pytest

from agentq.local_stack import LocalStack

from .browser import headless_chromium
from .conftest import user_message
from .test_inbox_ui import Approver

LONG_ACCOUNT = "acct_" + "0123456789" * 40
"""A recipient the scripted model copies into the call's arguments: 405 characters without a space."""


@pytest.fixture(scope="module")
def open_stack(tmp_path_factory):
    """An API without keys (loopback: the page asks for none) and a worker running the transfers app."""
    local = LocalStack(tmp_path_factory.mktemp("ui-pages"), apps=["examples.money_transfer:app"],
                       extra_env={"GOOGLE_API_KEY": "", "GEMINI_API_KEY": ""})
    with local:
        yield local


@pytest.fixture
def person(open_stack, tmp_path):
    driver = headless_chromium(tmp_path / "chromium-profile")
    shots = tmp_path / "screenshots"
    shots.mkdir()
    print(f"/ui screenshots: {shots}")
    yield Approver(driver, open_stack.base_url, shots)
    driver.quit()


def _parked_transfer(stack: LocalStack, to: str) -> str:
    with httpx.Client(base_url=stack.base_url, timeout=10) as http:
        session_id = "ui-" + uuid.uuid4().hex[:8]
        assert http.post(f"/apps/transfers/users/bob/sessions/{session_id}").status_code == 200
        enqueued = http.post(f"/apps/transfers/users/bob/sessions/{session_id}/invocations",
                             json={"newMessage": user_message(f"Please send $300 to {to}.")})
        assert enqueued.status_code == 202, enqueued.text
        return enqueued.json()["invocationId"]


@pytest.mark.timeout(300)
def test_the_eighth_page_opened_in_one_browser_loads_its_inbox_while_seven_wait_in_the_back_forward_cache(
        open_stack, person):
    invocation_id = _parked_transfer(open_stack, "carol")
    for visit in range(1, 9):  # a new document each time (the query differs), so the one before goes to the cache
        person.driver.get(f"{open_stack.base_url}/ui?visit={visit}#/inbox")
        person.find("//div[@class='live'][contains(., 'live')]/span[contains(@class, 'on')]")
        person.item(invocation_id)
    person.driver.back()  # a page from the cache opens its stream again and carries on
    person.find("//div[@class='live'][contains(., 'live')]/span[contains(@class, 'on')]")
    person.shoot("eighth-inbox")
    assert "visit=7" in person.driver.current_url


@pytest.mark.timeout(300)
def test_a_long_argument_of_a_confirmation_wraps_in_the_timeline_instead_of_widening_the_page(open_stack, person):
    invocation_id = _parked_transfer(open_stack, LONG_ACCOUNT)
    person.driver.get(f"{open_stack.base_url}/ui#/invocations/{invocation_id}")
    person.find("//table[@class='timeline']//td[contains(., 'calls adk_request_confirmation')]")
    person.find("//section[contains(@class, 'pending')] | //div[@class='pending']//button[normalize-space()='Approve']")
    person.shoot("long-argument")
    widths = person.driver.execute_script("""
        const cells = [...document.querySelectorAll('.args td')].filter((td) => td.textContent.includes(arguments[0]));
        const page = document.scrollingElement;
        return {cells: cells.map((td) => [td.scrollWidth, td.clientWidth]),
                page: [page.scrollWidth, page.clientWidth]};
    """, LONG_ACCOUNT)
    assert len(widths["cells"]) >= 2, widths  # the call in the timeline and its confirmation's held call
    assert all(scroll <= client for scroll, client in widths["cells"]), widths
    assert widths["page"][0] <= widths["page"][1], widths
