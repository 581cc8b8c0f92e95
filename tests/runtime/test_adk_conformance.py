"""Behaviours found by running the same scenarios on the reference runtime and on agentq (differential checks)."""

from __future__ import annotations

import pytest
from google.genai import types
from pydantic import BaseModel

from runtime.agents import LlmAgent, SequentialAgent
from runtime.agents.run_config import RunConfig
from runtime.errors import (
    AgentNotFoundError,
    FunctionCallNotFoundError,
    InvalidMessageError,
    LlmCallsLimitExceededError,
    TransferNotAllowedError,
)
from runtime.models import ScriptedLlm, call
from runtime.runners import InMemoryRunner
from runtime.tools import AgentTool, LongRunningFunctionTool

from .helpers import function_response, new_session, run, stored, summaries, user_text


def _runner(agent) -> InMemoryRunner:
    return InMemoryRunner(agent=agent, app_name="app")


async def _run_collecting(runner, session, message, **kwargs):
    """The events of one run and what it raised (None when it did not)."""
    events = []
    try:
        async for event in runner.run_async(user_id="u", session_id=session.id, new_message=message, **kwargs):
            events.append(event)
    except Exception as exc:  # noqa: BLE001 - the test inspects it
        return events, exc
    return events, None


def _errors(events):
    return [(e.author, e.error_code, e.error_message) for e in events if e.error_code]


async def test_a_missing_template_key_is_committed_as_an_error_event_and_then_raised_as_key_error():
    runner = _runner(LlmAgent(name="a", model=ScriptedLlm(turns=["x"]), instruction="hello {nokey}"))
    session = await new_session(runner)
    events, raised = await _run_collecting(runner, session, user_text("go"))
    message = "Context variable not found: `nokey` in agent 'a'."
    assert (type(raised), raised.args) == (KeyError, (message,))
    quoted = f'"{message}"'  # str() of a KeyError, as the reference runtime reports it
    assert _errors(events) == [("a", "KeyError", quoted)]
    assert _errors(await stored(runner, session)) == [("a", "KeyError", quoted)]


async def test_a_raising_model_callback_is_committed_as_an_error_event_and_then_raised():
    def broken(callback_context, llm_request):
        raise RuntimeError("cb broke")

    runner = _runner(LlmAgent(name="a", model=ScriptedLlm(turns=["x"]), before_model_callback=broken))
    session = await new_session(runner)
    events, raised = await _run_collecting(runner, session, user_text("go"))
    assert (type(raised), str(raised)) == (RuntimeError, "cb broke")
    assert _errors(events) == [("a", "RuntimeError", "cb broke")]


async def test_exceeding_max_llm_calls_is_committed_as_an_error_event_and_then_raised():
    def add(a: int, b: int) -> int:
        """Adds."""
        return a + b

    agent = LlmAgent(name="a", model=ScriptedLlm(turns=[call("add", a=1, b=2)] * 3 + ["x"]), tools=[add])
    runner = _runner(agent)
    session = await new_session(runner)
    events, raised = await _run_collecting(runner, session, user_text("go"), run_config=RunConfig(max_llm_calls=2))
    assert type(raised) is LlmCallsLimitExceededError
    assert _errors(events) == [("a", "LlmCallsLimitExceededError", "Max number of llm calls limit of `2` exceeded")]
    assert len(await stored(runner, session)) == 6  # user, 2 x (call, response), error


async def test_a_crashing_tool_in_a_sequence_stops_the_sequence_after_its_error_event():
    def boom() -> str:
        """Boom."""
        raise ValueError("bad y")

    first = LlmAgent(name="first", model=ScriptedLlm(turns=[call("boom"), "never"]), tools=[boom])
    second = LlmAgent(name="second", model=ScriptedLlm(turns=["never"]))
    runner = _runner(SequentialAgent(name="seq", sub_agents=[first, second]))
    session = await new_session(runner)
    events, raised = await _run_collecting(runner, session, user_text("go"))
    assert raised is None
    assert [(e.author, e.error_code) for e in events] == [("first", None), ("first", "ValueError")]


