"""A pause inside an AgentTool's agent pauses the caller, and the client's answer resumes both (adk-python #7245)."""

from __future__ import annotations

import pytest

from runtime.agents import LlmAgent
from runtime.errors import CallNotPendingError
from runtime.models import ScriptedLlm, call
from runtime.runners import InMemoryRunner, Runner, pending_long_running_calls
from runtime.tools import AgentTool, FunctionTool, InMemoryToolJournal, LongRunningFunctionTool, ToolContext

from .helpers import function_response, new_session, run, stored, summaries, user_text

HINT = ("Please approve or reject the tool call transfer_money() by responding with a FunctionResponse with an "
        "expected ToolConfirmation payload.")
REJECTED = {"error": "This tool call is rejected."}


def transfers():
    paid = []

    def transfer_money(amount: int, to: str) -> dict:
        """Send money."""
        paid.append((amount, to))
        return {"status": "sent", "amount": amount}

    return transfer_money, paid


def teller(func, *turns):
    """The agent inside the AgentTool: its transfers need a person's confirmation."""
    return LlmAgent(name="teller", model=ScriptedLlm(turns=list(turns)),
                    tools=[FunctionTool(func, require_confirmation=True)])


def bank(child, *turns):
    """The caller: its model delegates to ``child`` through an AgentTool."""
    return LlmAgent(name="bank", model=ScriptedLlm(turns=list(turns)), tools=[AgentTool(agent=child)])


def confirm(request, confirmed: bool):
    """A client's answer to a confirmation request."""
    return function_response(request.id, "adk_request_confirmation", {"confirmed": confirmed})


def calls_named(events, name):
    return [c for e in events for c in e.get_function_calls() if c.name == name]


async def session_ids(runner):
    listed = await runner.session_service.list_sessions(app_name="app", user_id="u")
    return [session.id for session in listed.sessions]


async def test_a_confirmation_inside_an_agent_tool_parks_the_caller_on_the_same_request():
    func, paid = transfers()
    child = teller(func, call("transfer_money", amount=500, to="bo"))
    runner = InMemoryRunner(agent=bank(child, call("teller", request="send 500 to bo")), app_name="app",
                            tool_journal=InMemoryToolJournal())
    session = await new_session(runner)
    events = await run(runner, session, user_text("send 500 to bo"))
    agent_call = events[0].get_function_calls()[0]
    request = calls_named(events, "adk_request_confirmation")[0]
    original = request.args["originalFunctionCall"]
    assert paid == []
    assert summaries(events) == [
        ("bank", [("call", "teller", {"request": "send 500 to bo"})]),
        ("bank", [("call", "adk_request_confirmation", {
            "originalFunctionCall": {"id": original["id"], "name": "transfer_money",
                                     "args": {"amount": 500, "to": "bo"}},
            "toolConfirmation": {"hint": HINT, "confirmed": False},
        })]),
    ]
    proxy = events[1]
    assert (proxy.long_running_tool_ids, proxy.custom_metadata, proxy.is_final_response()) == (
        {request.id},
        {"agentq:agent_tool_call": {"id": agent_call.id, "name": "teller", "args": {"request": "send 500 to bo"}}},
        True,
    )
    history = await runner.session_service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert [c.id for c in pending_long_running_calls(history, events[0].invocation_id)] == [request.id]
    assert len(await session_ids(runner)) == 2  # the caller's, and the teller's, waiting for the answer


async def test_an_approval_resumes_the_same_caller_invocation_runs_the_tool_once_and_the_caller_continues():
    func, paid = transfers()
    child = teller(func, call("transfer_money", amount=500, to="bo"), "Sent 500 to bo.")
    runner = InMemoryRunner(agent=bank(child, call("teller", request="send 500 to bo"), "The teller sent it."),
                            app_name="app", tool_journal=InMemoryToolJournal())
    session = await new_session(runner)
    first = await run(runner, session, user_text("send 500 to bo"))
    request = calls_named(first, "adk_request_confirmation")[0]
    second = await run(runner, session, confirm(request, True))
    assert paid == [(500, "bo")]
    assert summaries(second) == [
        ("bank", [("response", "teller", {"result": "Sent 500 to bo."})]),
        ("bank", ["The teller sent it."]),
    ]
    assert {e.invocation_id for e in second} == {first[0].invocation_id}
    history = await runner.session_service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert pending_long_running_calls(history, first[0].invocation_id) == []
    assert await session_ids(runner) == [session.id]  # the teller's session is gone once it answered


