"""ADK 2 workflows on real workers: durable node by node (issue 17, item 3)."""

from __future__ import annotations

import asyncio

import pytest

from tests.worker.test_worker_e2e import _settled
from tests.worker.workflow_apps import inside_key, ledger_key

pytestmark = pytest.mark.timeout(180)


async def _ledger(client, invocation_id) -> dict[str, str]:
    return await client._store.redis.hgetall(ledger_key(invocation_id))


async def _wait_inside(client, invocation_id, timeout=30) -> str:
    async with asyncio.timeout(timeout):
        while True:
            value = await client._store.redis.get(inside_key(invocation_id))
            if value:
                return value
            await asyncio.sleep(0.02)


async def _kill_runner_of(workers, client, invocation_id) -> str:
    victim = (await client.get(invocation_id)).worker
    workers.kill(victim)
    return victim


async def _node_outputs(client, app, user, session_id) -> list[tuple[str, object]]:
    session = await client.session_service.get_session(app_name=app, user_id=user, session_id=session_id)
    return [(e.node_info.path, e.text() if e.node_info.message_as_output else e.output)
            for e in session.events if e.node_info is not None and e.node_info.output_for]


async def test_a_worker_killed_inside_a_node_is_replaced_and_each_finished_node_ran_once(workers, client, user):
    workers.ensure("w1", "w2", "w3")
    session = await client.create_session("wf_chain", user)
    invocation_id = await client.enqueue("wf_chain", user, session.id, "memo")
    assert await _wait_inside(client, invocation_id) == "draft"
    victim = await _kill_runner_of(workers, client, invocation_id)
    record = await _settled(client, invocation_id, "completed", timeout=90)
    assert record.worker != victim
    ledger = await _ledger(client, invocation_id)
    assert {k: int(v) for k, v in ledger.items()} == {
        "began:fetch": 1, "finished:fetch": 1,   # finished before the kill: never again
        "began:draft": 2, "finished:draft": 1,   # in flight at the kill: ran again, finished once
        "began:publish": 1, "finished:publish": 1,
    }
    assert await _node_outputs(client, "wf_chain", user, session.id) == [
        ("wf_chain@1/fetch@1", {"doc": "text of memo"}),
        ("wf_chain@1/draft@1", "TEXT OF MEMO"),
        ("wf_chain@1/publish@1", {"published": "TEXT OF MEMO"}),
    ]
    stored = await client.session_service.get_session(app_name="wf_chain", user_id=user, session_id=session.id)
    assert stored.state["published"] == "TEXT OF MEMO"


async def test_a_request_input_parks_the_workflow_and_its_answer_resumes_the_same_invocation(workers, client, user):
    session = await client.create_session("wf_review", user)
    invocation_id = await client.enqueue("wf_review", user, session.id, "launch plan")
    record = await _settled(client, invocation_id, "parked")
    [pending] = record.pending_calls
    assert (pending.kind, pending.id, pending.name) == ("input", "review", "adk_request_input")
    assert pending.args["message"] == "Approve the draft?"
    assert pending.args["payload"] == {"draft": "draft of launch plan"}
    assert pending.args["response_schema"]["required"] == ["approved"]
    await client.respond(invocation_id, [{"id": "review", "name": "adk_request_input",
                                          "response": {"approved": False, "note": "shorter"}}])
    await _settled(client, invocation_id, "completed")
    outputs = await _node_outputs(client, "wf_review", user, session.id)
    assert outputs[-2:] == [("wf_review@1/decide@1", {"approved": False, "note": "shorter"}),
                            ("wf_review@1/revise@1", "revise: shorter")]


async def test_an_agent_node_asking_for_a_confirmation_parks_and_an_approval_pays_once(workers, client, user):
    session = await client.create_session("wf_payer", user)
    invocation_id = await client.enqueue("wf_payer", user, session.id, "pay 500")
    record = await _settled(client, invocation_id, "parked")
    [pending] = record.pending_calls
    assert (pending.kind, pending.name, pending.args["originalFunctionCall"]["args"]) == (
        "confirmation", "adk_request_confirmation", {"amount": 500})
    await client.approve(invocation_id)
    await _settled(client, invocation_id, "completed")
    assert await _ledger(client, invocation_id) == {"paid": "1"}
    assert (await _node_outputs(client, "wf_payer", user, session.id))[-2:] == [
        ("wf_payer@1/payer@1", "result {'paid': 500}"), ("wf_payer@1/receipt@1", "receipt: result {'paid': 500}")]


