"""Public behaviours ADK users rely on, checked against what google-adk 2.13 does (its source and runs of it)."""

from __future__ import annotations

import logging
import sys

import pytest
from google.genai import types
from pydantic import BaseModel, ValidationError

from runtime.agents import LlmAgent, LoopAgent
from runtime.agents.run_config import RunConfig
from runtime.errors import InvalidAgentConfigError, UsageError
from runtime.models import Gemini, LLMRegistry, LlmRequest, ScriptedLlm, call
from runtime.runners import InMemoryRunner, Runner
from runtime.sessions import InMemorySessionService
from runtime.tools import FunctionTool, exit_loop
from runtime.utils.instructions_utils import inject_session_state
from tests.fake_gemini import FakeGemini, text_response

from .helpers import new_session, run, stored, summaries, user_text


def recording_model(answer="ok"):
    """A model answering ``answer`` (or ``answer(request)``) and the list of requests it was sent."""
    requests: list[LlmRequest] = []

    def responder(request):
        requests.append(request)
        return answer(request) if callable(answer) else answer

    return ScriptedLlm(responder=responder), requests


# --- transfer and loops ---


async def test_a_loop_reached_by_transfer_ends_the_invocation_on_exit_loop_and_the_next_turn_goes_to_the_caller():
    # ADK 2.13 does not hand control back to the transferring agent when the loop ends (run side by side):
    # the invocation ends on exit_loop's response, and the next user turn goes to the agent that transferred.
    worker = LlmAgent(name="worker", model=ScriptedLlm(turns=[call("exit_loop")]), tools=[exit_loop])
    loop = LoopAgent(name="loop", sub_agents=[worker], max_iterations=3)
    root = LlmAgent(name="root", model=ScriptedLlm(turns=[call("transfer_to_agent", agent_name="loop"),
                                                          "Root answers."]), sub_agents=[loop])
    runner = InMemoryRunner(agent=root, app_name="app")
    session = await new_session(runner)

    first = await run(runner, session, user_text("go"))
    second = await run(runner, session, user_text("and now?"))

    assert summaries(first) == [
        ("root", [("call", "transfer_to_agent", {"agent_name": "loop"})]),
        ("root", [("response", "transfer_to_agent", {"result": None})]),
        ("worker", [("call", "exit_loop", {})]),
        ("worker", [("response", "exit_loop", {"result": None})]),
    ]
    assert (first[-1].actions.escalate, first[-1].actions.skip_summarization) == (True, True)
    assert summaries(second) == [("root", ["Root answers."])]


# --- LlmAgent settings ---


class Verdict(BaseModel):
    ok: bool


def lookup(query: str) -> str:
    """Look something up."""
    return query


@pytest.mark.parametrize(("config", "message"), [
    (types.GenerateContentConfig(tools=[types.Tool(function_declarations=[types.FunctionDeclaration(name="f")])]),
     "All tools must be set via LlmAgent.tools, not via generate_content_config.tools. Move your tools to the "
     "LlmAgent(tools=[...]) parameter."),
    (types.GenerateContentConfig(system_instruction="Be brief."),
     "System instruction must be set via LlmAgent.instruction, not via generate_content_config.system_instruction."
     ' Move your instruction to LlmAgent(instruction="...").'),
    ({"response_schema": Verdict},
     "Response schema must be set via LlmAgent.output_schema, not via generate_content_config.response_schema. "
     "Move your schema to LlmAgent(output_schema=...)."),
    (types.GenerateContentConfig(http_options=types.HttpOptions(base_url="http://proxy")),
     "Base URL is a transport setting and must be set on the model or its client, not via "
     "LlmAgent.generate_content_config.http_options.base_url."),
])
def test_generate_content_config_with_a_setting_that_has_its_own_agent_argument_is_refused(config, message):
    child = LlmAgent(name="child")

    with pytest.raises(InvalidAgentConfigError) as raised:
        LlmAgent(name="a", generate_content_config=config, sub_agents=[child])

    assert (isinstance(raised.value, ValueError), str(raised.value)) == (True, message)
    assert child.parent_agent is None  # the refused agent did not adopt its sub-agents


