"""Plugins: every callback in ADK's order, their short-circuit rules, the whole tree, App and Runner wiring."""

from __future__ import annotations

import logging

import pytest
from google.genai import types

from runtime.agents import LlmAgent, SequentialAgent
from runtime.apps import App
from runtime.errors import ModelError
from runtime.events import Event
from runtime.models import LlmResponse, ScriptedLlm, call
from runtime.plugins import BasePlugin, LoggingPlugin, PluginManager
from runtime.runners import InMemoryRunner, Runner
from runtime.sessions import InMemorySessionService
from runtime.tools import AgentTool

from .helpers import new_session, run, stored, summaries, user_text


def get_weather(city: str) -> dict:
    """The weather in a city."""
    return {"city": city, "sky": "sunny"}


def weather_agent(name: str = "a", **kwargs) -> LlmAgent:
    """An agent that calls get_weather once, then answers."""
    return LlmAgent(name=name, model=ScriptedLlm(turns=[call("get_weather", city="Paris"), "It is sunny."]),
                    tools=[get_weather], **kwargs)


def text(message: str, role: str = "model") -> types.Content:
    return types.Content(role=role, parts=[types.Part(text=message)])


class Recorder(BasePlugin):
    """Notes each callback it gets as 'callback:detail' and changes nothing."""

    def __init__(self, name: str = "recorder", log: list[str] | None = None):
        super().__init__(name)
        self.log = [] if log is None else log

    async def on_user_message_callback(self, *, invocation_context, user_message):
        self.log.append(f"on_user_message:{user_message.parts[0].text}")

    async def before_run_callback(self, *, invocation_context):
        self.log.append(f"before_run:{invocation_context.agent.name}")

    async def on_event_callback(self, *, invocation_context, event):
        kind = "call" if event.get_function_calls() else "response" if event.get_function_responses() else "text"
        self.log.append(f"on_event:{event.author}:{kind}")

    async def after_run_callback(self, *, invocation_context):
        self.log.append("after_run")

    async def on_run_error_callback(self, *, invocation_context, error):
        self.log.append(f"on_run_error:{error!r}")

    async def before_agent_callback(self, *, agent, callback_context):
        self.log.append(f"before_agent:{agent.name}")

    async def after_agent_callback(self, *, agent, callback_context):
        self.log.append(f"after_agent:{agent.name}")

    async def on_agent_error_callback(self, *, agent, callback_context, error):
        self.log.append(f"on_agent_error:{agent.name}:{error!r}")

    async def before_model_callback(self, *, callback_context, llm_request):
        self.log.append(f"before_model:{callback_context.agent_name}")

    async def after_model_callback(self, *, callback_context, llm_response):
        self.log.append(f"after_model:{callback_context.agent_name}")

    async def on_model_error_callback(self, *, callback_context, llm_request, error):
        self.log.append(f"on_model_error:{error}")

    async def before_tool_callback(self, *, tool, tool_args, tool_context):
        self.log.append(f"before_tool:{tool.name}:{tool_args}")

    async def after_tool_callback(self, *, tool, tool_args, tool_context, result):
        self.log.append(f"after_tool:{tool.name}:{result}")

    async def on_tool_error_callback(self, *, tool, tool_args, tool_context, error):
        self.log.append(f"on_tool_error:{tool.name}:{error!r}")


class Answering(BasePlugin):
    """Returns ``answers[callback]`` from that callback (None for the others)."""

    def __init__(self, name: str = "answering", **answers):
        super().__init__(name)
        self.answers = answers

    async def on_user_message_callback(self, **kwargs):
        return self.answers.get("on_user_message")

    async def before_run_callback(self, **kwargs):
        return self.answers.get("before_run")

    async def on_event_callback(self, **kwargs):
        return self.answers.get("on_event")

    async def before_agent_callback(self, **kwargs):
        return self.answers.get("before_agent")

    async def after_agent_callback(self, **kwargs):
        return self.answers.get("after_agent")

    async def before_model_callback(self, **kwargs):
        return self.answers.get("before_model")

    async def after_model_callback(self, **kwargs):
        return self.answers.get("after_model")

    async def on_model_error_callback(self, **kwargs):
        return self.answers.get("on_model_error")

    async def before_tool_callback(self, **kwargs):
        return self.answers.get("before_tool")

    async def after_tool_callback(self, **kwargs):
        return self.answers.get("after_tool")

    async def on_tool_error_callback(self, **kwargs):
        return self.answers.get("on_tool_error")


