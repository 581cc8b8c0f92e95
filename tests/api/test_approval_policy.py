"""Approval rules over real Redis (the test plays the worker): separation of duties, roles, principals, quorum.

A refused answer is a 403 naming the rule, and the invocation's record is exactly as it was.
"""

from __future__ import annotations

import pytest

from api import ApiSettings, create_app
from api.access.approval_policy import ApprovalPolicies
from api.access.auth import hash_secret, parse_keys
from api.services import redis_services
from runtime.errors import UsageError
from worker.fleet import lease
from worker.records.record import PendingCall

from .conftest import make_client

SECRETS = {"teller": "teller-secret-001", "requester": "requester-secret-1", "approver-1": "approver-secret-1",
           "approver-2": "approver-secret-2", "auditor": "auditor-secret-01"}
ROLES = {"teller": ["enqueue", "read", "answer"], "requester": ["enqueue", "read"], "approver-1": ["read", "answer"],
         "approver-2": ["read", "answer"], "auditor": ["read"]}
KEYS = {name: {"sha256": hash_secret(secret), "users": ["*"], "roles": ROLES[name]} for name, secret in SECRETS.items()}
LEGACY = "legacy-shared-key-1"
CONFIRMATION = "adk_request_confirmation"



@pytest.fixture
async def make_app(redis_url):
    made = []

    def make(policy: dict | None = None):
        backed = redis_services(redis_url)
        made.append(backed)
        settings = ApiSettings(app_names=["transfers"], keys=parse_keys({**KEYS, LEGACY: {"users": ["*"]}}),
                               approval=ApprovalPolicies(rules=policy or {}))
        return create_app(settings, backed.services)

    yield make
    for backed in made:
        await backed.aclose()


async def _parked_transfer(app, store, who: str) -> tuple[str, str]:
    """``who`` enqueues a transfer over HTTP; the test's worker parks it on a confirmation. (id, call id)."""
    async with make_client(app, key=SECRETS.get(who, who)) as http:
        await http.post("/apps/transfers/users/bob/sessions", json={"sessionId": "s1"})
        enqueued = await http.post("/apps/transfers/users/bob/sessions/s1/invocations",
                                   json={"newMessage": {"role": "user", "parts": [{"text": "send $300 to carol"}]}})
    invocation_id = enqueued.json()["invocationId"]
    claim = await lease.acquire(store, invocation_id, "test-worker")
    await lease.add_pending(store, claim, [PendingCall(id="confirm-1", name=CONFIRMATION, args={
        "originalFunctionCall": {"id": "call-1", "name": "transfer_money", "args": {"amount": 300, "to": "carol"}},
        "toolConfirmation": {"hint": "Please approve"}})])
    await lease.settle(store, claim, "parked")
    return invocation_id, "confirm-1"


async def _answer(app, who: str, invocation_id: str, call_id: str, confirmed: bool = True):
    async with make_client(app, key=SECRETS.get(who, who)) as http:
        return await http.post(f"/invocations/{invocation_id}/function-responses", json={"functionResponses": [
            {"id": call_id, "name": CONFIRMATION, "response": {"confirmed": confirmed}}]})


async def test_separation_of_duties_refuses_the_requesters_own_confirmation_and_nothing_changes(make_app, store):
    app = make_app()
    invocation_id, call_id = await _parked_transfer(app, store, "teller")
    before = await store.get(invocation_id)
    refused = await _answer(app, "teller", invocation_id, call_id)
    after = await store.get(invocation_id)
    assert (refused.status_code, refused.json()) == (403, {
        "error": "ApprovalRefusedError",
        "detail": f"approval rule 'separation_of_duties': principal 'teller' enqueued invocation {invocation_id!r} "
                  "and may not answer its 'transfer_money' call"})
    assert (after.model_dump(), before.enqueued_by) == (before.model_dump(), "teller")


async def test_separation_of_duties_accepts_another_approvers_answer(make_app, store):
    app = make_app()
    invocation_id, call_id = await _parked_transfer(app, store, "teller")
    accepted = await _answer(app, "approver-1", invocation_id, call_id)
    assert (accepted.status_code, accepted.json()["status"], (await store.get(invocation_id)).status) == (
        202, "queued", "queued")