def test_output_schema_with_sub_agents_and_tools_keeps_transfer_and_thinking_config_is_accepted_as_in_adk_2():
    # ADK 1.x turned transfer off (and refused sub_agents/tools) with output_schema, and refused thinking_config;
    # ADK 2.13 does neither, so neither does agentq.
    child = LlmAgent(name="child")
    thinking = types.GenerateContentConfig(thinking_config=types.ThinkingConfig(include_thoughts=True))
    agent = LlmAgent(name="a", model=ScriptedLlm(), output_schema=Verdict, sub_agents=[child], tools=[lookup],
                     generate_content_config=thinking)

    assert (agent.disallow_transfer_to_parent, agent.disallow_transfer_to_peers) == (False, False)
    assert agent.transfer_targets() == [child]
    assert sorted(agent.tools_dict()) == ["lookup", "transfer_to_agent"]


async def test_model_requests_are_labelled_with_the_agent_name_next_to_the_users_own_labels():
    model, requests = recording_model()
    plain = LlmAgent(name="plain", model=model)
    labelled = LlmAgent(name="labelled", model=model,
                        generate_content_config=types.GenerateContentConfig(labels={"team": "billing"}))
    for agent in (plain, labelled):
        runner = InMemoryRunner(agent=agent, app_name="app")
        await run(runner, await new_session(runner), user_text("hi"))

    assert [r.config.labels for r in requests] == [
        {"adk_agent_name": "plain"}, {"adk_agent_name": "labelled", "team": "billing"}
    ]
    assert labelled.generate_content_config.labels == {"team": "billing"}  # the agent's own config is untouched


async def test_gemini_api_requests_leave_out_labels_which_only_vertex_ai_takes():
    request = LlmRequest(contents=[types.Content(role="user", parts=[types.Part(text="hi")])],
                         config=types.GenerateContentConfig(labels={"adk_agent_name": "a"}, temperature=0.5))
    with FakeGemini() as fake:
        fake.add(text_response("hello"))
        llm = Gemini(base_url=fake.base_url, api_key="test-key")
        [answer] = [a async for a in llm.generate_content_async(request)]

    assert answer.content == types.Content(role="model", parts=[types.Part(text="hello")])
    assert ("labels" in fake.requests[0].body, fake.requests[0].body["generationConfig"]) == (
        False, {"temperature": 0.5})
    assert request.config.labels == {"adk_agent_name": "a"}


async def test_canonical_instructions_return_the_text_and_whether_state_injection_is_bypassed():
    seen = []

    async def read_instructions(callback_context, llm_request):
        for agent in (templated, provided):
            seen.append(await agent.canonical_instruction(callback_context))
            seen.append(await agent.canonical_global_instruction(callback_context))

    async def provider(ctx):
        return f"Serve {ctx.state['who']} {{who}}."

    templated = LlmAgent(name="templated", instruction="Hi {who}.", global_instruction="Be brief.")
    provided = LlmAgent(name="provided", instruction=provider, global_instruction=lambda ctx: "Global.")
    root = LlmAgent(name="root", model=ScriptedLlm(turns=["ok"]), before_model_callback=read_instructions,
                    sub_agents=[templated, provided])
    runner = InMemoryRunner(agent=root, app_name="app")
    await run(runner, await new_session(runner, state={"who": "Ada"}), user_text("hi"))

    assert seen == [("Hi {who}.", False), ("Be brief.", False), ("Serve Ada {who}.", True), ("Global.", True)]


# --- templating ---


async def test_an_artifact_placeholder_without_an_artifact_service_fails_the_run_with_adks_value_error():
    agent = LlmAgent(name="a", model=ScriptedLlm(turns=["x"]), instruction="Read {artifact.notes?}")
    runner = Runner(app_name="app", agent=agent, session_service=InMemorySessionService())
    session = await new_session(runner)

    with pytest.raises(ValueError) as raised:
        await run(runner, session, user_text("go"))

    assert (type(raised.value), str(raised.value)) == (ValueError, "Artifact service is not initialized.")
    assert [(e.author, e.error_code, e.error_message) for e in await stored(runner, session)] == [
        ("user", None, None), ("a", "ValueError", "Artifact service is not initialized.")]