async def _run(agent, *plugins, message="hi"):
    runner = InMemoryRunner(agent, app_name="app", plugins=list(plugins))
    session = await new_session(runner)
    events = await run(runner, session, user_text(message))
    return events, await stored(runner, session)


# --- order -------------------------------------------------------------------------------------------


async def test_every_callback_runs_once_per_step_in_adk_order():
    recorder = Recorder()
    await _run(weather_agent(), recorder)
    assert recorder.log == [
        "on_user_message:hi", "before_run:a", "before_agent:a",
        "before_model:a", "after_model:a", "on_event:a:call",
        "before_tool:get_weather:{'city': 'Paris'}", "after_tool:get_weather:{'city': 'Paris', 'sky': 'sunny'}",
        "on_event:a:response",
        "before_model:a", "after_model:a", "on_event:a:text",
        "after_agent:a", "after_run",
    ]


async def test_plugins_run_in_order_before_the_agents_callbacks_and_the_first_answer_skips_the_rest():
    log: list[str] = []

    def agent_callback(tool, args, tool_context):
        log.append("agent_before_tool")

    agent = weather_agent(before_tool_callback=agent_callback)
    events, _ = await _run(agent, Recorder("first", log), Answering("second", before_tool={"blocked": True}),
                           Recorder("third", log))
    # the third plugin and the agent's callback never see the call; the after-tool callbacks see its answer
    assert [entry for entry in log if "tool" in entry] == [
        "before_tool:get_weather:{'city': 'Paris'}",
        "after_tool:get_weather:{'blocked': True}", "after_tool:get_weather:{'blocked': True}"]
    assert summaries(events)[1] == ("a", [("response", "get_weather", {"blocked": True})])


async def test_the_agents_own_callback_runs_when_no_plugin_answers():
    def agent_callback(tool, args, tool_context):
        return {"from": "agent"}

    events, _ = await _run(weather_agent(before_tool_callback=agent_callback), Answering())
    assert summaries(events)[1] == ("a", [("response", "get_weather", {"from": "agent"})])


async def test_plugins_run_for_every_agent_of_the_tree():
    recorder = Recorder()
    tree = SequentialAgent(name="steps", sub_agents=[
        LlmAgent(name="one", model=ScriptedLlm(turns=["first"])),
        LlmAgent(name="two", model=ScriptedLlm(turns=["second"])),
    ])
    await _run(tree, recorder)
    assert [e for e in recorder.log if e.split(":")[0] in ("before_agent", "after_agent", "before_model")] == [
        "before_agent:steps", "before_agent:one", "before_model:one", "after_agent:one",
        "before_agent:two", "before_model:two", "after_agent:two", "after_agent:steps",
    ]


async def test_an_agent_tool_runs_the_callers_plugins_unless_told_not_to():
    for include, expected in ((True, ["before_model:inner"]), (False, [])):
        recorder = Recorder()
        inner = LlmAgent(name="inner", model=ScriptedLlm(turns=["inner answer"]))
        outer = LlmAgent(name="outer", model=ScriptedLlm(turns=[call("inner", request="q"), "done"]),
                         tools=[AgentTool(inner, include_plugins=include)])
        await _run(outer, recorder)
        assert [e for e in recorder.log if e == "before_model:inner"] == expected


# --- the run's callbacks ------------------------------------------------------------------------------


async def test_on_user_message_returning_content_replaces_the_message_the_agent_sees():
    seen = []

    def responder(request):
        seen.append(request.contents[-1].parts[0].text)
        return "ok"

    agent = LlmAgent(name="a", model=ScriptedLlm(responder=responder))
    _, history = await _run(agent, Answering(on_user_message=text("[redacted]", role="user")), message="my pin")
    assert seen == ["[redacted]"]
    assert summaries(history) == [("user", ["[redacted]"]), ("a", ["ok"])]


