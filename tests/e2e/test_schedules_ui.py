"""The schedules page in headless Chromium against real ``agentq api`` and ``agentq worker`` processes: a person
signs in, makes a schedule, runs it now, sees the run complete, pauses it and deletes it."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from .browser import headless_chromium
from .conftest import ALICE_KEY, client

WAIT_S = 30


@pytest.fixture
def browser(tmp_path):
    driver = headless_chromium(tmp_path / "chromium-profile")
    yield driver
    driver.quit()


def find(driver, xpath: str, timeout: float = WAIT_S):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout).until(ec.visibility_of_element_located((By.XPATH, xpath)))


@pytest.mark.timeout(240)
async def test_a_person_makes_runs_pauses_and_deletes_a_schedule_on_the_page(stack, browser):
    driver, name = browser, "nightly-" + uuid.uuid4().hex[:6]
    driver.get(f"{stack.base_url}/ui#/inbox")
    find(driver, "//input[@id='api-key']").send_keys(ALICE_KEY)
    find(driver, "//button[normalize-space()='Use this key']").click()
    find(driver, "//nav/a[normalize-space()='Schedules']").click()
    find(driver, "//input[@name='app']").send_keys("weather")
    find(driver, "//input[@name='user']").send_keys("alice")
    find(driver, "//button[normalize-space()='Show schedules']").click()

    find(driver, "//summary[normalize-space()='New schedule']").click()
    find(driver, "//input[@name='id']").send_keys(name)
    find(driver, "//input[@name='when']").send_keys("0 7 * * *")
    find(driver, "//input[@name='timezone']").clear()
    find(driver, "//input[@name='timezone']").send_keys("Europe/Paris")
    find(driver, "//input[@name='message']").send_keys("What is the weather in Paris?")
    find(driver, "//button[normalize-space()='Make schedule']").click()
    card = f"//article[@data-schedule='{name}']"
    find(driver, f"{card}//header[contains(., 'cron 0 7 * * * (Europe/Paris)')][contains(., '0 runs')]")

    find(driver, f"{card}//button[normalize-space()='Run now']").click()
    enqueued = find(driver, f"//div[@class='outcome']/p[starts-with(normalize-space(), '{name}: Enqueued e-')]")
    invocation_id = enqueued.text.removeprefix(f"{name}: Enqueued ").rstrip(".")
    async with client(stack, ALICE_KEY) as http:
        for _ in range(WAIT_S * 5):  # the example worker answers in well under a second; a loaded machine waits
            status = (await http.get(f"/invocations/{invocation_id}")).json()["status"]
            if status == "completed":
                break
            await asyncio.sleep(0.2)
    find(driver, f"{card}//button[normalize-space()='Runs']").click()
    find(driver, f"{card}//li[a[normalize-space()='{invocation_id}']][.//span[normalize-space()='completed']]")

    find(driver, f"{card}//button[normalize-space()='Pause']").click()
    find(driver, f"{card}//header[contains(., 'paused')]")
    find(driver, f"{card}//button[normalize-space()='Delete']").click()
    async with client(stack, ALICE_KEY) as http:
        for _ in range(WAIT_S * 5):
            gone = await http.get(f"/apps/weather/users/alice/schedules/{name}")
            if gone.status_code == 404:
                break
            await asyncio.sleep(0.2)
    assert gone.status_code == 404
    assert status == "completed"