async def test_braces_after_a_dollar_sign_or_a_backslash_are_not_placeholders():
    model, requests = recording_model()
    runner = InMemoryRunner(agent=LlmAgent(name="a", model=model, instruction="${who} \\{who} {who}"),
                            app_name="app")
    await run(runner, await new_session(runner, state={"who": "Ada"}), user_text("hi"))

    assert requests[0].config.system_instruction.split("\n\n")[0] == "${who} \\{who} Ada"


async def test_inject_session_state_templates_an_instruction_providers_text():
    async def provider(readonly_context):
        return await inject_session_state("Serve {who}, {missing?}{user:tier} tier.", readonly_context)

    model, requests = recording_model()
    runner = InMemoryRunner(agent=LlmAgent(name="a", model=model, instruction=provider), app_name="app")
    await run(runner, await new_session(runner, state={"who": "Ada", "user:tier": "gold"}), user_text("hi"))

    assert requests[0].config.system_instruction.split("\n\n")[0] == "Serve Ada, gold tier."


# --- RunConfig ---


def test_max_llm_calls_of_sys_maxsize_is_refused():
    with pytest.raises(ValidationError) as raised:
        RunConfig(max_llm_calls=sys.maxsize)

    assert isinstance(raised.value, ValueError)
    assert [e["msg"] for e in raised.value.errors()] == [f"Value error, max_llm_calls should be less than {sys.maxsize}."]


def test_max_llm_calls_of_zero_or_less_is_allowed_with_a_warning(caplog):
    with caplog.at_level(logging.WARNING, logger="runtime.agents.run_config"):
        configs = [RunConfig(max_llm_calls=0), RunConfig.model_validate({"max_llm_calls": -1})]

    assert [c.max_llm_calls for c in configs] == [0, -1]
    assert [r.getMessage()[:61] for r in caplog.records] == [
        "max_llm_calls is less than or equal to 0. This will result in"] * 2


# --- public names ---


async def test_process_llm_request_adds_the_tools_declaration_and_the_tool_to_the_request():
    tool = FunctionTool(lookup)
    request = LlmRequest()

    await tool.process_llm_request(tool_context=None, llm_request=request)

    assert request.config.tools == [types.Tool(function_declarations=[tool._get_declaration()])]
    assert request.tools_dict == {"lookup": tool}


def test_llm_registry_resolves_creates_and_registers_model_classes():
    from runtime.models import google_llm, registry

    class EchoLlm(ScriptedLlm):
        @classmethod
        def supported_models(cls) -> list[str]:
            return [r"echo-.*"]

    saved = list(registry._registered)
    try:
        LLMRegistry.register(EchoLlm)
        made = [LLMRegistry.new_llm(name) for name in ("echo-1", "echo:anything", "gemini:gemini-2.5-pro")]
        resolved = [LLMRegistry.resolve(name) for name in ("echo-1", "gemini-2.5-flash")]
    finally:
        registry._registered[:] = saved

    assert [(type(llm), llm.model) for llm in made] == [
        (EchoLlm, "echo-1"), (EchoLlm, "anything"), (Gemini, "gemini-2.5-pro")]
    assert resolved == [EchoLlm, google_llm.Gemini]
    with pytest.raises(UsageError) as raised:
        LLMRegistry.resolve("gpt-4o")
    assert isinstance(raised.value, ValueError) and str(raised.value).startswith("Model 'gpt-4o' not found.")


def test_in_memory_session_service_has_adks_sync_methods():
    service = InMemorySessionService()

    created = service.create_session_sync(app_name="app", user_id="u", state={"k": 1}, session_id="s1")
    fetched = service.get_session_sync(app_name="app", user_id="u", session_id="s1")
    listed = service.list_sessions_sync(app_name="app", user_id="u")
    service.delete_session_sync(app_name="app", user_id="u", session_id="s1")

    assert (created.id, created.state, fetched.id, fetched.state) == ("s1", {"k": 1}, "s1", {"k": 1})
    assert [s.id for s in listed.sessions] == ["s1"]
    assert service.get_session_sync(app_name="app", user_id="u", session_id="s1") is None