async def test_a_crash_inside_an_agent_tool_fails_the_calling_agent_with_the_same_error():
    def boom() -> str:
        """Boom."""
        raise ValueError("bad y")

    helper = LlmAgent(name="helper", model=ScriptedLlm(turns=[call("boom"), "h"]), tools=[boom])
    root = LlmAgent(name="root", model=ScriptedLlm(turns=[call("helper", request="r"), "never"]),
                    tools=[AgentTool(agent=helper)])
    runner = _runner(root)
    session = await new_session(runner)
    events, raised = await _run_collecting(runner, session, user_text("go"))
    assert raised is None
    assert _errors(events) == [("root", "ValueError", "bad y")]


async def test_agent_tool_skip_summarization_adds_a_dict_result_as_json_text():
    class Out(BaseModel):
        v: int

    helper = LlmAgent(name="helper", model=ScriptedLlm(turns=['{"v": 3}']), output_schema=Out)
    root = LlmAgent(name="root", model=ScriptedLlm(turns=[call("helper", request="r"), "never"]),
                    tools=[AgentTool(agent=helper, skip_summarization=True)])
    runner = _runner(root)
    events = await run(runner, await new_session(runner), user_text("go"))
    assert summaries(events)[-1] == ("root", [("response", "helper", {"v": 3}), '{"v": 3}'])


async def test_output_key_keeps_text_said_next_to_a_tool_call_concatenated_with_the_final_text():
    def add(a: int, b: int) -> int:
        """Adds."""
        return a + b

    agent = LlmAgent(name="a", model=ScriptedLlm(turns=[["thinking", call("add", a=1, b=1)], "final"]),
                     tools=[add], output_key="o")
    runner = _runner(agent)
    session = await new_session(runner)
    events = await run(runner, session, user_text("go"))
    assert [e.actions.state_delta for e in events] == [{"o": "thinking"}, {}, {"o": "thinkingfinal"}]
    assert (await runner.session_service.get_session(app_name="app", user_id="u", session_id=session.id)).state == {
        "o": "thinkingfinal"}


async def test_output_key_stores_the_before_agent_callback_answer():
    def skip(callback_context):
        return types.Content(role="model", parts=[types.Part(text="skipped")])

    runner = _runner(LlmAgent(name="a", model=ScriptedLlm(turns=["x"]), output_key="o", before_agent_callback=skip))
    events = await run(runner, await new_session(runner), user_text("go"))
    assert [(e.text(), e.actions.state_delta) for e in events] == [("skipped", {"o": "skipped"})]


async def test_temp_keys_of_the_run_state_delta_are_visible_to_the_invocation_but_never_stored():
    seen = []

    def model(request):
        seen.append(request.config.system_instruction.split("\n")[0])
        return "x"

    agent = LlmAgent(name="a", model=ScriptedLlm(responder=model), instruction="k={k} t={temp:t?}")
    runner = _runner(agent)
    session = await new_session(runner)
    await run(runner, session, user_text("go"), state_delta={"k": "v", "temp:t": "T"})
    assert seen == ["k=v t=T"]
    fresh = await runner.session_service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert (fresh.state, fresh.events[0].actions.state_delta) == ({"k": "v"}, {"k": "v"})


async def test_a_paused_agent_and_its_sequence_still_run_their_after_agent_callbacks():
    def approve(amount: int):
        """Ask approval."""
        return None

    def mark(name):
        def callback(callback_context):
            callback_context.state[f"after_{name}"] = True
        return callback

    first = LlmAgent(name="first", model=ScriptedLlm(turns=[call("approve", amount=1), "done"]),
                     tools=[LongRunningFunctionTool(approve)], after_agent_callback=mark("first"))
    second = LlmAgent(name="second", model=ScriptedLlm(turns=["never"]))
    seq = SequentialAgent(name="seq", sub_agents=[first, second], after_agent_callback=mark("seq"))
    runner = _runner(seq)
    events = await run(runner, await new_session(runner), user_text("go"))
    assert [(e.author, e.actions.state_delta) for e in events] == [
        ("first", {}), ("first", {"after_first": True}), ("seq", {"after_seq": True})
    ]


async def test_a_user_message_with_a_function_call_is_refused_with_the_reference_text():
    runner = _runner(LlmAgent(name="a", model=ScriptedLlm(turns=["x"])))
    session = await new_session(runner)
    message = types.Content(role="user", parts=[types.Part(function_call=types.FunctionCall(name="f", args={}))])
    with pytest.raises(InvalidMessageError) as raised:
        await run(runner, session, message)
    assert str(raised.value) == "User message cannot contain function calls."