async def test_a_paused_fan_out_branch_leaves_its_finished_sibling_alone(workers, client, user):
    session = await client.create_session("wf_fan", user)
    invocation_id = await client.enqueue("wf_fan", user, session.id, "x")
    record = await _settled(client, invocation_id, "parked")
    assert [call.id for call in record.pending_calls] == ["left-question"]
    await client.respond(invocation_id, [{"id": "left-question", "name": "adk_request_input",
                                          "response": {"side": "L"}}])
    await _settled(client, invocation_id, "completed")
    assert {k: int(v) for k, v in (await _ledger(client, invocation_id)).items()} == {
        "began:ask_branch": 1, "began:work_branch": 1}
    outputs = await _node_outputs(client, "wf_fan", user, session.id)
    assert outputs[-1] == ("wf_fan@1/merge@1", {"merged": {"ask_branch": {"side": "L"}, "work_branch": "worked x"}})


async def test_retry_attempts_count_the_one_lost_with_a_killed_worker(workers, client, user):
    workers.ensure("w1", "w2", "w3")
    session = await client.create_session("wf_retry", user)
    invocation_id = await client.enqueue("wf_retry", user, session.id, "go")
    assert await _wait_inside(client, invocation_id) == "flaky"
    await _kill_runner_of(workers, client, invocation_id)
    await _settled(client, invocation_id, "completed", timeout=90)
    assert {k: int(v) for k, v in (await _ledger(client, invocation_id)).items()} == {
        "began:flaky": 3, "finished:flaky": 1}
    assert (await _node_outputs(client, "wf_retry", user, session.id))[-1] == (
        "wf_retry@1/flaky@1", "ok on attempt 3")


async def test_a_node_whose_attempts_ran_out_across_a_killed_worker_fails_the_invocation(workers, client, user):
    workers.ensure("w1", "w2", "w3")
    session = await client.create_session("wf_exhausted", user)
    invocation_id = await client.enqueue("wf_exhausted", user, session.id, "go")
    assert await _wait_inside(client, invocation_id) == "fragile"
    await _kill_runner_of(workers, client, invocation_id)
    async with asyncio.timeout(90):
        while (record := await client.get(invocation_id)).status not in ("completed", "failed"):
            await asyncio.sleep(0.05)
    assert record.status == "failed"
    assert (record.error.type, record.error.message) == ("ValueError", "attempt 2 fails")
    assert {k: int(v) for k, v in (await _ledger(client, invocation_id)).items()} == {"began:fragile": 2}


def _rss_peak_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))


async def test_a_thousand_item_fan_out_survives_a_killed_worker_without_redoing_finished_items(
        workers, client, user, capsys):
    workers.ensure("w1", "w2", "w3")
    session = await client.create_session("wf_items", user)
    invocation_id = await client.enqueue("wf_items", user, session.id, "1000")
    assert await _wait_inside(client, invocation_id, timeout=60) == "halfway"
    victim = (await client.get(invocation_id)).worker
    peak_before_kill = _rss_peak_kib(workers.processes[victim].pid)
    workers.kill(victim)
    record = await _settled(client, invocation_id, "completed", timeout=150)
    peak_after = _rss_peak_kib(workers.processes[record.worker].pid)
    ledger = {k: int(v) for k, v in (await _ledger(client, invocation_id)).items()}
    assert sorted(ledger) == sorted(f"item:{n}" for n in range(1000))  # every item done
    # only items in flight at the kill (at most max_parallel_workers=16) may have run twice; finished ones never
    assert sum(count for count in ledger.values() if count > 1) <= 2 * 16
    assert set(ledger.values()) <= {1, 2}
    outputs = await _node_outputs(client, "wf_items", user, session.id)
    item_paths = [path for path, _ in outputs if path.startswith("wf_items@1/square@1/")]
    assert sorted(item_paths) == sorted(f"wf_items@1/square@1/square@{n}" for n in range(1, 1001))  # each once
    assert outputs[-1] == ("wf_items@1/total@1", sum(n * n for n in range(1000)))
    with capsys.disabled():
        print(f"\n1,000-item fan-out: peak RSS {peak_before_kill // 1024} MiB (killed worker), "
              f"{peak_after // 1024} MiB (finishing worker); items run twice (in flight at the kill): "
              f"{sum(1 for count in ledger.values() if count > 1)}")
