"""LlmAgent: instructions, output_key, callbacks, model-call budget."""

from __future__ import annotations

import pytest
from google.genai import types

from runtime.agents import CallbackContext, LlmAgent, ReadonlyContext, RunConfig
from runtime.errors import LlmCallsLimitExceededError
from runtime.models import LlmResponse, ScriptedLlm, call
from runtime.runners import InMemoryRunner

from .helpers import new_session, run, stored, summaries, user_text


def recording_model(answer="ok"):
    requests = []

    def responder(request):
        requests.append(request)
        return answer(request) if callable(answer) else answer

    return ScriptedLlm(responder=responder), requests


async def _system_instruction(instruction, state=None, artifact=None) -> str:
    model, requests = recording_model()
    runner = InMemoryRunner(agent=LlmAgent(name="a", model=model, instruction=instruction), app_name="app")
    session = await new_session(runner, state=state)
    if artifact:
        await runner.artifact_service.save_artifact(app_name="app", user_id="u", session_id=session.id,
                                                    filename=artifact[0], artifact=types.Part(text=artifact[1]))
    await run(runner, session, user_text("hi"))
    return requests[0].config.system_instruction


async def test_instruction_placeholders_are_filled_from_state_and_artifacts():
    text = await _system_instruction(
        "Hi {name}, {missing?}|{app:theme}|{user:lang}|{artifact.notes}|{not a name}|{{name}}",
        state={"name": "Ada", "app:theme": "dark", "user:lang": "fr"},
        artifact=("notes", "remember milk"),
    )
    assert text.split("\n\n")[0] == "Hi Ada, |dark|fr|remember milk|{not a name}|Ada"


async def test_a_missing_required_placeholder_is_a_key_error_naming_key_and_agent():
    with pytest.raises(KeyError, match="`name`.*'a'"):
        await _system_instruction("Hi {name}")


async def test_an_instruction_provider_gets_a_readonly_context_and_bypasses_templating():
    seen = []

    def provider(ctx: ReadonlyContext) -> str:
        seen.append((type(ctx).__name__, ctx.agent_name, ctx.state["x"]))
        return "Literal {x}"

    text = await _system_instruction(provider, state={"x": 1})
    assert seen == [("ReadonlyContext", "a", 1)]
    assert text == 'Literal {x}\n\nYou are an agent. Your internal name is "a".'


async def test_output_key_stores_the_final_text_in_state():
    runner = InMemoryRunner(
        agent=LlmAgent(name="a", model=ScriptedLlm(turns=["the answer"]), output_key="result"), app_name="app"
    )
    session = await new_session(runner)
    events = await run(runner, session, user_text("q"))
    assert events[-1].actions.state_delta == {"result": "the answer"}
    fresh = await runner.session_service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert fresh.state == {"result": "the answer"}


async def test_before_agent_callback_returning_content_skips_the_agent():
    model, requests = recording_model()

    def skip(callback_context: CallbackContext):
        callback_context.state["skipped"] = True
        return types.Content(role="model", parts=[types.Part(text="skipped by callback")])

    runner = InMemoryRunner(agent=LlmAgent(name="a", model=model, before_agent_callback=skip), app_name="app")
    session = await new_session(runner)
    events = await run(runner, session, user_text("q"))
    assert summaries(events) == [("a", ["skipped by callback"])]
    assert events[0].actions.state_delta == {"skipped": True}
    assert requests == []


async def test_after_agent_callback_content_adds_a_final_event_and_lists_of_async_callbacks_run_in_order():
    calls = []

    async def first(callback_context):
        calls.append("first")

    def second(callback_context):
        calls.append("second")
        return types.Content(role="model", parts=[types.Part(text="appendix")])

    runner = InMemoryRunner(
        agent=LlmAgent(name="a", model=ScriptedLlm(turns=["answer"]), after_agent_callback=[first, second]),
        app_name="app",
    )
    session = await new_session(runner)
    events = await run(runner, session, user_text("q"))
    assert summaries(events) == [("a", ["answer"]), ("a", ["appendix"])]
    assert calls == ["first", "second"]


async def test_before_model_callback_returning_a_response_skips_the_model():
    model, requests = recording_model()

    def canned(callback_context, llm_request):
        return LlmResponse(content=types.Content(role="model", parts=[types.Part(text="canned")]))

    runner = InMemoryRunner(agent=LlmAgent(name="a", model=model, before_model_callback=canned), app_name="app")
    session = await new_session(runner)
    assert summaries(await run(runner, session, user_text("q"))) == [("a", ["canned"])]
    assert requests == []


async def test_after_model_callback_returning_a_response_replaces_it():
    def louder(callback_context, llm_response):
        return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=llm_response.content.parts[0]
                                                                                 .text.upper())]))

    runner = InMemoryRunner(
        agent=LlmAgent(name="a", model=ScriptedLlm(turns=["quiet"]), after_model_callback=louder), app_name="app"
    )
    session = await new_session(runner)
    assert summaries(await run(runner, session, user_text("q"))) == [("a", ["QUIET"])]


