"""Tool confirmation as ADK 2.x defines it: a call held for a person's yes or no, then run once or rejected."""

from __future__ import annotations

import json

import pytest

from runtime.agents import LlmAgent
from runtime.errors import CallNotPendingError, InvalidMessageError
from runtime.models import ScriptedLlm, call
from runtime.runners import InMemoryRunner, pending_long_running_calls
from runtime.tools import BaseTool, FunctionTool, InMemoryToolJournal, ToolConfirmation, ToolContext

from .helpers import function_response, new_session, run, stored, summaries, user_text

HINT = ("Please approve or reject the tool call transfer_money() by responding with a FunctionResponse with an "
        "expected ToolConfirmation payload.")
NEEDS = {"error": "This tool call requires confirmation, please approve or reject."}
REJECTED = {"error": "This tool call is rejected."}


def make_runner(tool, *turns, journal=None):
    agent = LlmAgent(name="bank", model=ScriptedLlm(turns=list(turns)), tools=[tool])
    return InMemoryRunner(agent=agent, app_name="app", tool_journal=journal)


def transfers():
    paid = []

    def transfer_money(amount: int, to: str) -> dict:
        """Send money."""
        paid.append((amount, to))
        return {"status": "sent", "amount": amount}

    return transfer_money, paid


def request_of(events):
    """The adk_request_confirmation call of a paused run."""
    return next(c for e in events for c in e.get_function_calls() if c.name == "adk_request_confirmation")


async def test_a_tool_that_requires_confirmation_does_not_run_and_the_invocation_pauses_on_a_request():
    func, paid = transfers()
    runner = make_runner(FunctionTool(func, require_confirmation=True), call("transfer_money", amount=500, to="bo"))
    session = await new_session(runner)
    events = await run(runner, session, user_text("send 500 to bo"))
    original = events[0].get_function_calls()[0]
    request = request_of(events)
    assert paid == []
    # google-adk 2.13's Runner yields and commits the request first, then the held call's "requires
    # confirmation" answer (made first: it keeps the earlier timestamp)
    assert summaries(events) == [
        ("bank", [("call", "transfer_money", {"amount": 500, "to": "bo"})]),
        ("bank", [("call", "adk_request_confirmation", {
            "originalFunctionCall": {"id": original.id, "name": "transfer_money", "args": {"amount": 500, "to": "bo"}},
            "toolConfirmation": {"hint": HINT, "confirmed": False},
        })]),
        ("bank", [("response", "transfer_money", NEEDS)]),
    ]
    assert events[2].timestamp < events[1].timestamp
    assert events[1].long_running_tool_ids == {request.id}
    assert events[2].actions.skip_summarization is True
    assert events[1].is_final_response() and events[2].is_final_response()
    history = await runner.session_service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert [c.id for c in pending_long_running_calls(history, events[0].invocation_id)] == [request.id]


async def test_an_approval_resumes_the_same_invocation_runs_the_tool_once_and_the_model_continues():
    func, paid = transfers()
    runner = make_runner(FunctionTool(func, require_confirmation=True),
                         call("transfer_money", amount=500, to="bo"), "Sent 500 to bo.")
    session = await new_session(runner)
    first = await run(runner, session, user_text("send 500 to bo"))
    request = request_of(first)
    second = await run(runner, session, function_response(request.id, "adk_request_confirmation", {"confirmed": True}))
    assert paid == [(500, "bo")]
    assert summaries(second) == [
        ("bank", [("response", "transfer_money", {"status": "sent", "amount": 500})]),
        ("bank", ["Sent 500 to bo."]),
    ]
    assert {e.invocation_id for e in second} == {first[0].invocation_id}
    history = await runner.session_service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert pending_long_running_calls(history, first[0].invocation_id) == []


async def test_the_model_never_sees_the_confirmation_traffic_only_the_latest_answer_to_its_call():
    seen = []

    def model(request):
        seen.append([[(p.function_call.name if p.function_call else None,
                       p.function_response.response if p.function_response else None, p.text)
                      for p in c.parts] for c in request.contents])
        return call("transfer_money", amount=5, to="al") if len(seen) == 1 else "done"

    func, _ = transfers()
    agent = LlmAgent(name="bank", model=ScriptedLlm(responder=model), tools=[FunctionTool(func, require_confirmation=True)])
    runner = InMemoryRunner(agent=agent, app_name="app")
    session = await new_session(runner)
    request = request_of(await run(runner, session, user_text("pay al")))
    await run(runner, session, function_response(request.id, "adk_request_confirmation", {"confirmed": True}))
    assert seen[1] == [
        [(None, None, "pay al")],
        [("transfer_money", None, None)],
        [(None, {"status": "sent", "amount": 5}, None)],
    ]


