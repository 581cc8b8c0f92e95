"""Runner.rewind_async: state, artifacts, the model's view and the next turn's agent as before the invocation.

The expected values are what google-adk 2.13 gives for the same scenario (``bench/adk_side/rewind_scenario.py``,
run with bench/.adk-venv's python): the scenario below is that script's, step for step.
"""

from __future__ import annotations

import pytest
from google.genai import types

from runtime.agents import LlmAgent
from runtime.artifacts import InMemoryArtifactService
from runtime.artifacts.rewind_tombstone import is_rewind_tombstone, rewind_tombstone
from runtime.errors import FunctionCallNotFoundError, InvocationNotFoundError
from runtime.events import Event, EventActions
from runtime.events.rewinds import live_events
from runtime.flows.contents import build_contents
from runtime.flows.contents_cache import ContentsCache
from runtime.models import ScriptedLlm, call
from runtime.runners import InMemoryRunner, Runner
from runtime.sessions import InMemorySessionService
from runtime.tools import LongRunningFunctionTool, ToolContext

from .helpers import USER, function_response, user_text

STATE_BEFORE_REWIND = {"app:hits": 2, "base": 1, "count": 2, "extra": "added in two", "user:seen": 2}
# ADK 2.13 sets every session key no event before the invocation set to None, `base` (given to create_session,
# so recorded by no event) included; app: and user: keys stay as they are.
STATE_AFTER_REWIND = {"app:hits": 2, "base": None, "count": 1, "extra": None, "user:seen": 2}
REWIND_ACTIONS = {
    "stateDelta": {"count": 1, "base": None, "extra": None},
    "artifactDelta": {"notes.txt": 2, "later.txt": 1},
    "requestedAuthConfigs": {},
    "requestedToolConfirmations": {},
    "rewindBeforeInvocationId": "<second>",
}
ARTIFACTS_AFTER_REWIND = {
    "keys": ["later.txt", "notes.txt", "user:profile.txt"],
    "notes.txt": {"latest": "notes one", "versions": [0, 1, 2], 1: "notes two"},
    "later.txt": {"latest": None, "versions": [0, 1], 0: "later", 1: None},
    "user:profile.txt": {"latest": "profile two"},
}
MODEL_CALLS_OF_THIRD_TURN = [
    ("root", ["user: one", "model: call note", "user: response note", "model: root done one", "user: three"]),
]


class Scenario:
    """Root (with a `note` tool) and its sub-agent helper, each answering from a queue of replies and noting
    what every model call was shown."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[str]]] = []
        helper = LlmAgent(name="helper", model=self._model("helper", [
            call("note", value="two"), "helper done two", "helper three"]), tools=[note])
        self.root = LlmAgent(name="root", model=self._model("root", [
            call("note", value="one"), "root done one", call("transfer_to_agent", agent_name="helper"),
            "root three"]), tools=[note], sub_agents=[helper])

    def _model(self, name: str, replies: list) -> ScriptedLlm:
        def respond(request):
            self.calls.append((name, [_said(content) for content in request.contents]))
            return replies.pop(0)

        return ScriptedLlm(responder=respond)


def _said(content: types.Content) -> str:
    part = content.parts[0]
    if part.text is not None:
        return f"{content.role}: {part.text}"
    if part.function_call:
        return f"{content.role}: call {part.function_call.name}"
    return f"{content.role}: response {part.function_response.name}"


async def note(value: str, tool_context: ToolContext) -> dict:
    """Writes state of every scope and saves artifacts."""
    state = tool_context.state
    state["count"] = state.get("count", 0) + 1
    state["app:hits"] = state.get("app:hits", 0) + 1
    state["user:seen"] = state.get("user:seen", 0) + 1
    if value == "two":
        state["extra"] = "added in two"
        await tool_context.save_artifact("later.txt", types.Part(text="later"))
    await tool_context.save_artifact("notes.txt", types.Part(text=f"notes {value}"))
    await tool_context.save_artifact("user:profile.txt", types.Part(text=f"profile {value}"))
    return {"ok": value}


async def turn(runner, session_id: str, message: str | types.Content) -> list[Event]:
    """Every event of one turn; a str is sent as a user's text."""
    message = user_text(message) if isinstance(message, str) else message
    return [event async for event in runner.run_async(user_id=USER, session_id=session_id, new_message=message)]


async def read(runner, session_id: str):
    return await runner.session_service.get_session(app_name=runner.app_name, user_id=USER, session_id=session_id)


