"""An upgrade as an operator does it (issue 25): the previous release (tests/upgrade/previous_release.txt) parks
approvals and completes invocations on a real redis-server (AOF on); this version takes over the same Redis, kept
running and then restarted from its AOF. Nothing is lost: every old invocation reads back, every old approval is
in the wide inbox (what /ui shows) and is answered to completion exactly once with its history, the counts equal
a scan of the records, and old records are swept by retention once it is due (a short retention stamped by the
previous release's client: keys gone, off the index and the user's list, counts still equal to a scan). A mixed
fleet (a new worker beside a worker of the previous release) is refused, naming both layouts. An invocation the
previous release's worker was running when it was stopped with SIGTERM (its hand-back leaves the record
`running`) is resumed by this version and completes with each step done once.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path
from typing import NamedTuple

import httpx
import pytest

from agentq.local_stack import LocalStack
from runtime.redis_store import keys
from runtime.redis_store.layout import LAYOUT_VERSION
from runtime.redis_store.redis_url import redis_client_from_url
from runtime.statuses import STATUSES
from worker.records.status_counts import (
    APPS,
    UNDERFLOWS,
    every_scope_below_zero,
    flow_fields,
    listed_apps,
    net_counts,
)

from . import previous_release

APP = "tests.worker.apps:approval_app"
SLOW = "tests.worker.apps:slow_app"
ENQUEUE_WITH_SHORT_RETENTION = """
import sys
from worker.client import SyncAgentqClient
from worker.retention import RetentionPolicy
with SyncAgentqClient(retention=RetentionPolicy(settled_s=float(sys.argv[2]))) as client:
    session = client.create_session("approval", sys.argv[1]).id
    print(client.enqueue("approval", sys.argv[1], session, "pay soon", None))