async def test_a_key_without_the_answer_role_is_refused_naming_the_role(make_app, store):
    app = make_app()
    invocation_id, call_id = await _parked_transfer(app, store, "requester")
    refused = await _answer(app, "auditor", invocation_id, call_id)
    assert (refused.status_code, refused.json()["error"]) == (403, "MissingRoleError")
    assert "needs role 'answer'" in refused.json()["detail"]
    assert (await store.get(invocation_id)).status == "parked"


async def test_quorum_of_two_holds_the_first_approval_refuses_a_duplicate_and_the_second_approver_resumes_it(
        make_app, store):
    app = make_app({"transfers": {"transfer_money": {"quorum": 2}}})
    invocation_id, call_id = await _parked_transfer(app, store, "requester")
    first = await _answer(app, "approver-1", invocation_id, call_id)
    duplicate = await _answer(app, "approver-1", invocation_id, call_id)
    held = await store.get(invocation_id)
    second = await _answer(app, "approver-2", invocation_id, call_id)
    assert (first.status_code, first.json()["status"], first.json()["pendingCalls"][0]["approvals"]) == (
        202, "parked", ["approver-1"])
    assert (duplicate.status_code, duplicate.json()) == (403, {
        "error": "ApprovalRefusedError",
        "detail": "approval rule 'quorum': principal 'approver-1' approved call 'confirm-1' of 'transfer_money' "
                  "already; it needs 2 distinct approvers"})
    assert (held.status, held.responses, held.approvals) == ("parked", [], {"confirm-1": ["approver-1"]})
    assert (second.status_code, second.json()["status"]) == (202, "queued")
    resumed = await store.get(invocation_id)
    assert [(r.id, r.response) for r in resumed.responses] == [("confirm-1", {"confirmed": True})]


async def test_a_rejection_below_the_quorum_answers_at_once(make_app, store):
    app = make_app({"transfers": {"*": {"quorum": 3}}})
    invocation_id, call_id = await _parked_transfer(app, store, "requester")
    rejected = await _answer(app, "approver-1", invocation_id, call_id, confirmed=False)
    assert (rejected.status_code, rejected.json()["status"]) == (202, "queued")


async def test_a_principals_rule_refuses_an_approver_it_does_not_list(make_app, store):
    app = make_app({"*": {"transfer_money": {"principals": ["approver-2"]}}})
    invocation_id, call_id = await _parked_transfer(app, store, "requester")
    refused = await _answer(app, "approver-1", invocation_id, call_id)
    assert (refused.status_code, refused.json()["detail"]) == (403, "approval rule 'principals': principal "
                                                                    "'approver-1' is not one of those who may answer 'transfer_money'")
    assert (await _answer(app, "approver-2", invocation_id, call_id)).status_code == 202


async def test_the_inbox_and_the_invocation_show_each_principal_only_what_they_may_answer(make_app, store):
    app = make_app()
    invocation_id, _ = await _parked_transfer(app, store, "teller")
    seen = {}
    for who in ("teller", "approver-1"):
        async with make_client(app, key=SECRETS[who]) as http:
            inbox = (await http.get("/inbox")).json()["invocations"]
            call = (await http.get(f"/invocations/{invocation_id}")).json()["pendingCalls"][0]
            seen[who] = ([item["invocationId"] for item in inbox], call["answerable"])
    assert seen == {"teller": ([], False), "approver-1": ([invocation_id], True)}


async def test_an_unnamed_shared_key_keeps_working_and_may_answer_what_it_enqueued(make_app, store):
    app = make_app()
    invocation_id, call_id = await _parked_transfer(app, store, LEGACY)
    assert (await _answer(app, LEGACY, invocation_id, call_id)).status_code == 202


async def test_an_explicit_separation_of_duties_rule_binds_unnamed_keys_too(make_app, store):
    app = make_app({"transfers": {"transfer_money": {"separation_of_duties": True}}})
    invocation_id, call_id = await _parked_transfer(app, store, LEGACY)
    refused = await _answer(app, LEGACY, invocation_id, call_id)
    assert (refused.status_code, refused.json()["error"]) == (403, "ApprovalRefusedError")


