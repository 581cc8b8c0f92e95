"""Corners of google-adk 2.13's public API an agent written for it may touch, each checked side by side with
ADK (scripts run in bench/.adk-venv): id-less function responses, callable objects as tools, non-Part
artifacts in instructions, run_config's logger, UI widgets, and the names agentq does not provide yet."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from unittest.mock import patch

import pytest
from google.genai import types

from runtime.agents import InvocationContext, LlmAgent
from runtime.agents.run_config import RunConfig
from runtime.artifacts import InMemoryArtifactService
from runtime.errors import NotSupportedYetError
from runtime.events import EventActions
from runtime.events.ui_widget import UiWidget
from runtime.models import LlmRequest, ScriptedLlm, call
from runtime.runners import InMemoryRunner, Runner, pending_long_running_calls
from runtime.sessions import InMemorySessionService
from runtime.tools import FunctionTool, LongRunningFunctionTool, ToolContext

from .helpers import function_response, new_session, run, stored, summaries, user_text


def recording_model(*turns):
    """A model answering ``turns`` in order, and the list of requests it was sent."""
    requests: list[LlmRequest] = []

    def responder(request):
        requests.append(request)
        return turns[len(requests) - 1]

    return ScriptedLlm(responder=responder), requests


def shown(request: LlmRequest) -> list[tuple]:
    """What the model was shown: (role, text or ('call'|'response', name)) per part."""
    return [
        (content.role, [part.text if part.text is not None else
                        ("call", part.function_call.name) if part.function_call else
                        ("response", part.function_response.name, part.function_response.response)
                        for part in content.parts])
        for content in request.contents
    ]


# --- a long-running call answered without an id ---


async def open_ticket(title: str) -> None:
    """Open a ticket; the answer comes later."""


def id_less_response(name: str, response: dict) -> types.Content:
    return types.Content(role="user", parts=[types.Part(function_response=types.FunctionResponse(
        name=name, response=response))])


async def parked_ticket_run(*later_turns):
    model, requests = recording_model(call("open_ticket", title="t"), *later_turns)
    runner = InMemoryRunner(agent=LlmAgent(name="a", model=model, tools=[LongRunningFunctionTool(open_ticket)]),
                            app_name="app")
    session = await new_session(runner)
    parked = await run(runner, session, user_text("open one"))
    return runner, session, parked, requests


async def test_a_function_response_without_an_id_starts_a_new_invocation_and_leaves_the_call_pending():
    # ADK 2.13 resolves the invocation from response ids only: an id-less answer resumes nothing; the message
    # is a new turn, and the model is shown the pending call without it (ADK logs that it drops the response).
    runner, session, parked, requests = await parked_ticket_run("Still waiting for the ticket.")

    answered = await run(runner, session, id_less_response("open_ticket", {"status": "done"}))

    assert summaries(answered) == [("a", ["Still waiting for the ticket."])]
    assert answered[0].invocation_id != parked[0].invocation_id
    assert shown(requests[-1]) == [("user", ["open one"]), ("model", [("call", "open_ticket")])]
    history = await stored(runner, session)
    assert [(e.author, e.invocation_id, summaries([e])[0][1]) for e in history[2:]] == [
        ("user", answered[0].invocation_id, [("response", "open_ticket", {"status": "done"})]),
        ("a", answered[0].invocation_id, ["Still waiting for the ticket."]),
    ]
    assert history[2].get_function_responses()[0].id is None
    call_id = parked[0].get_function_calls()[0].id
    fresh = await runner.session_service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert [c.id for c in pending_long_running_calls(fresh, parked[0].invocation_id)] == [call_id]


async def test_the_parked_call_still_resumes_its_invocation_when_answered_with_its_id_afterwards():
    runner, session, parked, requests = await parked_ticket_run("Still waiting.", "Ticket resolved.")
    await run(runner, session, id_less_response("open_ticket", {"status": "done"}))
    call_id = parked[0].get_function_calls()[0].id

    resumed = await run(runner, session, function_response(call_id, "open_ticket", {"status": "done"}))

    assert summaries(resumed) == [("a", ["Ticket resolved."])]
    assert resumed[0].invocation_id == parked[0].invocation_id
    assert shown(requests[-1]) == [
        ("user", ["open one"]),
        ("model", [("call", "open_ticket")]),
        ("user", [("response", "open_ticket", {"status": "done"})]),
    ]


# --- a callable object as a tool ---


class Lookup:
    async def __call__(self, query: str) -> dict:
        """Look a query up in the catalogue."""
        return {"found": query}


class DocumentedLookup:
    """Search the catalogue."""

    async def __call__(self, query: str) -> dict:
        """Look a query up in the catalogue."""
        return {"found": query}


class UndocumentedLookup:
    async def __call__(self, query: str) -> dict:
        return {"found": query}


@dataclass
class DataclassLookup:
    limit: int = 3

    async def __call__(self, query: str) -> dict:
        """Look a query up, at most ``limit`` hits."""
        return {"found": query}


@pytest.mark.parametrize(("tool_object", "description"), [
    (Lookup(), "Look a query up in the catalogue."),
    (DocumentedLookup(), "Search the catalogue."),  # ADK 2.13: the class docstring comes first
    (UndocumentedLookup(), ""),  # not Python's stock "Call self as a function."
    (DataclassLookup(), "Look a query up, at most ``limit`` hits."),  # not the signature @dataclass writes
])
def test_a_callable_object_is_described_by_its_class_docstring_else_by_its_call_docstring(tool_object, description):
    tool = FunctionTool(tool_object)

    declaration = tool._get_declaration()

    assert (tool.name, tool.description, declaration.name, declaration.description or "") == (
        type(tool_object).__name__, description, type(tool_object).__name__, description)


async def test_an_async_callable_object_runs_as_a_tool_given_in_the_agents_tool_list():
    model, requests = recording_model(call("Lookup", query="lamp"), "Found it.")
    runner = InMemoryRunner(agent=LlmAgent(name="a", model=model, tools=[Lookup()]), app_name="app")
    session = await new_session(runner)

    events = await run(runner, session, user_text("find a lamp"))

    assert summaries(events) == [
        ("a", [("call", "Lookup", {"query": "lamp"})]),
        ("a", [("response", "Lookup", {"found": "lamp"})]),
        ("a", ["Found it."]),
    ]
    assert [d.description for d in requests[0].config.tools[0].function_declarations] == [
        "Look a query up in the catalogue."]


# --- {artifact.name} when the artifact service hands back something other than a Part ---


class LooseArtifactService(InMemoryArtifactService):
    """An artifact service (a user's own, say) that returns stored values as they are, not as Parts."""

    def __init__(self, values: dict):
        super().__init__()
        self._values = values

    async def load_artifact(self, *, app_name, user_id, session_id, filename, version=None):
        return self._values.get(filename)


@pytest.mark.parametrize(("value", "text"), [
    ("plain words", "plain words"),
    ({"tone": "formal"}, "{'tone': 'formal'}"),
    (7, "7"),
    (types.Part(text="a part's text"), "a part's text"),
])
async def test_an_artifact_in_an_instruction_is_shown_as_its_text_or_else_its_string_form(value, text):
    model, requests = recording_model("ok")
    agent = LlmAgent(name="a", model=model, instruction="Style: {artifact.style}")
    runner = Runner(app_name="app", agent=agent, session_service=InMemorySessionService(),
                    artifact_service=LooseArtifactService({"style": value}))
    session = await new_session(runner)

    await run(runner, session, user_text("hi"))

    assert requests[0].config.system_instruction.split("\n\n")[0] == f"Style: {text}"


# --- runtime.agents.run_config.logger ---


@pytest.mark.parametrize("max_llm_calls", [0, -1])
def test_a_run_config_without_a_positive_llm_call_bound_warns_through_the_logger_at_adks_path(max_llm_calls):
    with patch("runtime.agents.run_config.logger") as logger:
        RunConfig(max_llm_calls=max_llm_calls)

    assert logger.warning.call_args_list == [((
        "max_llm_calls is less than or equal to 0. This will result in no enforcement on total number of llm "
        "calls that will be made for a run. This may not be ideal, as this could result in a never ending "
        "communication between the model and the agent in certain cases.",),)]


def test_a_run_config_with_a_positive_llm_call_bound_logs_nothing():
    with patch("runtime.agents.run_config.logger") as logger:
        RunConfig(max_llm_calls=10)

    assert logger.mock_calls == []


def test_the_run_config_module_at_adks_path_is_the_one_defining_run_config():
    import runtime.agents.run_config as at_adk_path
    import runtime.contexts.run_config as defining

    assert (at_adk_path is defining, at_adk_path.RunConfig is RunConfig, at_adk_path.logger.name) == (
        True, True, "runtime.agents.run_config")


# --- UI widgets ---


def chart(n: int) -> UiWidget:
    return UiWidget(id=f"chart-{n}", provider="mcp", payload={"resource_uri": f"ui://chart/{n}"})


async def show_chart(n: int, tool_context: ToolContext) -> dict:
    """Show a chart beside the answer."""
    tool_context.render_ui_widget(chart(n))
    return {"shown": n}


async def test_a_widget_a_tool_renders_travels_on_its_function_response_event():
    runner = InMemoryRunner(agent=LlmAgent(name="a", model=ScriptedLlm(turns=[call("show_chart", n=1), "Here."]),
                                           tools=[show_chart]), app_name="app")
    session = await new_session(runner)

    events = await run(runner, session, user_text("chart"))

    assert [e.actions.render_ui_widgets for e in events] == [None, [chart(1)], None]
    assert (await stored(runner, session))[2].actions.render_ui_widgets == [chart(1)]


async def test_widgets_of_parallel_calls_are_joined_in_call_order_on_the_merged_response():
    turns = [[call("show_chart", n=1), call("show_chart", n=2)], "Here."]
    runner = InMemoryRunner(agent=LlmAgent(name="a", model=ScriptedLlm(turns=turns), tools=[show_chart]),
                            app_name="app")
    session = await new_session(runner)

    events = await run(runner, session, user_text("two charts"))

    assert events[1].actions.model_dump(mode="json", by_alias=True, exclude_none=True) == {
        "stateDelta": {}, "artifactDelta": {}, "requestedAuthConfigs": {}, "requestedToolConfirmations": {},
        "renderUiWidgets": [
            {"id": "chart-1", "provider": "mcp", "payload": {"resource_uri": "ui://chart/1"}},
            {"id": "chart-2", "provider": "mcp", "payload": {"resource_uri": "ui://chart/2"}},
        ],
    }


async def test_rendering_a_second_widget_with_the_same_id_is_refused_naming_the_id():
    actions = EventActions()
    runner = InMemoryRunner(agent=LlmAgent(name="a", model=ScriptedLlm(turns=["x"])), app_name="app")
    session = await new_session(runner)
    ctx = InvocationContext(invocation_id="e-1", agent=runner.agent, session=session,
                            session_service=runner.session_service)
    tool_context = ToolContext(ctx, function_call_id="c-1", event_actions=actions)
    tool_context.render_ui_widget(chart(1))

    with pytest.raises(ValueError) as raised:
        tool_context.render_ui_widget(UiWidget(id="chart-1", provider="other"))

    assert str(raised.value) == "UI widget with ID 'chart-1' already exists in the current event actions."
    assert actions.render_ui_widgets == [chart(1)]


def test_a_ui_widget_reads_camel_or_snake_case_and_refuses_unknown_fields():
    assert UiWidget.model_validate({"id": "w", "provider": "mcp"}) == UiWidget(id="w", provider="mcp", payload={})
    with pytest.raises(ValueError):
        UiWidget(id="w", provider="mcp", size="large")
    assert EventActions.model_validate({"renderUiWidgets": [{"id": "w", "provider": "mcp"}]}).render_ui_widgets == [
        UiWidget(id="w", provider="mcp")]


# --- names google-adk 2.13 exports that agentq does not provide yet ---


@pytest.mark.parametrize(("module", "name"), [
    ("runtime.agents", "LiveRequestQueue"),
    ("runtime.agents", "Context"),
    ("runtime.agents", "LlmAgentConfig"),
    ("runtime.tools", "google_search"),
    ("runtime.tools", "McpToolset"),
    ("runtime.sessions", "DatabaseSessionService"),
    ("runtime.models", "LiteLlm"),
    ("runtime.artifacts", "GcsArtifactService"),
    ("runtime.plugins", "ReflectAndRetryToolPlugin"),
])
def test_importing_a_name_adk_exports_and_agentq_lacks_fails_naming_it(module, name):
    with pytest.raises(ImportError) as raised:
        exec(f"from {module} import {name}", {})

    adk_module = module.replace("runtime", "google.adk", 1)
    assert (type(raised.value), str(raised.value)) == (
        NotSupportedYetError,
        f"cannot import name {name!r} from {module!r}: {adk_module}.{name} is not supported by agentq yet",
    )


def test_names_nobody_exports_stay_plain_attribute_errors_and_the_supported_names_still_import():
    agents = importlib.import_module("runtime.agents")
    from runtime.agents import Agent, BaseAgent, LoopAgent, ParallelAgent, SequentialAgent  # noqa: F401
    from runtime.models import Gemini  # noqa: F401
    from runtime.sessions import RedisSessionService  # noqa: F401
    from runtime.tools import AgentTool  # noqa: F401

    assert (hasattr(agents, "NoSuchThing"), getattr(agents, "NoSuchThing", "absent")) == (False, "absent")


async def test_an_answer_without_an_id_sent_to_a_named_invocation_is_refused_as_adk_does():
    from google.genai import types

    from runtime.agents import LlmAgent
    from runtime.errors import InvalidMessageError
    from runtime.models import ScriptedLlm
    from runtime.runners import InMemoryRunner

    runner = InMemoryRunner(agent=LlmAgent(name="a", model=ScriptedLlm(responses=["hi"])), app_name="app")
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    answer = types.Content(role="user", parts=[types.Part(function_response=types.FunctionResponse(
        name="ask", response={"ok": True}))])
    with pytest.raises(InvalidMessageError, match="Function response id is required to resume an invocation."):
        async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=answer,
                                        invocation_id="e-1"):
            pass
    stored = await runner.session_service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert stored.events == []