async def test_before_tool_callback_returning_a_dict_skips_the_tool_and_is_the_result():
    ran = []

    def tool() -> str:
        """Tool."""
        ran.append(True)
        return "real"

    def intercept(tool, args, tool_context):
        return {"intercepted": tool.name}

    agent = LlmAgent(name="a", model=ScriptedLlm(turns=[call("tool"), "done"]), tools=[tool],
                     before_tool_callback=intercept)
    runner = InMemoryRunner(agent=agent, app_name="app")
    session = await new_session(runner)
    events = await run(runner, session, user_text("q"))
    assert events[1].get_function_responses()[0].response == {"intercepted": "tool"}
    assert ran == []


async def test_after_tool_callback_returning_a_dict_replaces_the_result():
    def tool() -> str:
        """Tool."""
        return "real"

    async def wrap(tool, args, tool_context, tool_response):
        return {"wrapped": tool_response}

    agent = LlmAgent(name="a", model=ScriptedLlm(turns=[call("tool"), "done"]), tools=[tool],
                     after_tool_callback=wrap)
    runner = InMemoryRunner(agent=agent, app_name="app")
    session = await new_session(runner)
    events = await run(runner, session, user_text("q"))
    assert events[1].get_function_responses()[0].response == {"wrapped": "real"}


async def test_exceeding_max_llm_calls_raises():
    def again() -> str:
        """Again."""
        return "more"

    agent = LlmAgent(name="a", model=ScriptedLlm(responder=lambda request: call("again")), tools=[again])
    runner = InMemoryRunner(agent=agent, app_name="app")
    session = await new_session(runner)
    with pytest.raises(LlmCallsLimitExceededError, match="`3`"):
        await run(runner, session, user_text("q"), run_config=RunConfig(max_llm_calls=3))
    assert len([e for e in await stored(runner, session) if e.get_function_calls()]) == 3


async def test_temp_state_is_visible_within_the_invocation_but_never_stored():
    def put(tool_context) -> str:
        """Put."""
        tool_context.state["temp:scratch"] = 42
        return "ok"

    model, requests = recording_model(lambda r: call("put") if len(r.contents) == 1 else "read {temp:scratch}")
    agent = LlmAgent(name="a", model=model, tools=[put], instruction="scratch={temp:scratch?}")
    runner = InMemoryRunner(agent=agent, app_name="app")
    session = await new_session(runner)
    events = await run(runner, session, user_text("q"))
    assert requests[1].config.system_instruction.startswith("scratch=42")
    assert events[1].actions.state_delta == {}
    fresh = await runner.session_service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert fresh.state == {}


async def test_model_may_be_inherited_from_the_parent_agent():
    child = LlmAgent(name="child")
    parent = LlmAgent(name="parent", model=ScriptedLlm(turns=["x"]), sub_agents=[child])
    assert child.canonical_model is parent.canonical_model


async def test_output_schema_requests_json_and_stores_the_parsed_answer():
    import pydantic

    class Verdict(pydantic.BaseModel):
        ok: bool
        reason: str

    model, requests = recording_model('{"ok": true, "reason": "fine"}')
    agent = LlmAgent(name="a", model=model, output_schema=Verdict, output_key="verdict")
    runner = InMemoryRunner(agent=agent, app_name="app")
    session = await new_session(runner)
    events = await run(runner, session, user_text("judge"))
    assert (requests[0].config.response_schema, requests[0].config.response_mime_type) == (
        Verdict, "application/json")
    assert events[-1].actions.state_delta == {"verdict": {"ok": True, "reason": "fine"}}


async def test_an_async_instruction_provider_and_the_roots_global_instruction_are_used():
    async def provider(ctx):
        return f"Serve {ctx.state['who']}."

    model, requests = recording_model()
    child = LlmAgent(name="child", model=model, instruction=provider, disallow_transfer_to_parent=True,
                     disallow_transfer_to_peers=True)
    root = LlmAgent(name="root", model=ScriptedLlm(turns=[call("transfer_to_agent", agent_name="child")]),
                    global_instruction="Be brief.", sub_agents=[child])
    runner = InMemoryRunner(agent=root, app_name="app")
    session = await new_session(runner, state={"who": "Ada"})
    await run(runner, session, user_text("hi"))
    assert requests[0].config.system_instruction == (
        'Be brief.\n\nServe Ada.\n\nYou are an agent. Your internal name is "child".'
    )


async def test_a_model_error_is_an_error_event_and_stays_the_last_event_of_a_resumable_run():
    from runtime.errors import ModelError

    def broken(request):
        raise ModelError("400 invalid argument", code="400")

    runner = InMemoryRunner(agent=LlmAgent(name="a", model=ScriptedLlm(responder=broken)), app_name="app",
                            resumable=True)
    session = await new_session(runner)
    events = await run(runner, session, user_text("hi"))
    assert [(e.error_code, e.error_message, e.is_final_response()) for e in events] == [
        ("400", "400 invalid argument", True)]