async def artifacts_of(runner, session_id: str) -> dict:
    """What ADK's script prints of the artifacts, in the same shape."""
    service = runner.artifact_service
    where = {"app_name": runner.app_name, "user_id": USER, "session_id": session_id}

    async def load(filename, version=None):
        part = await service.load_artifact(**where, filename=filename, version=version)
        return None if part is None else part.text

    return {
        "keys": await service.list_artifact_keys(**where),
        "notes.txt": {"latest": await load("notes.txt"),
                      "versions": await service.list_versions(**where, filename="notes.txt"),
                      1: await load("notes.txt", 1)},
        "later.txt": {"latest": await load("later.txt"),
                      "versions": await service.list_versions(**where, filename="later.txt"),
                      0: await load("later.txt", 0), 1: await load("later.txt", 1)},
        "user:profile.txt": {"latest": await load("user:profile.txt")},
    }


async def run_scenario(runner, scenario: Scenario) -> dict:
    """Two turns, a rewind to before the second, a third turn: everything ADK's script observes."""
    session = await runner.session_service.create_session(app_name=runner.app_name, user_id=USER,
                                                          state={"base": 1})
    first = await turn(runner, session.id, "one")
    second = await turn(runner, session.id, "two")
    before = await read(runner, session.id)
    await runner.rewind_async(user_id=USER, session_id=session.id,
                              rewind_before_invocation_id=second[0].invocation_id)
    after = await read(runner, session.id)
    rewind = after.events[-1]
    calls_before_third = len(scenario.calls)
    third = await turn(runner, session.id, "three")
    actions = rewind.actions.model_dump(mode="json", by_alias=True, exclude_none=True)
    actions["rewindBeforeInvocationId"] = actions["rewindBeforeInvocationId"].replace(
        second[0].invocation_id, "<second>")
    return {
        "state_before_rewind": before.state,
        "state_after_rewind": after.state,
        "rewind_author": rewind.author,
        "rewind_invocation_is_new": rewind.invocation_id.startswith("e-") and rewind.invocation_id not in (
            first[0].invocation_id, second[0].invocation_id),
        "rewind_actions": actions,
        "events_after_rewind": len(after.events),
        "third_authors": [event.author for event in third],
        "model_calls_of_third_turn": scenario.calls[calls_before_third:],
        "artifacts": await artifacts_of(runner, session.id),
        "state_after_third_turn": (await read(runner, session.id)).state,
    }


ADK_OBSERVED = {
    "state_before_rewind": STATE_BEFORE_REWIND,
    "state_after_rewind": STATE_AFTER_REWIND,
    "rewind_author": "user",
    "rewind_invocation_is_new": True,
    "rewind_actions": REWIND_ACTIONS,
    "events_after_rewind": 11,
    "third_authors": ["root"],
    "model_calls_of_third_turn": MODEL_CALLS_OF_THIRD_TURN,
    "artifacts": ARTIFACTS_AFTER_REWIND,
    "state_after_third_turn": STATE_AFTER_REWIND,
}


async def test_an_in_memory_runner_rewinds_as_adk_does():
    scenario = Scenario()
    runner = InMemoryRunner(agent=scenario.root, app_name="app")
    assert await run_scenario(runner, scenario) == ADK_OBSERVED


async def test_a_runner_on_redis_rewinds_as_adk_does_and_a_fresh_service_reads_the_same(redis_url):
    from runtime.artifacts import RedisArtifactService
    from runtime.sessions import RedisSessionService

    scenario = Scenario()
    # a history cache: the model contents built in the second turn are kept for the third, and must not
    # show it the rewound turn
    service = RedisSessionService(redis_url, history_cache_bytes=1 << 24)
    artifacts = RedisArtifactService(redis_url)
    runner = Runner(app_name="app", agent=scenario.root, session_service=service, artifact_service=artifacts)
    observed = await run_scenario(runner, scenario)
    assert observed == ADK_OBSERVED
    reader = RedisSessionService(redis_url)
    sessions = await reader.list_sessions(app_name="app", user_id=USER)
    stored = await reader.get_session(app_name="app", user_id=USER, session_id=sessions.sessions[0].id)
    assert stored.state == STATE_AFTER_REWIND
    assert [e.author for e in live_events(stored.events)] == ["user", "root", "root", "root", "user", "root"]
    await service.aclose()
    await reader.aclose()
    await artifacts.aclose()


async def test_rewinding_to_an_invocation_the_session_does_not_have_raises_invocation_not_found():
    runner = InMemoryRunner(agent=Scenario().root, app_name="app")
    session = await runner.session_service.create_session(app_name="app", user_id=USER)
    await turn(runner, session.id, "one")
    with pytest.raises(InvocationNotFoundError) as raised:
        await runner.rewind_async(user_id=USER, session_id=session.id, rewind_before_invocation_id="e-nope")
    assert str(raised.value) == "Invocation ID not found: e-nope"
    assert len((await read(runner, session.id)).events) == 4  # nothing was committed


