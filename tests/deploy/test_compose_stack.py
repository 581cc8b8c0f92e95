"""compose.yaml as shipped, built from the lock and run for real: approval flow over HTTP, a worker container
SIGKILLed mid-invocation, Flower behind its login. Each step prints what it saw (pytest -s)."""

from __future__ import annotations

import json
import socket
import time

import httpx
import pytest
from packaging.utils import canonicalize_name

from tests.deploy.compose_stack import API_KEY, CACHE, FLOWER_LOGIN, run, say

pytestmark = pytest.mark.timeout(1800)  # a cold build on a loaded 2-core machine; warm runs take about a minute


@pytest.fixture(scope="module")
def api(stack):
    with httpx.Client(base_url=stack.api_url, headers={"Authorization": f"Bearer {API_KEY}"}, timeout=30) as client:
        yield client


def _message(text: str) -> dict:
    return {"new_message": {"role": "user", "parts": [{"text": text}]}}


def _enqueue(api: httpx.Client, app: str, text: str) -> tuple[str, str]:
    session = api.post(f"/apps/{app}/users/deploy-user/sessions", json={})
    session.raise_for_status()
    session_id = session.json()["id"]
    queued = api.post(f"/apps/{app}/users/deploy-user/sessions/{session_id}/invocations", json=_message(text))
    assert queued.status_code == 202, queued.text
    return session_id, queued.json()["invocationId"]


def _wait_for(api: httpx.Client, invocation_id: str, status: str, timeout: float = 120) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        record = api.get(f"/invocations/{invocation_id}").json()
        if record["status"] == status:
            return record
        assert record["status"] not in {"completed", "failed", "cancelled"} - {status}, record
        assert time.monotonic() < deadline, f"{invocation_id} still {record['status']} after {timeout} s"
        time.sleep(0.2)


def _events(api: httpx.Client, app: str, session_id: str) -> list[dict]:
    return api.get(f"/apps/{app}/users/deploy-user/sessions/{session_id}").json()["events"]


def _texts(events: list[dict]) -> list[str]:
    return [part["text"] for event in events for part in (event.get("content") or {}).get("parts", [])
            if part.get("text")]


def test_the_image_holds_exactly_the_locked_pins_and_runs_as_a_non_root_user(stack):
    freeze = run("docker", "run", "--rm", "--network", "none", stack.image, "sh", "-c", "id -u; pip freeze --all")
    uid, *installed = freeze.split()
    pins = {canonicalize_name(line.split("==")[0]): line.split("==")[1].split()[0]
            for line in (CACHE / "wheels" / "requirements.txt").read_text().splitlines() if line.strip()}
    frozen = {canonicalize_name(name): version for name, version in (line.split("==") for line in installed)}
    extra = set(frozen) - set(pins)
    say(f"image: uid {uid}; {len(pins)} packages installed, each at the lock's version; besides them: "
        f"{sorted(extra)}")
    assert uid == "10001"
    assert {name: frozen.get(name) for name in pins} == pins
    assert extra == {"agentq", "pip"}


def test_two_workers_on_one_host_name_count_as_two(stack):
    names = [stack.worker_name(container) for container in stack.containers("worker")]
    status = run("docker", "exec", stack.containers("api")[0], "agentq", "status")
    workers_line = next(line for line in status.splitlines() if line.startswith("workers"))
    say(f"worker containers {stack.containers('worker')} announced {names}; agentq status: {workers_line}")
    assert len(set(names)) == 2 and all(f"-{socket.gethostname()}-" in name for name in names)
    assert workers_line.split()[1:3] == ["2", "alive:"]