async def test_answering_through_run_applies_the_same_rules(make_app, store):
    app = make_app()
    invocation_id, call_id = await _parked_transfer(app, store, "teller")
    async with make_client(app, key=SECRETS["teller"]) as http:
        refused = await http.post("/run", json={
            "appName": "transfers", "userId": "bob", "sessionId": "s1", "invocationId": invocation_id,
            "newMessage": {"role": "user", "parts": [{"functionResponse": {
                "id": call_id, "name": CONFIRMATION, "response": {"confirmed": True}}}]}})
    assert (refused.status_code, refused.json()["error"]) == (403, "ApprovalRefusedError")
    assert (await store.get(invocation_id)).status == "parked"


@pytest.mark.parametrize(("text", "message"), [
    ('{"transfers": {"transfer_money": {"quorum": 0}}}',
     "AGENTQ_APPROVAL_POLICY: transfers.transfer_money.quorum: Input should be greater than or equal to 1"),
    ('{"transfers": {"transfer_money": {"roles": ["boss"]}}}',
     "AGENTQ_APPROVAL_POLICY: transfers.transfer_money.roles.0: Input should be 'enqueue', 'read', 'answer' or "
     "'operate'"),
    ("{", "AGENTQ_APPROVAL_POLICY is not valid JSON: Expecting property name enclosed in double quotes: line 1 "
          "column 2 (char 1)"),
])
def test_a_malformed_policy_is_refused_naming_the_place(text, message):
    with pytest.raises(UsageError) as caught:
        ApprovalPolicies.parse(text)
    assert str(caught.value) == message


def test_an_approval_declared_beside_require_confirmation_is_read_from_the_app_and_settings_override_it():
    from api.access.approval_policy import with_declared
    from runtime.agents import LlmAgent
    from runtime.apps import App
    from runtime.tools import FunctionTool
    from runtime.tools.approval import Approval

    def transfer_money(amount: int, to: str) -> str:
        """Send money."""
        return f"sent {amount} to {to}"

    def refund(amount: int) -> str:
        """Refund."""
        return f"refunded {amount}"

    agent = LlmAgent(name="teller", model="scripted", tools=[
        FunctionTool(transfer_money, require_confirmation=True, approval=Approval(quorum=2, principals=("cfo",))),
        FunctionTool(refund, require_confirmation=True, approval=Approval(separation_of_duties=True))])
    app = App(name="transfers", root_agent=agent)
    settings = ApprovalPolicies.parse('{"transfers": {"refund": {"separation_of_duties": false}}}')
    merged = with_declared(settings, [app])
    transfer = merged.rule_for("transfers", "transfer_money")
    assert (transfer.quorum, transfer.principals, transfer.roles) == (2, ["cfo"], ["answer"])
    assert merged.rule_for("transfers", "refund").separation_of_duties is False


async def test_an_api_given_no_app_applies_the_approval_a_workers_app_declares_from_the_catalog(redis_url, store):
    from runtime.agents import LlmAgent
    from runtime.apps import App
    from runtime.redis_store.redis_url import redis_client_from_url
    from runtime.tools import FunctionTool
    from runtime.tools.approval import Approval
    from worker.fleet import app_catalog, workers_alive

    def transfer_money(amount: int, to: str) -> str:
        """Send money."""
        return f"sent {amount} to {to}"

    declared = App(name="transfers", root_agent=LlmAgent(name="teller", model="scripted", tools=[
        FunctionTool(transfer_money, require_confirmation=True, approval=Approval(quorum=2))]))
    with redis_client_from_url(redis_url, asyncio=False) as worker_side:  # the test announces as a worker would
        app_catalog.publish(worker_side, {"transfers": declared})
        workers_alive.announce(worker_side, "worker-1", {"apps": ["transfers"]})
    backed = redis_services(redis_url)
    app = create_app(ApiSettings(follow_workers=True, keys=parse_keys(KEYS)), backed.services)
    try:
        invocation_id, call_id = await _parked_transfer(app, store, "requester")
        first = await _answer(app, "approver-1", invocation_id, call_id)
        async with make_client(app, key=SECRETS["auditor"]) as http:
            info = (await http.get("/apps/transfers/app-info")).json()
    finally:
        await backed.aclose()
    assert (first.status_code, first.json()["status"], first.json()["pendingCalls"][0]["approvals"]) == (
        202, "parked", ["approver-1"])
    assert (info["rootAgentName"], list(info["agents"])) == ("teller", ["teller"])