async def test_the_caller_model_sees_neither_the_proxy_call_nor_its_answer():
    seen = []

    def model(request):
        seen.append([[(p.function_call.name if p.function_call else None,
                       p.function_response.response if p.function_response else None, p.text)
                      for p in c.parts] for c in request.contents])
        return call("teller", request="pay al") if len(seen) == 1 else "done"

    func, _ = transfers()
    child = teller(func, call("transfer_money", amount=5, to="al"), "Paid al.")
    caller = LlmAgent(name="bank", model=ScriptedLlm(responder=model), tools=[AgentTool(agent=child)])
    runner = InMemoryRunner(agent=caller, app_name="app")
    session = await new_session(runner)
    request = calls_named(await run(runner, session, user_text("pay al")), "adk_request_confirmation")[0]
    await run(runner, session, confirm(request, True))
    assert seen[1] == [
        [(None, None, "pay al")],
        [("teller", None, None)],
        [(None, {"result": "Paid al."}, None)],
    ]


async def test_a_rejection_inside_an_agent_tool_never_runs_the_tool_and_the_caller_hears_the_agent_out():
    func, paid = transfers()
    heard = []

    def teller_model(request):
        heard.append(request.contents[-1].parts[0].function_response)
        return call("transfer_money", amount=500, to="bo") if len(heard) == 1 else "The transfer was rejected."

    child = LlmAgent(name="teller", model=ScriptedLlm(responder=teller_model),
                     tools=[FunctionTool(func, require_confirmation=True)])
    runner = InMemoryRunner(agent=bank(child, call("teller", request="send 500 to bo"), "Nothing was sent."),
                            app_name="app")
    session = await new_session(runner)
    request = calls_named(await run(runner, session, user_text("send 500 to bo")), "adk_request_confirmation")[0]
    second = await run(runner, session, confirm(request, False))
    assert paid == []
    assert summaries(second) == [
        ("bank", [("response", "teller", {"result": "The transfer was rejected."})]),
        ("bank", ["Nothing was sent."]),
    ]
    assert heard[1].response == REJECTED  # the teller's model was told, in the teller's own session


async def test_a_long_running_call_inside_an_agent_tool_is_answered_through_the_caller():
    asked = []

    def ask_manager(amount: int) -> None:
        """Ask the manager to approve a refund."""
        asked.append(amount)

    clerk = LlmAgent(name="clerk", model=ScriptedLlm(turns=[call("ask_manager", amount=80), "The manager agreed."]),
                     tools=[LongRunningFunctionTool(ask_manager)])
    runner = InMemoryRunner(agent=bank(clerk, call("clerk", request="refund 80"), "Refund approved."), app_name="app")
    session = await new_session(runner)
    first = await run(runner, session, user_text("refund 80"))
    assert summaries(first) == [("bank", [("call", "clerk", {"request": "refund 80"})]),
                                ("bank", [("call", "ask_manager", {"amount": 80})])]
    asked_call = calls_named(first, "ask_manager")[0]
    assert first[1].long_running_tool_ids == {asked_call.id}
    second = await run(runner, session, function_response(asked_call.id, "ask_manager", {"approved": True}))
    assert asked == [80]
    assert summaries(second) == [("bank", [("response", "clerk", {"result": "The manager agreed."})]),
                                 ("bank", ["Refund approved."])]
    assert {e.invocation_id for e in second} == {first[0].invocation_id}


async def test_a_fresh_runner_over_the_same_services_resumes_the_agent_tool_as_another_worker_would():
    func, paid = transfers()
    journal = InMemoryToolJournal()

    def agents():  # each worker process builds its own agent objects
        child = teller(func, call("transfer_money", amount=70, to="cy"), "Sent 70 to cy.")
        return bank(child, call("teller", request="send 70 to cy"), "Done: 70 to cy.")

    first_worker = InMemoryRunner(agent=agents(), app_name="app", tool_journal=journal)
    session = await new_session(first_worker)
    first = await run(first_worker, session, user_text("send 70 to cy"))
    request = calls_named(first, "adk_request_confirmation")[0]
    second_worker = Runner(app_name="app", agent=agents(), session_service=first_worker.session_service,
                           artifact_service=first_worker.artifact_service, tool_journal=journal)
    second = await run(second_worker, session, confirm(request, True))
    assert paid == [(70, "cy")]
    assert summaries(second) == [("bank", [("response", "teller", {"result": "Sent 70 to cy."})]),
                                 ("bank", ["Done: 70 to cy."])]
    assert {e.invocation_id for e in second} == {first[0].invocation_id}