def test_the_approval_flow_completes_over_http(stack, api):
    session_id, invocation_id = _enqueue(api, "reimbursement", "Please reimburse $250 for the team dinner")
    parked = _wait_for(api, invocation_id, "parked")
    [pending] = parked["pendingCalls"]
    assert (pending["name"], pending["args"]) == ("ask_for_approval", {"purpose": "the team dinner", "amount": 250.0})
    say(f"approval: {invocation_id} parked on {pending['name']} {pending['args']}")
    answered = api.post(f"/invocations/{invocation_id}/function-responses", json={"function_responses": [
        {"id": pending["id"], "name": pending["name"], "response": {"status": "approved"}}]})
    assert (answered.status_code, answered.json()["status"]) == (202, "queued")
    _wait_for(api, invocation_id, "completed")
    texts = _texts(_events(api, "reimbursement", session_id))
    say(f"approval: answered approved, completed; the agent said {texts[-1]!r}")
    assert texts == ["Please reimburse $250 for the team dinner",
                     "$250.00 for the team dinner needs a manager's approval (ticket approval-the team dinner); "
                     "I will pay it once approved.",
                     "Paid $250.00 for the team dinner."]


def _ticks(events: list[dict]) -> tuple[list[int], list[dict]]:
    parts = [part for event in events for part in (event.get("content") or {}).get("parts", [])]
    calls = [part["functionCall"]["args"]["n"] for part in parts if part.get("functionCall")]
    responses = [part["functionResponse"]["response"] for part in parts if part.get("functionResponse")]
    return calls, responses


def test_a_worker_container_killed_mid_invocation_hands_it_to_the_other(stack, api):
    session_id, invocation_id = _enqueue(api, "countdown", "count")
    deadline = time.monotonic() + 60
    while len(_ticks(_events(api, "countdown", session_id))[1]) < 2:  # two ticks answered: well under way
        assert time.monotonic() < deadline, "the countdown did not get going"
        time.sleep(0.1)
    workers = stack.containers("worker")
    [victim] = [c for c in workers if f"invocation {invocation_id}: running (attempt 1)" in stack.logs(c)]
    [survivor] = [c for c in workers if c != victim]
    stack.kill(victim)
    killed = stack.state(victim)
    say(f"failover: {invocation_id} running on {victim} after 2 of 8 ticks; docker kill -s KILL {victim}: "
        f"{killed['Status']}, exit code {killed['ExitCode']}")
    record = _wait_for(api, invocation_id, "completed")
    survivor_log = stack.logs(survivor)
    calls, responses = _ticks(_events(api, "countdown", session_id))
    texts = _texts(_events(api, "countdown", session_id))
    say(f"failover: completed on {survivor} (attempt {record['attempts']}); ticks called {calls}; "
        f"the agent said {texts[-1]!r}")
    assert (killed["Status"], killed["ExitCode"]) == ("exited", 137)
    assert f"invocation {invocation_id}: running (attempt 2)" in survivor_log
    assert f"invocation {invocation_id}: completed" in survivor_log
    assert f"invocation {invocation_id}: completed" not in stack.logs(victim)
    assert record["attempts"] == 2
    assert calls == list(range(1, 9)) and len(responses) == 8  # every tick once: nothing lost, nothing doubled
    assert texts[-1] == "counted 8 ticks"


def test_flower_shows_the_tasks_behind_its_login_and_refuses_without_it(stack, api):
    _, invocation_id = _enqueue(api, "reimbursement", "Please reimburse $20 for a taxi")
    _wait_for(api, invocation_id, "completed")
    with httpx.Client(base_url=stack.flower_url, timeout=30) as flower:
        refused = flower.get("/api/tasks")
        health = flower.get("/healthcheck")  # the one page open without the login (compose's healthcheck)
        deadline = time.monotonic() + 60
        while True:  # Flower learns of tasks from the workers' task events, a moment after they ran
            tasks = flower.get("/api/tasks", auth=FLOWER_LOGIN)
            mine = [t for t in tasks.json().values() if invocation_id in (t.get("args") or "")]
            if mine and mine[-1]["state"] == "SUCCESS" or time.monotonic() > deadline:
                break
            time.sleep(0.5)
    say(f"flower: /api/tasks without login {refused.status_code}; /healthcheck {health.status_code} {health.text!r}; "
        f"/api/tasks with login {tasks.status_code}, "
        f"{len(tasks.json())} tasks seen, {invocation_id}'s: {json.dumps([(t['name'], t['state']) for t in mine])}")
    assert refused.status_code == 401
    assert (health.status_code, health.text) == (200, "OK")
    assert tasks.status_code == 200
    assert [(t["name"], t["state"]) for t in mine][-1] == ("agentq.run", "SUCCESS")