async def test_rewinding_before_the_first_invocation_sets_every_session_key_to_none():
    runner = InMemoryRunner(agent=Scenario().root, app_name="app")
    session = await runner.session_service.create_session(app_name="app", user_id=USER, state={"base": 1})
    first = await turn(runner, session.id, "one")
    await runner.rewind_async(user_id=USER, session_id=session.id, rewind_before_invocation_id=first[0].invocation_id)
    after = await read(runner, session.id)
    assert after.state == {"base": None, "count": None, "app:hits": 1, "user:seen": 1}
    assert live_events(after.events) == []
    assert await runner.artifact_service.load_artifact(app_name="app", user_id=USER, session_id=session.id,
                                                       filename="notes.txt") is None


async def test_without_an_artifact_service_only_state_is_put_back():
    scenario = Scenario()
    runner = Runner(app_name="app", agent=scenario.root, session_service=InMemorySessionService(),
                    artifact_service=InMemoryArtifactService())
    session = await runner.session_service.create_session(app_name="app", user_id=USER)
    await turn(runner, session.id, "one")
    second = await turn(runner, session.id, "two")
    runner.artifact_service = None
    await runner.rewind_async(user_id=USER, session_id=session.id,
                              rewind_before_invocation_id=second[0].invocation_id)
    rewind = (await read(runner, session.id)).events[-1]
    assert (rewind.actions.state_delta, rewind.actions.artifact_delta) == ({"count": 1, "extra": None}, {})


def _event(invocation_id: str, text: str | None = None, rewind_to: str | None = None) -> Event:
    content = types.Content(role="user", parts=[types.Part(text=text)]) if text else None
    return Event(invocation_id=invocation_id, author="user", content=content,
                 actions=EventActions(rewind_before_invocation_id=rewind_to))


def test_a_rewind_leaves_out_the_invocation_and_everything_after_its_first_event_itself_included():
    events = [_event("a", "1"), _event("b", "2"), _event("c", "3"), _event("b", "4"), _event("r", rewind_to="b"),
              _event("d", "5")]
    assert [e.content.parts[0].text for e in live_events(events)] == ["1", "5"]


def test_a_later_rewind_can_take_back_a_range_that_holds_an_earlier_rewind():
    events = [_event("a", "1"), _event("b", "2"), _event("r1", rewind_to="b"), _event("c", "3"),
              _event("r2", rewind_to="a")]
    assert live_events(events) == []


def test_a_rewind_to_an_invocation_that_is_not_before_it_leaves_out_only_itself():
    events = [_event("a", "1"), _event("r", rewind_to="nowhere"), _event("b", "2")]
    assert [e.content.parts[0].text for e in live_events(events)] == ["1", "2"]


def test_a_history_without_rewinds_is_returned_as_it_is():
    events = [_event("a", "1")]
    assert live_events(events) is events


def test_contents_built_before_a_rewind_are_rebuilt_without_the_rewound_events():
    events = [_event("a", "one"), _event("b", "two")]
    cache = ContentsCache("root", None)
    assert [c.parts[0].text for c in cache.build(events)] == ["one", "two"]
    events += [_event("r", rewind_to="b"), _event("c", "three")]
    assert [c.parts[0].text for c in cache.build(events)] == ["one", "three"]
    assert build_contents(events, "root", None) == cache.build(events)


def test_the_rewind_marker_loads_as_absent_and_other_empty_parts_do_not():
    assert (is_rewind_tombstone(rewind_tombstone()), is_rewind_tombstone(types.Part(text=""))) == (True, False)


def test_the_rewind_field_is_camel_case_on_the_wire_and_read_back_from_either_spelling():
    wire = EventActions(rewind_before_invocation_id="e-1").model_dump(mode="json", by_alias=True, exclude_none=True)
    assert wire["rewindBeforeInvocationId"] == "e-1"
    assert EventActions.model_validate({"rewind_before_invocation_id": "e-2"}).rewind_before_invocation_id == "e-2"


def approve(what: str) -> None:
    """Ask a human to approve."""


async def test_a_long_running_call_of_a_rewound_invocation_can_no_longer_be_answered():
    agent = LlmAgent(name="root", model=ScriptedLlm(turns=[call("approve", what="x")]),
                     tools=[LongRunningFunctionTool(approve)])
    runner = InMemoryRunner(agent=agent, app_name="app")
    session = await runner.session_service.create_session(app_name="app", user_id=USER)
    parked = await turn(runner, session.id, "go")
    call_id = parked[-1].get_function_calls()[0].id
    await runner.rewind_async(user_id=USER, session_id=session.id,
                              rewind_before_invocation_id=parked[0].invocation_id)
    with pytest.raises(FunctionCallNotFoundError) as raised:
        await turn(runner, session.id, function_response(call_id, "approve", {"ok": True}))
    assert str(raised.value) == (
        f"Function call not found for function response ids: {{{call_id!r}}}. Ensure each function response ID "
        "matches an existing function call in the session history.")
