"""The matrix: every ADK flow through every entry point, on real processes, against google-adk 2.13.

One real stack per module (redis-server, one ``agentq worker``, ``agentq api`` with named keys, A2A on for every
app, an approval rule with separation of duties, and an ``agentq scheduler``) and one google-adk run of every flow (``adk_reference.py`` in
bench/.adk-venv). A cell is (entry point, flow, check); each (entry point, flow) runs once, the first time one
of its checks asks for it, and every check then reads what that run saw:

- ``events``: the session's committed events and state equal google-adk's in-memory Runner's for the same agent,
  message and answers (ids, timestamps and invocation ids aside; agentq's workflow bookkeeping events aside);
- ``paths``: each of those events has the ``nodeInfo.path`` google-adk gives it (compared apart from the events,
  see ``normalise.without_agentq_marks``);
- ``role``: a key without the needed role is refused (403, or an A2A error) and nothing is written;
- ``scope``: a key scoped to another user is refused (404, or an A2A error) and nothing is written;
- ``separation``: the requester cannot confirm its own confirmation (the approval rule), and nothing is written;
- ``counts``: the status counters of the cell's (app, user) equal a scan of the records;
- ``audit``: the answers' audit entries name the real principal and client, and the record names its enqueuer
  (for a schedule's run: the principal that made and triggered the schedule).

Not every check applies to every entry point: the Python client's caller is the local operator (no key, no
approval rule); a schedule's tick has no caller, so its creation and trigger are the guarded doors (``schedule``:
fired by its trigger; ``tick``: fired by the scheduler process, only its creation is guarded).

Cells failing because of a defect not fixed yet are in ``KNOWN_DEFECTS`` below, each ``xfail(strict=True)``
with the reason and the files the fix belongs in: delete an entry once its fix is merged (a fixed cell then
XPASSes, which fails the run).
``pytest tests/matrix -rxX`` lists each xfailed cell with its reason; ``--runxfail`` shows how each still fails.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from agentq.local_stack import CLI, LocalStack

from .entries import ENTRIES, EVE, READER, REQUESTER, Attempt, Cell, keys_json
from .flows import FLOWS
from .normalise import session_view

# (entry point, flow, check) -> the known defect that fails that cell on this branch; "*" matches any.
KNOWN_DEFECTS: dict[tuple[str, str, str], str] = {
    # empty: every defect the matrix found is fixed; a new one goes here with its reason while it is open
}

HERE = Path(__file__).parent
CHECKS = ("events", "paths", "role", "scope", "separation", "counts", "audit")
APPROVAL_POLICY = {"mx_confirmation": {"send_money": {"separation_of_duties": True}}}
CLIENT_ADDRESS = "127.0.0.1"

pytestmark = pytest.mark.timeout(600)


def _applies(entry: str, flow: str, check: str) -> bool:
    guarded = ENTRIES[entry].guards_start
    if check in ("role", "scope"):
        return guarded
    if check == "separation":
        return guarded and flow == "confirmation"
    return True


def _known(entry: str, flow: str, check: str) -> str | None:
    for (e, f, c), reason in KNOWN_DEFECTS.items():
        if e in ("*", entry) and f in ("*", flow) and c in ("*", check):
            return reason
    return None


def _cells() -> list:
    cells = []
    for entry in ENTRIES:
        for flow in FLOWS:
            for check in CHECKS:
                if not _applies(entry, flow, check):
                    continue
                reason = _known(entry, flow, check)
                marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
                cells.append(pytest.param(entry, flow, check, id=f"{entry}-{flow}-{check}", marks=marks))
    return cells


@pytest.fixture(scope="module")
def adk_sessions() -> dict:
    """Every flow run on google-adk 2.13 (in bench/.adk-venv), as ``normalise.session_view``s by flow."""
    from bench.adk_env import _clean_env, ensure_adk_venv

    try:
        python = ensure_adk_venv()
    except Exception as exc:  # noqa: BLE001 - no registry here: nothing to compare with
        pytest.skip(f"cannot install google-adk 2.13 into bench/.adk-venv: {exc}")
    proc = subprocess.run([str(python), str(HERE / "adk_reference.py")], capture_output=True, text=True,
                          env=_clean_env(), timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    env = {"AGENTQ_A2A_APPS": ",".join(spec.app.name for spec in FLOWS.values()),
           "AGENTQ_APPROVAL_POLICY": json.dumps(APPROVAL_POLICY), "GOOGLE_API_KEY": "", "GEMINI_API_KEY": ""}
    with LocalStack(tmp_path_factory.mktemp("matrix"), apps=[f"tests.matrix.flows:{name}" for name in FLOWS],
                    api_keys_json=json.dumps(keys_json()), extra_env=env) as running:
        with open(running.data_dir / "scheduler.log", "ab") as log:  # fires the tick entry point's schedules
            scheduler = subprocess.Popen([sys.executable, "-c", CLI, "scheduler"], env=running.env(), stdout=log,
                                         stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            yield running
        finally:
            running.stop_process(scheduler)


@dataclass
class Run:
    """What one flow through one entry point left: the compared session, the refused attempts, the final record,
    the counters and the scan of its scope."""

    view: dict | None = None
    status: str | None = None
    error: Any = None
    attempts: list[Attempt] = field(default_factory=list)
    audit: list[tuple] = field(default_factory=list)
    answers: int = 0
    enqueued_by: str | None = None
    counters: dict | None = None
    scanned: dict | None = None
    failure: BaseException | None = None


RUNS: dict[tuple[str, str], Run] = {}


def _snapshot(record) -> tuple:
    return record.status, sorted(call.id for call in record.pending_calls), len(record.audit)


async def _try_answer(cell: Cell, entry, guard: str, principal: str, responses: list[dict]) -> None:
    before = _snapshot(await cell.client.get(cell.invocation_id))
    accepted, got = await entry.answer(cell, principal, responses)
    after = _snapshot(await cell.client.get(cell.invocation_id))
    cell.attempts.append(Attempt(guard, f"{principal} answers", got, not accepted, after == before))


async def _refusals_hold(cell: Cell, entry, record, responses: list[dict]) -> bool:
    """A reader, eve, and (on a confirmation) the requester try to answer; False as soon as one got through
    (the flow then goes on with that answer, and the cell's checks show who answered)."""
    tries = [("role", READER), ("scope", EVE)]
    if any(call.kind == "confirmation" for call in record.pending_calls):
        tries.append(("separation", REQUESTER))
    for guard, principal in tries:
        await _try_answer(cell, entry, guard, principal, responses)
        if not cell.attempts[-1].refused:
            return False
    return True


async def _counts_and_scan(redis_url: str, app: str, user: str) -> tuple[dict, dict]:
    """The status counters of (app, user) and the statuses its records have, read from every record key."""
    import redis.asyncio as aioredis

    from runtime.statuses import STATUSES
    from worker.records.status_counts import count_by_status

    redis = aioredis.Redis.from_url(redis_url, decode_responses=True)
    try:
        counters = await count_by_status(redis, cluster=False, apps=[app], users=[user])
        scanned: Counter = Counter()
        async for key in redis.scan_iter(match="agentq:{*}:i:*", count=1000):
            if key.endswith((":journal", ":settled")):
                continue
            found_app, found_user, status = await redis.hmget(key, "app_name", "user_id", "status")
            if (found_app, found_user) == (app, user):
                scanned[status] += 1
        return counters, {status: scanned[status] for status in STATUSES}
    finally:
        await redis.aclose()


async def _run(stack: LocalStack, entry_name: str, flow_name: str) -> Run:
    from worker.client import AgentqClient

    entry, spec = ENTRIES[entry_name], FLOWS[flow_name]
    client = AgentqClient(stack.redis.url)
    run = Run()
    try:
        cell = Cell(stack, client, spec.app.name, entry.user(flow_name), str(uuid.uuid4()), spec.message)
        await entry.prepare(cell)
        if entry.guards_start:
            await entry.refuse_start(cell)
        cell.invocation_id = await entry.start(cell)
        record = await client.wait(cell.invocation_id, timeout=60)
        if hasattr(entry, "refuse_after_start"):
            await entry.refuse_after_start(cell)
        while record.status == "parked" and run.answers < 5:
            responses = [{"id": call.id, "name": call.name, "response": spec.answers[call.name]}
                         for call in record.pending_calls]
            if entry.guards_start and not await _refusals_hold(cell, entry, record, responses):
                record = await client.wait(cell.invocation_id, timeout=60)  # a refused caller's answer went in
                continue
            accepted, got = await entry.answer(cell, entry.approver, responses)
            assert accepted, f"the approver's answer was refused: {got}"
            run.answers += 1
            record = await client.wait(cell.invocation_id, timeout=60)
        run.status, run.error = record.status, record.error
        run.audit = [(e.action, e.principal, e.client) for e in record.audit]
        run.enqueued_by = record.enqueued_by
        run.attempts = cell.attempts
        events, state = await entry.session(cell)
        run.view = session_view(events, state)
        run.counters, run.scanned = await _counts_and_scan(stack.redis.url, cell.app, cell.user)
    finally:
        await client.aclose()
    return run


def _cell_run(stack, entry: str, flow: str) -> Run:
    if (entry, flow) not in RUNS:
        try:
            RUNS[entry, flow] = asyncio.run(_run(stack, entry, flow))
        except Exception as exc:  # noqa: BLE001 - every check of the cell reports it
            RUNS[entry, flow] = Run(failure=exc)
    run = RUNS[entry, flow]
    if run.failure is not None:
        raise AssertionError(f"{entry} x {flow} did not run through: {run.failure!r}") from run.failure
    return run


def _lines(view: dict) -> list[str]:
    """A session view as one JSON line per event and one for the state: a failure shows which events differ."""
    if "events" not in view:  # google-adk raised
        return [json.dumps(view, sort_keys=True)]
    return [json.dumps(event, sort_keys=True) for event in view["events"]] + [
        "state: " + json.dumps(view["state"], sort_keys=True)]


def _expected_actor(entry: str) -> tuple[str, str | None]:
    if entry == "client":
        from worker.records.audit import cli_actor

        actor = cli_actor()
        return actor["principal"], actor["client"]
    return ENTRIES[entry].approver, CLIENT_ADDRESS


@pytest.mark.parametrize(("entry", "flow", "check"), _cells())
def test_a_flow_through_an_entry_point_holds_the_check(stack, adk_sessions, entry, flow, check):
    run = _cell_run(stack, entry, flow)
    if check == "events":
        assert (run.status, run.error) == ("completed", None)
        assert _lines(run.view) == _lines(adk_sessions[flow])
    elif check == "paths":
        assert run.view["paths"] == adk_sessions[flow]["paths"]
    elif check in ("role", "scope", "separation"):
        attempts = [attempt for attempt in run.attempts if attempt.guard == check]
        assert attempts, f"no {check} attempt was made"
        assert [vars(a) for a in attempts if not a.held] == []
    elif check == "counts":
        assert run.counters == run.scanned
    elif check == "audit":
        principal, client = _expected_actor(entry)
        assert run.audit == [("answer", principal, client)] * len(run.audit)
        assert len(run.audit) == run.answers
        if entry != "client":  # the Python client enqueues as the local operator, with no principal
            assert run.enqueued_by == REQUESTER