async def test_a_redelivered_message_is_not_shown_to_the_plugins_or_committed_again():
    log: list[str] = []

    class Redact(Recorder):
        async def on_user_message_callback(self, *, invocation_context, user_message):
            self.log.append("on_user_message")
            return text("[redacted]", role="user")

    runner = InMemoryRunner(LlmAgent(name="a", model=ScriptedLlm(turns=["ok"])), app_name="app",
                            plugins=[Redact(log=log)])
    session = await new_session(runner)
    for _ in range(2):  # the second run is a worker's retry of the same request
        await run(runner, session, user_text("my pin"), invocation_id="e-1")
    assert log.count("on_user_message") == 1
    assert summaries(await stored(runner, session)) == [("user", ["[redacted]"]), ("a", ["ok"])]


async def test_before_run_returning_content_ends_the_run_with_that_content_as_its_event():
    recorder = Recorder()
    events, history = await _run(weather_agent(), Answering(before_run=text("closed today")), recorder)
    assert [(e.author, e.content, e.invocation_id) for e in events] == [
        ("model", text("closed today"), history[0].invocation_id)]
    assert history[1:] == events
    assert recorder.log == ["on_user_message:hi", "on_event:model:text", "after_run"]


async def test_on_event_returning_an_event_replaces_the_fields_it_set_and_keeps_the_identity():
    class Stamp(BasePlugin):
        async def on_event_callback(self, *, invocation_context, event):
            if not event.get_function_calls() and not event.get_function_responses():
                return Event(id="other", invocation_id="other", author="", custom_metadata={"audited": True},
                             content=text("[checked] " + event.content.parts[0].text))

    events, history = await _run(weather_agent(), Stamp("stamp"))
    final = events[-1]
    assert (final.author, final.content, final.custom_metadata) == (
        "a", text("[checked] It is sunny."), {"audited": True})
    assert final.invocation_id == events[0].invocation_id and final.id != "other"
    assert history[-1] == final


async def test_after_run_is_skipped_and_errors_are_reported_when_an_agent_raises():
    recorder = Recorder()

    def broken(callback_context):
        raise ValueError("bad callback")

    with pytest.raises(ValueError, match="bad callback"):
        await _run(LlmAgent(name="a", model=ScriptedLlm(turns=["x"]), before_agent_callback=broken), recorder)
    assert recorder.log == [
        "on_user_message:hi", "before_run:a", "before_agent:a",
        "on_agent_error:a:ValueError('bad callback')", "on_event:a:text", "on_run_error:ValueError('bad callback')",
    ]


# --- agents -------------------------------------------------------------------------------------------


async def test_before_agent_returning_content_skips_the_agent_and_its_own_callbacks():
    called = []
    agent = weather_agent(before_agent_callback=lambda callback_context: called.append("agent"))
    events, _ = await _run(agent, Answering(before_agent=text("not today")))
    assert (summaries(events), called) == ([("a", ["not today"])], [])


async def test_after_agent_returning_content_adds_the_agents_final_event():
    events, _ = await _run(LlmAgent(name="a", model=ScriptedLlm(turns=["answer"])),
                           Answering(after_agent=text("and goodbye")))
    assert summaries(events) == [("a", ["answer"]), ("a", ["and goodbye"])]


async def test_state_a_plugin_writes_in_an_agent_callback_is_committed():
    class Count(BasePlugin):
        async def before_agent_callback(self, *, agent, callback_context):
            callback_context.state["runs"] = callback_context.state.get("runs", 0) + 1

    runner = InMemoryRunner(LlmAgent(name="a", model=ScriptedLlm(turns=["ok"])), app_name="app",
                            plugins=[Count("count")])
    session = await new_session(runner)
    await run(runner, session, user_text("hi"))
    fresh = await runner.session_service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert fresh.state == {"runs": 1}


# --- model calls --------------------------------------------------------------------------------------


async def test_before_model_returning_a_response_skips_the_model_and_the_agents_callback():
    called = []
    agent = LlmAgent(name="a", model=ScriptedLlm(turns=[]),
                     before_model_callback=lambda callback_context, llm_request: called.append("agent"))
    events, _ = await _run(agent, Answering(before_model=LlmResponse(content=text("cached"))))
    assert (summaries(events), called) == ([("a", ["cached"])], [])