async def test_answering_one_of_two_pending_calls_of_the_agent_leaves_the_other_pending():
    func, paid = transfers()
    child = LlmAgent(name="teller", model=ScriptedLlm(turns=[
        [call("transfer_money", amount=200, to="a"), call("transfer_money", amount=300, to="b")], "Both handled."]),
        tools=[FunctionTool(func, require_confirmation=True)])
    runner = InMemoryRunner(agent=bank(child, call("teller", request="pay both"), "All done."), app_name="app",
                            tool_journal=InMemoryToolJournal())
    session = await new_session(runner)
    first = await run(runner, session, user_text("pay both"))
    requests = calls_named(first, "adk_request_confirmation")
    assert len(requests) == 2 and first[-1].long_running_tool_ids == {r.id for r in requests}
    one = await run(runner, session, confirm(requests[0], True))
    assert (paid, summaries(one)) == ([(200, "a")], [])
    history = await runner.session_service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert [c.id for c in pending_long_running_calls(history, first[0].invocation_id)] == [requests[1].id]
    two = await run(runner, session, confirm(requests[1], False))
    assert paid == [(200, "a")]
    assert summaries(two) == [("bank", [("response", "teller", {"result": "Both handled."})]),
                              ("bank", ["All done."])]


async def test_an_agent_that_pauses_again_after_an_answer_re_issues_its_new_call_with_the_state_it_changed():
    paid = []

    def transfer_money(amount: int, to: str, tool_context: ToolContext) -> dict:
        """Send money."""
        paid.append((amount, to))
        tool_context.state["sent"] = amount
        return {"status": "sent"}

    def ask_manager(amount: int) -> None:
        """Ask the manager."""

    child = LlmAgent(name="teller", model=ScriptedLlm(turns=[
        call("transfer_money", amount=9, to="q"), call("ask_manager", amount=9), "Sent, and the manager knows."]),
        tools=[FunctionTool(transfer_money, require_confirmation=True), LongRunningFunctionTool(ask_manager)])
    runner = InMemoryRunner(agent=bank(child, call("teller", request="pay q"), "Finished."), app_name="app")
    session = await new_session(runner)
    first = await run(runner, session, user_text("pay q"))
    request = calls_named(first, "adk_request_confirmation")[0]
    second = await run(runner, session, confirm(request, True))
    assert paid == [(9, "q")]
    assert summaries(second) == [("bank", [("call", "ask_manager", {"amount": 9})])]
    assert second[0].actions.state_delta == {"sent": 9}
    manager = calls_named(second, "ask_manager")[0]
    third = await run(runner, session, function_response(manager.id, "ask_manager", {"ok": True}))
    assert summaries(third) == [("bank", [("response", "teller", {"result": "Sent, and the manager knows."})]),
                                ("bank", ["Finished."])]
    assert {e.invocation_id for e in [*second, *third]} == {first[0].invocation_id}


async def test_an_agent_tool_whose_agent_does_not_pause_still_answers_its_result_and_leaves_no_session():
    helper = LlmAgent(name="helper", model=ScriptedLlm(turns=["summary of {topic}"]), output_key="noted")
    runner = InMemoryRunner(agent=bank(helper, call("helper", request="long text"), "Done."), app_name="app")
    session = await new_session(runner, state={"topic": "cats"})
    events = await run(runner, session, user_text("summarize"))
    assert summaries(events) == [
        ("bank", [("call", "helper", {"request": "long text"})]),
        ("bank", [("response", "helper", {"result": "summary of {topic}"})]),
        ("bank", ["Done."]),
    ]
    assert events[1].actions.state_delta == {"noted": "summary of {topic}"}
    assert await session_ids(runner) == [session.id]
    assert len(await stored(runner, session)) == 4


