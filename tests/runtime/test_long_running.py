"""LongRunningFunctionTool: pausing an invocation and resuming the same invocation id with a client answer."""

from __future__ import annotations

from runtime.agents import LlmAgent
from runtime.models import ScriptedLlm, call
from runtime.runners import InMemoryRunner, pending_long_running_calls
from runtime.tools import LongRunningFunctionTool

from .helpers import function_response, new_session, run, stored, summaries, user_text

created = []


def ask_for_approval(purpose: str, amount: float) -> dict:
    """Ask for approval for the reimbursement."""
    created.append(purpose)
    return {"status": "pending", "ticket-id": "approval-ticket-1"}


def open_ticket(title: str) -> None:
    """Open a ticket; the answer comes later."""
    created.append(title)


def runner_with(tool_func, *turns) -> InMemoryRunner:
    agent = LlmAgent(name="a", model=ScriptedLlm(turns=list(turns)), tools=[LongRunningFunctionTool(tool_func)])
    return InMemoryRunner(agent=agent, app_name="app")


async def test_a_long_running_call_that_returns_none_pauses_on_the_call_event():
    runner = runner_with(open_ticket, call("open_ticket", title="t"), "Ticket resolved.")
    session = await new_session(runner)
    events = await run(runner, session, user_text("open one"))
    assert summaries(events) == [("a", [("call", "open_ticket", {"title": "t"})])]
    call_id = events[0].get_function_calls()[0].id
    assert events[0].long_running_tool_ids == {call_id}
    assert events[0].is_final_response()
    history = await runner.session_service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert [(c.id, c.name, c.args) for c in pending_long_running_calls(history, events[0].invocation_id)] == [
        (call_id, "open_ticket", {"title": "t"})
    ]


async def test_the_client_answer_resumes_the_same_invocation_and_resolves_the_call():
    runner = runner_with(open_ticket, call("open_ticket", title="t"), "Ticket resolved.")
    session = await new_session(runner)
    first = await run(runner, session, user_text("open one"))
    call_id = first[0].get_function_calls()[0].id
    second = await run(runner, session, function_response(call_id, "open_ticket", {"status": "done"}))
    assert summaries(second) == [("a", ["Ticket resolved."])]
    assert second[0].invocation_id == first[0].invocation_id
    history = await stored(runner, session)
    assert [(e.author, e.invocation_id) for e in history] == [("user", first[0].invocation_id)] * 1 + [
        ("a", first[0].invocation_id), ("user", first[0].invocation_id), ("a", first[0].invocation_id)]
    fresh = await runner.session_service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert pending_long_running_calls(fresh, first[0].invocation_id) == []


async def test_a_returned_value_is_sent_to_the_model_and_the_invocation_still_pauses():
    runner = runner_with(ask_for_approval, call("ask_for_approval", purpose="taxi", amount=30.0),
                         "Waiting for approval.", "Approved, reimbursed.")
    session = await new_session(runner)
    events = await run(runner, session, user_text("reimburse 30"))
    assert summaries(events) == [
        ("a", [("call", "ask_for_approval", {"purpose": "taxi", "amount": 30.0})]),
        ("a", [("response", "ask_for_approval", {"status": "pending", "ticket-id": "approval-ticket-1"})]),
        ("a", ["Waiting for approval."]),
    ]
    fresh = await runner.session_service.get_session(app_name="app", user_id="u", session_id=session.id)
    call_id = events[0].get_function_calls()[0].id
    assert [c.id for c in pending_long_running_calls(fresh, events[0].invocation_id)] == [call_id]


async def test_an_intermediate_update_resumes_the_model_and_parks_again():
    def responder(request):
        last = request.contents[-1].parts[-1]
        if last.function_response:
            status = last.function_response.response["status"]
            return f"status: {status}"
        if request.contents[-1].role == "user" and last.text:
            return call("open_ticket", title="t")
        return "?"

    agent = LlmAgent(name="a", model=ScriptedLlm(responder=responder), tools=[LongRunningFunctionTool(open_ticket)])
    runner = InMemoryRunner(agent=agent, app_name="app")
    session = await new_session(runner)
    first = await run(runner, session, user_text("open"))
    call_id = first[0].get_function_calls()[0].id
    update = await run(runner, session,
                       function_response(call_id, "open_ticket", {"status": "50%"}, will_continue=True))
    assert summaries(update) == [("a", ["status: 50%"])]
    fresh = await runner.session_service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert [c.id for c in pending_long_running_calls(fresh, first[0].invocation_id)] == [call_id]
    final = await run(runner, session, function_response(call_id, "open_ticket", {"status": "done"}))
    assert summaries(final) == [("a", ["status: done"])]
    assert {e.invocation_id for e in update + final} == {first[0].invocation_id}
    fresh = await runner.session_service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert pending_long_running_calls(fresh, first[0].invocation_id) == []


async def test_answering_one_of_two_pending_calls_leaves_the_other_pending():
    def responder(request):
        answered = [p.function_response.response["title"] for c in request.contents for p in c.parts
                    if p.function_response]
        if not answered:
            return [call("open_ticket", title="x"), call("open_ticket", title="y")]
        return "answered: " + ",".join(answered)

    agent = LlmAgent(name="a", model=ScriptedLlm(responder=responder), tools=[LongRunningFunctionTool(open_ticket)])
    runner = InMemoryRunner(agent=agent, app_name="app")
    session = await new_session(runner)
    first = await run(runner, session, user_text("two tickets"))
    x_id, y_id = [c.id for c in first[0].get_function_calls()]
    second = await run(runner, session, function_response(x_id, "open_ticket", {"title": "x"}))
    assert summaries(second) == [("a", ["answered: x"])]
    fresh = await runner.session_service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert [c.id for c in pending_long_running_calls(fresh, first[0].invocation_id)] == [y_id]
    third = await run(runner, session, function_response(y_id, "open_ticket", {"title": "y"}))
    # Both answers are now merged after the call, in call order (as the reference runtime shows the model).
    assert summaries(third) == [("a", ["answered: x,y"])]
    fresh = await runner.session_service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert pending_long_running_calls(fresh, first[0].invocation_id) == []


async def test_a_new_turn_while_parked_runs_as_its_own_invocation_and_the_answer_still_routes_back():
    def responder(request):
        last = request.contents[-1].parts[-1]
        if last.function_response:
            return "Ticket done."
        return call("open_ticket", title="t") if last.text == "open" else "Meanwhile: hello."

    agent = LlmAgent(name="a", model=ScriptedLlm(responder=responder), tools=[LongRunningFunctionTool(open_ticket)])
    runner = InMemoryRunner(agent=agent, app_name="app")
    session = await new_session(runner)
    first = await run(runner, session, user_text("open"))
    between = await run(runner, session, user_text("hello?"))
    assert between[0].invocation_id != first[0].invocation_id
    assert summaries(between) == [("a", ["Meanwhile: hello."])]
    call_id = first[0].get_function_calls()[0].id
    final = await run(runner, session, function_response(call_id, "open_ticket", {"status": "done"}))
    assert final[0].invocation_id == first[0].invocation_id
    assert summaries(final) == [("a", ["Ticket done."])]


async def test_the_long_running_declaration_warns_the_model_not_to_call_again():
    tool = LongRunningFunctionTool(open_ticket)
    assert tool._get_declaration().description == (
        "Open a ticket; the answer comes later.\n\nNOTE: This is a long-running operation. Do not call this tool "
        "again if it has already returned some status."
    )
    assert tool.is_long_running and not tool.idempotent