async def test_after_model_returning_a_response_replaces_it():
    events, _ = await _run(LlmAgent(name="a", model=ScriptedLlm(turns=["raw"])),
                           Answering(after_model=LlmResponse(content=text("polished"))))
    assert summaries(events) == [("a", ["polished"])]


def _failing_model() -> ScriptedLlm:
    def responder(request):
        raise ModelError("backend down", code="503")

    return ScriptedLlm(responder=responder)


async def test_on_model_error_returning_a_response_replaces_the_error():
    recorder = Recorder()
    events, _ = await _run(LlmAgent(name="a", model=_failing_model()), recorder,
                           Answering(on_model_error=LlmResponse(content=text("try again later"))))
    assert summaries(events) == [("a", ["try again later"])]
    assert recorder.log[3:6] == ["before_model:a", "on_model_error:backend down", "after_model:a"]


async def test_a_model_error_no_plugin_answers_stays_an_error_event():
    events, _ = await _run(LlmAgent(name="a", model=_failing_model()), Answering())
    assert [(e.author, e.error_code, e.error_message) for e in events] == [("a", "503", "backend down")]


# --- tool calls ---------------------------------------------------------------------------------------


async def test_before_tool_returning_a_dict_skips_the_tool():
    ran = []

    def launch(target: str) -> dict:
        """Launch."""
        ran.append(target)
        return {"launched": target}

    agent = LlmAgent(name="a", model=ScriptedLlm(turns=[call("launch", target="moon"), "done"]), tools=[launch])
    events, _ = await _run(agent, Answering(before_tool={"error": "launch is not allowed"}))
    assert (summaries(events)[1], ran) == (("a", [("response", "launch", {"error": "launch is not allowed"})]), [])


async def test_after_tool_returning_a_dict_replaces_the_result():
    events, _ = await _run(weather_agent(), Answering(after_tool={"sky": "hidden"}))
    assert summaries(events)[1] == ("a", [("response", "get_weather", {"sky": "hidden"})])


def _crashing_agent() -> LlmAgent:
    def crash(x: int) -> dict:
        """Crash."""
        raise ValueError("kaput")

    return LlmAgent(name="a", model=ScriptedLlm(turns=[call("crash", x=1), "recovered"]), tools=[crash])


async def test_on_tool_error_returning_a_dict_becomes_the_result():
    recorder = Recorder()
    events, _ = await _run(_crashing_agent(), recorder, Answering(on_tool_error={"error": "crash failed"}))
    assert summaries(events)[1:] == [("a", [("response", "crash", {"error": "crash failed"})]), ("a", ["recovered"])]
    assert [e for e in recorder.log if "tool" in e] == [
        "before_tool:crash:{'x': 1}", "on_tool_error:crash:ValueError('kaput')",
        "after_tool:crash:{'error': 'crash failed'}"]


async def test_a_tool_error_no_plugin_answers_fails_the_run_with_an_error_event():
    events, _ = await _run(_crashing_agent(), Answering())
    assert [(e.error_code, e.error_message) for e in events[1:]] == [("ValueError", "kaput")]


async def test_a_plugin_that_raises_fails_the_step_with_an_error_naming_it():
    class Broken(BasePlugin):
        async def before_model_callback(self, *, callback_context, llm_request):
            raise KeyError("boom")

    with pytest.raises(RuntimeError):
        events = []
        runner = InMemoryRunner(LlmAgent(name="a", model=ScriptedLlm(turns=["x"])), app_name="app",
                                plugins=[Broken("broken")])
        session = await new_session(runner)
        async for event in runner.run_async(user_id="u", session_id=session.id, new_message=user_text("hi")):
            events.append(event)
    assert [(e.error_code, e.error_message) for e in events] == [
        ("RuntimeError", "Error in plugin 'broken' during 'before_model_callback' callback: 'boom'")]


# --- wiring -------------------------------------------------------------------------------------------


async def test_an_apps_plugins_run_through_a_runner_given_the_app():
    recorder = Recorder()
    app = App(name="app", root_agent=LlmAgent(name="a", model=ScriptedLlm(turns=["ok"])), plugins=[recorder])
    runner = Runner(app=app, session_service=InMemorySessionService())
    session = await new_session(runner)
    await run(runner, session, user_text("hi"))
    assert (runner.plugin_manager.plugins, recorder.log[:2]) == ([recorder], ["on_user_message:hi", "before_run:a"])