"""
"""Run by the previous release's Python, with its module paths (before worker/ was grouped into packages): one
invocation stamped with the retention in argv[2] (seconds)."""
USER = "upgrader"
PARKED, COMPLETED = 5, 5
SWEPT_RETENTION_S = 180.0
"""The retention of the old completed invocation this version sweeps: long enough that its previous release's TTL
(the same) has not removed it before this version migrates the store (which takes the TTL off), short enough
that it is due before the test ends (on a 2-core machine shared with a load of 30, 60 s was not enough: the
previous release's TTL removed it first)."""
STEPS = 6
"""Steps of the slow app (tests/worker/apps.py), each a counted side effect."""


@pytest.fixture(scope="module")
def previous():
    try:
        return previous_release.ensure()
    except previous_release.Unavailable as exc:
        pytest.skip(f"the previous release cannot be installed here: {exc}")


def _until(what: str, check, within_s: float = 90.0, then=lambda: ""):
    """Poll ``check`` until it returns something true (processes and clocks at work; nothing here times them);
    ``then``: what the failure says besides."""
    deadline = time.monotonic() + within_s
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, f"never happened: {what} {then()}"
        time.sleep(0.1)


def _get(body: dict, name: str):
    """A field of an API body, camelCase or snake_case."""
    camel = name.split("_")[0] + "".join(part.title() for part in name.split("_")[1:])
    return body[camel] if camel in body else body.get(name)


class Store:
    """Direct reads of the store (what the previous release wrote is read as bytes on disk would be)."""

    def __init__(self, url: str):
        self.client = redis_client_from_url(url, asyncio=False, decode_responses=True)

    def record(self, invocation_id: str) -> dict[str, str]:
        return self.client.hgetall(keys.invocation("approval", USER, invocation_id))

    def status(self, invocation_id: str, app: str = "approval") -> str | None:
        return self.client.hget(keys.invocation(app, USER, invocation_id), "status")

    def call_id(self, invocation_id: str) -> str:
        return next(name[2:] for name in self.record(invocation_id) if name.startswith("p:"))

    def traces(self, invocation_id: str) -> dict:
        """What names the invocation in the store (nothing once retention swept it)."""
        found = {"record": self.client.exists(keys.invocation("approval", USER, invocation_id)),
                 "settled": self.client.exists(keys.invocation_settled("approval", USER, invocation_id)),
                 "journal": self.client.exists(keys.invocation_journal("approval", USER, invocation_id)),
                 "index": self.client.hget(keys.invocation_index(), invocation_id),
                 "listed": self.client.zscore(keys.user_invocations("approval", USER), invocation_id),
                 "retention_due": self.client.zscore(keys.retention_due(), invocation_id)}
        return {name: value for name, value in found.items() if value} | (
            {"now_ms": int(time.time() * 1000), "record_fields": self.record(invocation_id)}
            if found["record"] else {})

    def side_effects(self, invocation_id: str) -> Counter:
        counts = self.client.hgetall(f"test:side_effects:{invocation_id}")
        return Counter({field.split(":")[0]: int(n) for field, n in counts.items()})

    def counts_equal_a_scan(self) -> dict[str, int]:
        truth: Counter = Counter()
        for key in self.client.scan_iter(match="agentq:{*}:i:*", count=1000):
            if not key.endswith((":journal", ":settled")):
                truth[self.client.hget(key, "status")] += 1
        fields = self.client.hgetall(keys.status_counts())
        counted = Counter()  # the deployment's counts: its apps' added up, as worker.records.status_counts does
        for app in listed_apps(fields.get(APPS)):
            counted.update(net_counts([fields.get(field) for field in flow_fields(f"a:{app}:")]))
        assert {status: counted[status] for status in STATUSES} == {status: truth[status] for status in STATUSES}
        assert UNDERFLOWS not in fields
        assert every_scope_below_zero(fields) == {}
        return counted


class OldPhase(NamedTuple):
    """What the previous release left: ids by what became of them."""

    parked: list[str]
    completed: list[str]
    expired: str
    """completed with a 1 s retention: its record expired by the previous release's TTL"""
    swept: str
    """completed with SWEPT_RETENTION_S: this version's sweeper removes it"""
    stopped: str
    """running in the slow app when the previous release's worker was stopped with SIGTERM"""


def _old_phase(previous, stack: LocalStack, store: Store) -> OldPhase:
    """The previous release's worker parks PARKED + COMPLETED approvals; COMPLETED of them are answered with its
    CLI and complete. One more is enqueued with a 1 s retention and completed: its record expires by the
    previous release's TTL (whatever it leaves behind, index or listing entries, the sweepers remove); one with
    SWEPT_RETENTION_S is completed last. Then a slow invocation is started and the worker stopped with SIGTERM
    after its first step: its hand-back leaves the record `running`."""
    env = previous.env(stack.redis.url, TEST_MODEL_LATENCY="2")  # the slow app's steps: one every 2 s, so a loaded machine still stops it midway
    log = open(stack.data_dir / "old-worker.log", "ab")  # noqa: SIM115 - closed with the process below
    old_worker = subprocess.Popen(previous.agentq("worker", "--app", APP, "--app", SLOW), cwd=previous.src, env=env,
                                  stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def old_agentq(*argv: str, **extra_env: str) -> str:
        done = subprocess.run(previous.agentq(*argv), cwd=previous.src, env={**env, **extra_env},
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done
        return done.stdout

    try:
        ids = [json.loads(old_agentq("enqueue", "approval", USER, f"pay {n}").splitlines()[-1])["invocationId"]
               for n in range(PARKED + COMPLETED)]
        # its CLI stamps records with the default retention whatever the settings: its client library does it
        def enqueue_with_retention(seconds: float) -> str:
            done = subprocess.run([str(previous.python), "-c", ENQUEUE_WITH_SHORT_RETENTION, USER, str(seconds)],
                                  cwd=previous.src, env=env, capture_output=True, text=True, timeout=120)
            assert done.returncode == 0, done
            return done.stdout.split()[-1]

        expired = enqueue_with_retention(1)
        for invocation_id in [*ids, expired]:
            _until(f"{invocation_id} parked by the previous release", lambda i=invocation_id: (
                store.status(i) == "parked"))
        answered, waiting = ids[:COMPLETED], ids[COMPLETED:]
        for invocation_id in [*answered, expired]:
            old_agentq("respond", invocation_id, store.call_id(invocation_id), json.dumps({"approved": True}))
        for invocation_id in answered:
            _until(f"{invocation_id} completed by the previous release", lambda i=invocation_id: (
                store.status(i) == "completed"))
        _until(f"{expired} expired by the previous release's TTL", lambda: not store.record(expired))
        _a_new_worker_refuses_to_run_beside_it(stack)

        swept = enqueue_with_retention(SWEPT_RETENTION_S)
        _until(f"{swept} parked by the previous release", lambda: store.status(swept) == "parked")
        old_agentq("respond", swept, store.call_id(swept), json.dumps({"approved": True}))
        _until(f"{swept} completed by the previous release", lambda: store.status(swept) == "completed")

        stopped = json.loads(old_agentq("enqueue", "slow", USER, "go").splitlines()[-1])["invocationId"]
        _until(f"{stopped}'s first step done by the previous release", lambda: (
            store.side_effects(stopped)["step"] >= 1))
        old_worker.send_signal(signal.SIGTERM)  # a warm shutdown: it hands the invocation back
        assert old_worker.wait(timeout=120) == 0
        assert store.status(stopped, "slow") == "running"  # what the previous release leaves
        assert len(store.client.hgetall(f"test:side_effects:{stopped}")) < STEPS
    finally:
        LocalStack.stop_process(old_worker)
        log.close()
    return OldPhase(waiting, answered, expired, swept, stopped)


def _a_new_worker_refuses_to_run_beside_it(stack: LocalStack) -> None:
    worker = stack.start_worker()
    assert worker.wait(timeout=120) == 2, stack.log_tail("worker0")
    stack.workers.remove(worker)
    said = stack.log_tail("worker0")
    assert "(layout 0)" in said and f"this code is layout {LAYOUT_VERSION}" in said, said


def _new_phase_checks(stack: LocalStack, store: Store, parked: list[str], completed: list[str], swept: str) -> None:
    """Every old invocation reads back; every old approval is in the wide inbox; the counts equal a scan (the
    old completed ones in ``completed``, the one stopped by SIGTERM, completed by now, and ``swept`` until its
    retention removes it)."""
    with httpx.Client(base_url=stack.base_url, timeout=30) as http:
        for invocation_id in parked + completed:
            body = http.get(f"/invocations/{invocation_id}").json()
            assert _get(body, "status") == ("parked" if invocation_id in parked else "completed"), body
            if invocation_id in parked:
                assert [call["id"] for call in _get(body, "pending_calls")] == [store.call_id(invocation_id)]
        metrics = http.get("/metrics").text
        assert "agentq_status_count_underflows 0.0" in metrics, metrics
        inbox = http.get("/inbox", params={"limit": 200}).json()  # what /ui's approver page reads
        assert _get(inbox, "total") == PARKED, inbox
        assert sorted(_get(item, "invocation_id") for item in inbox["invocations"]) == sorted(parked)
    assert store.counts_equal_a_scan() == {**dict.fromkeys(STATUSES, 0), "parked": PARKED,
                                           "completed": COMPLETED + 1 + bool(store.record(swept))}


@pytest.mark.timeout(1500)
def test_the_previous_releases_approvals_counts_and_records_carry_over_to_this_version(previous, tmp_path):
    stack = LocalStack(tmp_path / "stack", apps=[APP, SLOW])
    stack.data_dir.mkdir(parents=True)
    stack.redis.start()
    store = Store(stack.redis.url)
    try:
        old = _old_phase(previous, stack, store)
        parked, completed, expired, swept = old.parked, old.completed, old.expired, old.swept
        call_ids = {invocation_id: store.call_id(invocation_id) for invocation_id in parked}

        # this version on the same Redis, kept running: it migrates at first start
        stack.start_worker()
        stack.start_api()
        _until("the store migrated", lambda: store.client.hget("agentq:layout", "version") == str(LAYOUT_VERSION))
        # the old completed one due soon: its TTL handed to retention, due when its own retention ends
        swept_record = store.record(swept)
        assert swept_record and store.client.pttl(keys.invocation("approval", USER, swept)) == -1, swept_record
        assert store.client.zscore(keys.retention_due(), swept) <= int(
            (float(swept_record["finished_at"]) + SWEPT_RETENTION_S) * 1000)
        # the one the previous release's SIGTERM left running: resumed, each step done once
        _until(f"{old.stopped} completed by this version", lambda: store.status(old.stopped, "slow") == "completed",
               then=lambda: store.client.hgetall(keys.invocation("slow", USER, old.stopped)))
        steps = store.client.hgetall(f"test:side_effects:{old.stopped}")  # one field per step's call id
        assert len(steps) == STEPS and set(steps.values()) == {"1"}, steps
        _new_phase_checks(stack, store, parked, completed, swept)

        # ... and on the same Redis restarted from its AOF
        stack.stop_process(stack.api)
        for worker in stack.workers:
            stack.stop_process(worker)
        stack.workers.clear()
        before = sorted(store.client.scan_iter(match="agentq:*", count=1000))
        stack.redis.stop()
        stack.redis.start()
        assert sorted(store.client.scan_iter(match="agentq:*", count=1000)) == before  # all back from the AOF
        stack.start_worker()
        stack.start_api()
        _new_phase_checks(stack, store, parked, completed, swept)

        # every old approval answered through this version's API completes once, with its history
        with httpx.Client(base_url=stack.base_url, timeout=30) as http:
            for invocation_id in parked:
                answer = {"functionResponses": [{"id": call_ids[invocation_id], "name": "ask_for_approval",
                                                 "response": {"approved": True}}]}
                reply = http.post(f"/invocations/{invocation_id}/function-responses", json=answer)
                assert reply.status_code == 202, reply.text
            for invocation_id in parked:
                body = _until(f"{invocation_id} completed by this version", lambda i=invocation_id: (
                    (b := http.get(f"/invocations/{i}").json()) and _get(b, "status") == "completed" and b))
                assert store.side_effects(invocation_id) == Counter(ask_for_approval=1, pay=1)
                session = http.get(f"/apps/approval/users/{USER}/sessions/{_get(body, 'session_id')}").json()
                texts = [part.get("text") for event in session["events"]
                         for part in (event.get("content") or {}).get("parts", [])]
                calls = [(part.get("functionCall") or part.get("function_call") or {}).get("name")
                         for event in session["events"] for part in (event.get("content") or {}).get("parts", [])]
                assert calls.count("ask_for_approval") == 1 and calls.count("pay") == 1, calls
                assert texts[0].startswith("pay ") and texts[-1] == "Paid 100.", texts
                again = http.post(f"/invocations/{invocation_id}/function-responses", json={
                    "functionResponses": [{"id": call_ids[invocation_id], "name": "ask_for_approval",
                                           "response": {"approved": True}}]})
                assert again.status_code == 409, again.text  # answered once: nothing left to answer
            assert _get(http.get("/inbox").json(), "total") == 0
        for invocation_id in completed:
            assert store.side_effects(invocation_id) == Counter(ask_for_approval=1, pay=1)
        store.counts_equal_a_scan()

        # retention: the expired old record's leftovers are swept; the old completed one whose retention ends
        # now is swept by this version (keys, index, listing, count), the counts still equal to a scan
        _until(f"{expired}'s index and listing entries swept", lambda: not store.traces(expired),
               then=lambda: store.traces(expired))
        _until(f"{swept} swept once its retention was due", lambda: not store.traces(swept),
               within_s=SWEPT_RETENTION_S + 90, then=lambda: store.traces(swept))
        assert store.counts_equal_a_scan()["completed"] == COMPLETED + PARKED + 1  # + the stopped one, - swept
        # every other old record has no TTL any more (only retention removes it, with its count) and is due
        # when its own retention ends after it finished
        for invocation_id in parked + completed:
            record = store.record(invocation_id)
            assert store.client.pttl(keys.invocation("approval", USER, invocation_id)) == -1
            ends_ms = int(float(record["finished_at"]) * 1000) + int(float(record["retention_s"]) * 1000)
            due_ms = store.client.zscore(keys.retention_due(), invocation_id)
            # looked at no later than that (then kept until it: worker.sweeper puts it back at its end)
            assert due_ms <= ends_ms, (due_ms, ends_ms, record)
    finally:
        for name in ("api", *(f"worker{n}" for n in range(len(stack.workers)))):
            print(f"--- {name}\n{stack.log_tail(name)}")
        stack.stop()
        store.client.close()
        old_log = Path(stack.data_dir / "old-worker.log")
        if old_log.exists():
            print("--- old worker\n" + old_log.read_text(errors="replace")[-3000:])