async def test_a_rejection_never_runs_the_tool_and_the_model_is_told_it_was_rejected():
    func, paid = transfers()
    runner = make_runner(FunctionTool(func, require_confirmation=True),
                         call("transfer_money", amount=500, to="bo"), "The transfer was rejected.")
    session = await new_session(runner)
    request = request_of(await run(runner, session, user_text("send 500 to bo")))
    second = await run(runner, session, function_response(request.id, "adk_request_confirmation", {"confirmed": False}))
    assert paid == []
    assert summaries(second) == [("bank", [("response", "transfer_money", REJECTED)]),
                                 ("bank", ["The transfer was rejected."])]


async def test_adk_web_clients_wrapped_answer_is_accepted():
    func, paid = transfers()
    runner = make_runner(FunctionTool(func, require_confirmation=True),
                         call("transfer_money", amount=1, to="cy"), "ok")
    session = await new_session(runner)
    request = request_of(await run(runner, session, user_text("pay")))
    wrapped = {"response": json.dumps({"confirmed": True, "payload": None})}
    await run(runner, session, function_response(request.id, "adk_request_confirmation", wrapped))
    assert paid == [(1, "cy")]


async def test_a_conditional_confirmation_holds_only_the_calls_the_callable_picks():
    func, paid = transfers()
    tool = FunctionTool(func, require_confirmation=lambda amount, to: amount > 100)
    runner = make_runner(tool, call("transfer_money", amount=50, to="al"), "Sent.",
                         call("transfer_money", amount=500, to="bo"))
    session = await new_session(runner)
    small = await run(runner, session, user_text("send 50 to al"))
    assert paid == [(50, "al")]
    assert summaries(small)[-1] == ("bank", ["Sent."])
    large = await run(runner, session, user_text("send 500 to bo"))
    assert paid == [(50, "al")]
    assert request_of(large).args["originalFunctionCall"]["args"] == {"amount": 500, "to": "bo"}


async def test_an_async_confirmation_callable_is_awaited():
    func, paid = transfers()

    async def above_limit(amount: int) -> bool:
        return amount > 10

    runner = make_runner(FunctionTool(func, require_confirmation=above_limit), call("transfer_money", amount=11, to="x"))
    session = await new_session(runner)
    events = await run(runner, session, user_text("pay"))
    assert paid == [] and request_of(events).name == "adk_request_confirmation"


async def test_a_tool_can_request_confirmation_with_a_payload_and_is_called_again_with_the_answer():
    seen = []

    def book_trip(city: str, tool_context: ToolContext) -> dict:
        """Book a trip."""
        seen.append(tool_context.tool_confirmation)
        if tool_context.tool_confirmation is None:
            tool_context.request_confirmation(hint="Pick a seat", payload={"seat": None})
            return {"status": "waiting for a seat"}
        return {"status": "booked", "seat": tool_context.tool_confirmation.payload["seat"]}

    runner = make_runner(FunctionTool(book_trip), call("book_trip", city="Oslo"), "Booked seat 3A.")
    session = await new_session(runner)
    first = await run(runner, session, user_text("book Oslo"))
    request = request_of(first)
    assert request.args["toolConfirmation"] == {"hint": "Pick a seat", "confirmed": False, "payload": {"seat": None}}
    assert summaries(first)[-1] == ("bank", [("response", "book_trip", {"status": "waiting for a seat"})])
    second = await run(runner, session, function_response(
        request.id, "adk_request_confirmation", {"confirmed": True, "payload": {"seat": "3A"}}))
    assert seen == [None, ToolConfirmation(confirmed=True, payload={"seat": "3A"})]
    assert summaries(second) == [("bank", [("response", "book_trip", {"status": "booked", "seat": "3A"})]),
                                 ("bank", ["Booked seat 3A."])]