async def test_a_caller_resumed_without_an_answer_stays_paused_on_the_agent_tool():
    func, paid = transfers()
    child = teller(func, call("transfer_money", amount=4, to="d"), "Sent.")
    runner = InMemoryRunner(agent=bank(child, call("teller", request="pay d"), "Done."), app_name="app",
                            tool_journal=InMemoryToolJournal())
    session = await new_session(runner)
    first = await run(runner, session, user_text("pay d"))
    request = calls_named(first, "adk_request_confirmation")[0]
    again = await run(runner, session, invocation_id=first[0].invocation_id)  # a worker retrying after a crash
    assert (again, paid) == ([], [])
    history = await runner.session_service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert [c.id for c in pending_long_running_calls(history, first[0].invocation_id)] == [request.id]


async def test_a_replayed_approval_of_the_agents_confirmation_is_refused_and_its_tool_runs_once():
    func, paid = transfers()
    child = teller(func, call("transfer_money", amount=9, to="q"), "Sent.")
    runner = InMemoryRunner(agent=bank(child, call("teller", request="pay q"), "Done."), app_name="app",
                            tool_journal=InMemoryToolJournal())
    session = await new_session(runner)
    request = calls_named(await run(runner, session, user_text("pay q")), "adk_request_confirmation")[0]
    answer = confirm(request, True)
    await run(runner, session, answer)
    with pytest.raises(CallNotPendingError, match="answered already"):
        await run(runner, session, answer)
    assert paid == [(9, "q")]


async def test_a_summary_skipping_agent_tool_that_paused_ends_the_caller_turn_with_the_agents_answer():
    func, paid = transfers()
    child = teller(func, call("transfer_money", amount=3, to="e"), "Sent 3 to e.")
    caller = LlmAgent(name="bank", model=ScriptedLlm(turns=[call("teller", request="pay e"), "never"]),
                      tools=[AgentTool(agent=child, skip_summarization=True)])
    runner = InMemoryRunner(agent=caller, app_name="app")
    session = await new_session(runner)
    first = await run(runner, session, user_text("pay e"))
    request = calls_named(first, "adk_request_confirmation")[0]
    assert first[-1].actions.skip_summarization is None
    second = await run(runner, session, confirm(request, True))
    assert summaries(second) == [("bank", [("response", "teller", {"result": "Sent 3 to e."}), "Sent 3 to e."])]
    assert second[-1].is_final_response() and paid == [(3, "e")]


async def test_a_caller_resumed_without_an_answer_does_not_answer_its_own_confirmation_request():
    """Not an AgentTool case, the same rule: a resumed run never runs a call only a client answers."""
    func, paid = transfers()

    def look(x: int) -> dict:
        """Look."""
        return {"seen": x}

    model = ScriptedLlm(turns=[[call("look", x=1), call("transfer_money", amount=2, to="f")]])
    agent = LlmAgent(name="bank", model=model,
                     tools=[FunctionTool(look), FunctionTool(func, require_confirmation=True)])
    runner = InMemoryRunner(agent=agent, app_name="app")
    session = await new_session(runner)
    first = await run(runner, session, user_text("go"))
    assert first[-1].get_function_calls()[0].name == "adk_request_confirmation"
    assert (await run(runner, session, invocation_id=first[0].invocation_id), paid) == ([], [])


async def test_a_worker_with_its_own_redis_connection_resumes_the_agent_tool_from_what_redis_holds(redis_url):
    from runtime.sessions import RedisSessionService

    func, paid = transfers()

    def agents():
        child = teller(func, call("transfer_money", amount=12, to="g"), "Sent 12 to g.")
        return bank(child, call("teller", request="send 12 to g"), "Done: 12 to g.")

    service_a, service_b = RedisSessionService(redis_url), RedisSessionService(redis_url)
    worker_a = Runner(app_name="app", agent=agents(), session_service=service_a)
    worker_b = Runner(app_name="app", agent=agents(), session_service=service_b)
    session = await service_a.create_session(app_name="app", user_id="u")
    first = await run(worker_a, session, user_text("send 12 to g"))
    request = calls_named(first, "adk_request_confirmation")[0]
    second = await run(worker_b, session, confirm(request, True))
    assert paid == [(12, "g")]
    assert summaries(second) == [("bank", [("response", "teller", {"result": "Sent 12 to g."})]),
                                 ("bank", ["Done: 12 to g."])]
    assert await session_ids(worker_b) == [session.id]
    await service_a.aclose()
    await service_b.aclose()