def test_plugins_are_given_either_in_the_app_or_to_the_runner_not_both():
    app = App(name="app", root_agent=LlmAgent(name="a", model=ScriptedLlm()))
    with pytest.raises(ValueError, match="When app is provided, plugins should not be provided"):
        Runner(app=app, session_service=InMemorySessionService(), plugins=[Recorder()])


def test_two_plugins_with_one_name_raise_a_value_error():
    agent = LlmAgent(name="a", model=ScriptedLlm())
    with pytest.raises(ValueError, match="^Plugin with name 'recorder' already registered.$"):
        InMemoryRunner(agent, app_name="app", plugins=[Recorder(), Answering("recorder")])
    app = App(name="app", root_agent=agent, plugins=[Recorder(), Recorder()])
    with pytest.raises(ValueError, match="^Plugin with name 'recorder' already registered.$"):
        InMemoryRunner(app=app)


def test_the_plugin_manager_finds_plugins_by_name_and_refuses_non_plugins():
    recorder = Recorder()
    manager = PluginManager(plugins=[recorder])
    assert (manager.get_plugin("recorder"), manager.get_plugin("nope")) == (recorder, None)
    with pytest.raises(ValueError, match="not a runtime.plugins.BasePlugin"):
        manager.register_plugin(object())


def test_an_adk_app_field_agentq_does_not_support_raises_naming_it():
    with pytest.raises(ValueError, match="^App field 'context_cache_config' is not supported by agentq yet"):
        App(name="app", root_agent=LlmAgent(name="a"), context_cache_config=object())


def test_an_unknown_app_field_raises_naming_it():
    with pytest.raises(ValueError, match="^App has no field 'plugin' "):
        App(name="app", root_agent=LlmAgent(name="a"), plugin=[])


async def test_closing_the_runner_closes_its_plugins():
    closed = []

    class Closing(BasePlugin):
        async def close(self):
            closed.append(self.name)

    runner = InMemoryRunner(LlmAgent(name="a"), app_name="app", plugins=[Closing("one"), Closing("two")])
    await runner.close()
    assert closed == ["one", "two"]


async def test_the_logging_plugin_logs_each_step_with_the_invocation_id(caplog):
    caplog.set_level(logging.INFO, logger="runtime.plugins.logging_plugin")
    events, _ = await _run(weather_agent(), LoggingPlugin())
    invocation = events[0].invocation_id
    assert [r.getMessage() for r in caplog.records] == [
        f"[logging_plugin] invocation {invocation}: {line}" for line in (
            "user message hi", "run starting agent=a", "agent a starting",
            "model request by a model=scripted tools=['get_weather']",
            "model response to a call get_weather({'city': 'Paris'})",
            "event by a call get_weather({'city': 'Paris'})",
            "tool get_weather called {'city': 'Paris'}",
            "tool get_weather returned {'city': 'Paris', 'sky': 'sunny'}",
            "event by a response get_weather: {'city': 'Paris', 'sky': 'sunny'}",
            "model request by a model=scripted tools=['get_weather']",
            "model response to a It is sunny.", "event by a It is sunny.",
            "agent a completed", "run completed",
        )]


async def test_the_plugin_audit_example_counts_calls_and_blocks_the_guarded_tool():
    from examples.plugin_audit import BALANCES, build_app, scripted_banker

    runner = InMemoryRunner(app=build_app(ScriptedLlm(responder=scripted_banker)))
    session = await new_session(runner)
    await run(runner, session, user_text("Close my checking account."))
    fresh = await runner.session_service.get_session(app_name=runner.app_name, user_id="u", session_id=session.id)
    assert summaries(fresh.events)[1:] == [
        ("banker", [("call", "close_account", {"account": "checking"})]),
        ("banker", [("response", "close_account",
                     {"error": "close_account is disabled by policy; ask a human operator"})]),
        ("banker", ["I could not do that: close_account is disabled by policy; ask a human operator."]),
    ]
    assert (fresh.state, "checking" in BALANCES) == ({"audit_model_calls": 2, "audit_tool_calls": 1}, True)