class Wire(BaseTool):
    """A custom tool that declares it needs confirmation (ADK PR #7151: a refusal must hold for it too)."""

    def __init__(self):
        super().__init__(name="wire", description="Wire money.")
        self.runs = 0

    async def check_require_confirmation(self, args, tool_context):
        return True

    async def run_async(self, *, args, tool_context):
        self.runs += 1
        return {"wired": True}


async def test_a_custom_base_tool_honours_a_declined_confirmation():
    tool = Wire()
    runner = make_runner(tool, call("wire"), "Not wired.")
    session = await new_session(runner)
    request = request_of(await run(runner, session, user_text("wire it")))
    second = await run(runner, session, function_response(request.id, "adk_request_confirmation", {"confirmed": False}))
    assert tool.runs == 0
    assert summaries(second)[0] == ("bank", [("response", "wire", REJECTED)])


async def test_two_held_calls_answered_one_at_a_time_park_until_both_are_answered():
    func, paid = transfers()
    model = ScriptedLlm(turns=[[call("transfer_money", amount=200, to="a"), call("transfer_money", amount=300, to="b")],
                               "Both handled."])
    agent = LlmAgent(name="bank", model=model, tools=[FunctionTool(func, require_confirmation=True)])
    runner = InMemoryRunner(agent=agent, app_name="app")
    session = await new_session(runner)
    first = await run(runner, session, user_text("pay both"))
    requests = [c for e in first for c in e.get_function_calls() if c.name == "adk_request_confirmation"]
    assert len(requests) == 2
    one = await run(runner, session, function_response(requests[0].id, "adk_request_confirmation", {"confirmed": True}))
    assert paid == [(200, "a")]
    assert summaries(one) == [("bank", [("response", "transfer_money", {"status": "sent", "amount": 200})])]
    two = await run(runner, session, function_response(requests[1].id, "adk_request_confirmation", {"confirmed": False}))
    assert paid == [(200, "a")]
    assert summaries(two) == [("bank", [("response", "transfer_money", REJECTED)]), ("bank", ["Both handled."])]


async def test_an_approval_whose_tool_run_was_interrupted_is_not_run_again():
    """A crash after the approval was committed and the tool started: the journal says 'in doubt'."""
    func, paid = transfers()
    journal = InMemoryToolJournal()
    runner = make_runner(FunctionTool(func, require_confirmation=True),
                         call("transfer_money", amount=7, to="z"), "Outcome unknown.", journal=journal)
    session = await new_session(runner)
    first = await run(runner, session, user_text("pay z"))
    request = request_of(first)
    original_id = first[0].get_function_calls()[0].id
    # the approval's run starts (journaled) and the process dies before its answer is committed
    await journal.begin(first[0].invocation_id, f"{original_id}@{request.id}", "transfer_money")
    second = await run(runner, session, function_response(request.id, "adk_request_confirmation", {"confirmed": True}))
    assert paid == []
    assert "unknown" in summaries(second)[0][1][0][2]["error"]


async def test_a_replayed_approval_is_refused_and_the_tool_runs_once():
    func, paid = transfers()
    runner = make_runner(FunctionTool(func, require_confirmation=True),
                         call("transfer_money", amount=9, to="q"), "Sent.", journal=InMemoryToolJournal())
    session = await new_session(runner)
    request = request_of(await run(runner, session, user_text("pay q")))
    answer = function_response(request.id, "adk_request_confirmation", {"confirmed": True})
    await run(runner, session, answer)
    before = await stored(runner, session)
    with pytest.raises(CallNotPendingError, match="answered already"):
        await run(runner, session, answer)
    assert paid == [(9, "q")]
    assert len(await stored(runner, session)) == len(before)


@pytest.mark.parametrize("response", [{"confirmed": "yes"}, {"payload": 1}, {"response": "not json"}, {"confirmed": 1}])
async def test_a_confirmation_answer_without_a_boolean_confirmed_is_refused_and_nothing_is_committed(response):
    func, paid = transfers()
    runner = make_runner(FunctionTool(func, require_confirmation=True), call("transfer_money", amount=3, to="k"))
    session = await new_session(runner)
    request = request_of(await run(runner, session, user_text("pay k")))
    before = len(await stored(runner, session))
    with pytest.raises(InvalidMessageError, match="confirmed"):
        await run(runner, session, function_response(request.id, "adk_request_confirmation", response))
    assert len(await stored(runner, session)) == before and paid == []