async def test_a_function_response_to_an_unknown_call_id_is_a_value_error_naming_the_ids():
    runner = _runner(LlmAgent(name="a", model=ScriptedLlm(turns=["x"])))
    session = await new_session(runner)
    with pytest.raises(FunctionCallNotFoundError) as raised:
        await run(runner, session, function_response("nope", "f", {}))
    assert isinstance(raised.value, ValueError)
    assert str(raised.value) == (
        "Function call not found for function response ids: {'nope'}. Ensure each function response ID matches "
        "an existing function call in the session history."
    )


async def test_a_transfer_to_an_unknown_agent_raises_without_an_error_event():
    sub = LlmAgent(name="sub", model=ScriptedLlm(turns=["x"]))
    root = LlmAgent(name="root", model=ScriptedLlm(turns=[call("transfer_to_agent", agent_name="ghost")]),
                    sub_agents=[sub])
    runner = _runner(root)
    session = await new_session(runner)
    events, raised = await _run_collecting(runner, session, user_text("go"))
    assert (type(raised), str(raised)) == (AgentNotFoundError, "Transfer target agent 'ghost' not found.")
    assert isinstance(raised, ValueError) and _errors(events) == []


async def test_an_answered_long_running_call_resumes_only_the_caller_when_not_resumable():
    def approve(amount: int):
        """Ask approval."""
        return None

    first = LlmAgent(name="first", model=ScriptedLlm(turns=[call("approve", amount=1), "approved"]),
                     tools=[LongRunningFunctionTool(approve)])
    second = LlmAgent(name="second", model=ScriptedLlm(turns=["second"]))
    runner = _runner(SequentialAgent(name="seq", sub_agents=[first, second]))
    session = await new_session(runner)
    parked = await run(runner, session, user_text("go"))
    call_id = parked[0].get_function_calls()[0].id
    resumed = await run(runner, session, function_response(call_id, "approve", {"ok": True}))
    assert summaries(resumed) == [("first", ["approved"])]
    assert {e.invocation_id for e in resumed} == {parked[0].invocation_id}


async def test_a_transfer_to_a_peer_is_refused_when_disallow_transfer_to_peers_is_set():
    first = LlmAgent(name="s1", model=ScriptedLlm(turns=[call("transfer_to_agent", agent_name="s2")]),
                     disallow_transfer_to_peers=True)
    second = LlmAgent(name="s2", model=ScriptedLlm(turns=["never"]))
    root = LlmAgent(name="root", model=ScriptedLlm(turns=[call("transfer_to_agent", agent_name="s1")]),
                    sub_agents=[first, second])
    runner = _runner(root)
    session = await new_session(runner)
    events, raised = await _run_collecting(runner, session, user_text("go"))
    assert (type(raised), str(raised)) == (
        TransferNotAllowedError, "Cannot transfer from 's1' to peer agent 's2': disallow_transfer_to_peers is set."
    )
    assert [e.author for e in events] == ["root", "root", "s1", "s1"] and _errors(events) == []


async def test_a_transfer_to_an_unrelated_agent_is_refused_naming_the_available_agents():
    nephew = LlmAgent(name="nephew", model=ScriptedLlm(turns=["never"]))
    uncle = LlmAgent(name="uncle", model=ScriptedLlm(turns=["never"]), sub_agents=[nephew])
    child = LlmAgent(name="child", model=ScriptedLlm(turns=[call("transfer_to_agent", agent_name="nephew")]))
    root = LlmAgent(name="root", model=ScriptedLlm(turns=[call("transfer_to_agent", agent_name="child")]),
                    sub_agents=[child, uncle])
    runner = _runner(root)
    _, raised = await _run_collecting(runner, await new_session(runner), user_text("go"))
    assert str(raised) == (
        "Cannot transfer from 'child' to unrelated agent 'nephew'.\nAvailable agents: root, child, uncle, nephew"
    )


async def test_a_run_without_a_message_commits_its_state_delta_and_runs_the_agent_on_the_history():
    runner = _runner(LlmAgent(name="a", model=ScriptedLlm(turns=["x"])))
    session = await new_session(runner)
    events = await run(runner, session, None, state_delta={"k": 1})
    assert summaries(events) == [("a", ["x"])]
    history = await stored(runner, session)
    assert [(e.author, e.content is None, e.actions.state_delta) for e in history] == [
        ("user", True, {"k": 1}), ("a", False, {})
    ]
