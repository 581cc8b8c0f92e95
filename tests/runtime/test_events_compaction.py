"""Events compaction (ADK 2.x's ``EventsCompactionConfig``): older events summarised so the model request stays
bounded, while the history keeps every event. The expected requests are what google-adk 2.13 sends for the
same scenario (run side by side with bench/.adk-venv)."""

from __future__ import annotations

import pytest
from google.genai import types

from runtime.agents import LlmAgent, SequentialAgent
from runtime.apps import App, EventsCompactionConfig, ResumabilityConfig
from runtime.apps.llm_event_summarizer import LlmEventSummarizer
from runtime.errors import UsageError
from runtime.events import Event, EventActions
from runtime.events.event_actions import EventCompaction
from runtime.models import LlmRequest, ScriptedLlm, call
from runtime.runners import InMemoryRunner, Runner
from runtime.tools import LongRunningFunctionTool

from .helpers import USER, function_response, new_session, run, stored, summaries, user_text


def said(content: types.Content) -> str:
    """``role:text`` of a request content (calls and responses by tool name and payload)."""
    words = []
    for part in content.parts:
        if part.function_call:
            words.append(f"call {part.function_call.name}")
        elif part.function_response:
            words.append(f"resp {part.function_response.response}")
        else:
            words.append(part.text)
    return f"{content.role}:{'|'.join(words)}"


class Recorder:
    """A scripted agent model answering ``re:<last text>`` and a scripted summarizer answering ``S<n>``,
    recording what each was sent."""

    def __init__(self):
        self.requests: list[list[str]] = []
        self.summarized: list[str] = []

    def agent_model(self) -> ScriptedLlm:
        def answer(request: LlmRequest):
            self.requests.append([said(c) for c in request.contents])
            last = request.contents[-1].parts[0]
            if last.text == "approve please":
                return call("ask_approval", amount=5)
            if last.function_response:
                return f"got {last.function_response.response}"
            return f"re:{last.text}"

        return ScriptedLlm(responder=answer)

    def summarizer(self) -> LlmEventSummarizer:
        def summarize(request: LlmRequest):
            self.summarized.append(request.contents[0].parts[0].text.split("\n\n", 1)[1])
            return f"S{len(self.summarized)}"

        return LlmEventSummarizer(llm=ScriptedLlm(responder=summarize))


def compactions(events) -> list[tuple]:
    """(summary text, first and last summarised event as positions in ``events``) of each compaction event."""
    position = {event.timestamp: index for index, event in enumerate(events)}
    return [(c.compacted_content.parts[0].text, position.get(c.start_timestamp), position[c.end_timestamp])
            for c in (e.actions.compaction for e in events) if c is not None]


async def test_a_sliding_window_summarises_every_interval_invocations_overlapping_the_previous_one():
    recorder = Recorder()
    config = EventsCompactionConfig(compaction_interval=2, overlap_size=1, summarizer=recorder.summarizer())
    runner = InMemoryRunner(app=App(name="app", root_agent=LlmAgent(name="a", model=recorder.agent_model()),
                                    events_compaction_config=config))
    session = await new_session(runner)
    for index in range(6):
        await run(runner, session, user_text(f"m{index}"))

    assert recorder.requests == [
        ["user:m0"],
        ["user:m0", "model:re:m0", "user:m1"],
        ["model:S1", "user:m2"],
        ["model:S1", "user:m2", "model:re:m2", "user:m3"],
        ["model:S1", "model:S2", "user:m4"],  # S2 only overlaps S1: both stay
        ["model:S1", "model:S2", "user:m4", "model:re:m4", "user:m5"],
    ]
    history = await stored(runner, session)
    assert summaries(history) == [item for i in range(6) for item in (("user", [f"m{i}"]), ("a", [f"re:m{i}"]))]
    assert compactions(history) == [("S1", 0, 3), ("S2", 2, 8), ("S3", 7, 13)]
    assert [(e.author, e.content, e.invocation_id != "") for e in history if e.actions.compaction] == [
        ("user", None, True)] * 3
    assert recorder.summarized == [
        "user: m0\na: re:m0\nuser: m1\na: re:m1",
        "user: m1\na: re:m1\nuser: m2\na: re:m2\nuser: m3\na: re:m3",
        "user: m3\na: re:m3\nuser: m4\na: re:m4\nuser: m5\na: re:m5",
    ]


async def test_a_token_threshold_keeps_the_model_request_bounded_while_the_history_keeps_every_event():
    recorder = Recorder()
    config = EventsCompactionConfig(token_threshold=20, event_retention_size=2, summarizer=recorder.summarizer())
    runner = InMemoryRunner(app=App(name="app", root_agent=LlmAgent(name="a", model=recorder.agent_model()),
                                    events_compaction_config=config))
    session = await new_session(runner)
    messages = [f"message number {index} " * 2 for index in range(40)]
    for message in messages:
        await run(runner, session, user_text(message))

    # Before each model call the prompt is over the threshold: all but the last two events are summarised,
    # the previous summary with them, so each request is the newest summary, the last answer and the message.
    assert recorder.requests == [[f"user:{messages[0]}"]] + [
        [f"model:S{2 * index - 1}", f"model:re:{messages[index - 1]}", f"user:{messages[index]}"]
        for index in range(1, 40)
    ]
    history = await stored(runner, session)
    assert summaries(history) == [item for m in messages for item in (("user", [m]), ("a", [f"re:{m}"]))]
    assert len([e for e in history if e.actions.compaction]) == 78  # one before the model call, one after
    assert recorder.summarized[:3] == [f"user: {messages[0]}", f"model: S1\na: re:{messages[0]}",
                                       f"model: S2\nuser: {messages[1]}"]


def ask_approval(amount: int) -> dict:
    """Ask a person to approve the amount; the answer comes later."""
    return {"status": "pending"}


@pytest.mark.parametrize("resumable", [False, True])
async def test_a_resumed_invocation_after_compaction_sees_its_compacted_call_put_back_before_the_answer(resumable):
    recorder = Recorder()
    config = EventsCompactionConfig(compaction_interval=1, overlap_size=0, summarizer=recorder.summarizer())
    agent = LlmAgent(name="a", model=recorder.agent_model(), tools=[LongRunningFunctionTool(ask_approval)])
    runner = InMemoryRunner(app=App(name="app", root_agent=agent, events_compaction_config=config,
                                    resumability_config=ResumabilityConfig(is_resumable=resumable)))
    session = await new_session(runner)
    await run(runner, session, user_text("hello"))
    parked = await run(runner, session, user_text("approve please"))
    call_id = parked[0].get_function_calls()[0].id
    resumed = await run(runner, session, function_response(call_id, "ask_approval", {"status": "approved"}))

    assert recorder.requests == [
        ["user:hello"],
        ["model:S1", "user:approve please"],
        ["model:S1", "user:approve please", "model:call ask_approval", "user:resp {'status': 'pending'}"],
        # the call and its interim answer were summarised into S2; the final answer gets its call back
        ["model:S1", "model:S2", "model:call ask_approval", "user:resp {'status': 'approved'}"],
    ]
    assert {e.invocation_id for e in resumed} == {parked[0].invocation_id}
    history = await stored(runner, session)
    texts = [c[0] for c in compactions(history)]
    assert texts == ["S1", "S2", "S3"]
    assert recorder.summarized[2] == (
        "user: approve please\na called tool: ask_approval({'amount': 5})\n"
        "Tool response from ask_approval: {'status': 'pending'}\na: got {'status': 'pending'}\n"
        "Tool response from ask_approval: {'status': 'approved'}\na: got {'status': 'approved'}")


async def test_compaction_events_are_stored_and_streamed_and_a_fresh_runner_is_shown_the_summary(redis_url):
    import redis.asyncio as aioredis

    from runtime.redis_store.streams import read_stream
    from runtime.sessions import RedisSessionService

    def build(recorder: Recorder, history_cache_bytes: int = 0) -> Runner:
        config = EventsCompactionConfig(compaction_interval=2, overlap_size=0, summarizer=recorder.summarizer())
        app = App(name="app", root_agent=LlmAgent(name="a", model=recorder.agent_model()),
                  events_compaction_config=config)
        return Runner(app=app, session_service=RedisSessionService(redis_url, history_cache_bytes=history_cache_bytes))

    first, second = Recorder(), Recorder()
    runner = build(first, history_cache_bytes=1 << 20)  # as a worker: what it derives outlives an invocation
    session = await new_session(runner)
    await run(runner, session, user_text("m0"))
    await run(runner, session, user_text("m1"))
    fresh = build(second)  # another process: nothing shared but Redis
    await run(fresh, session, user_text("m2"))

    assert second.requests == [["model:S1", "user:m2"]]
    history = await stored(fresh, session)
    assert compactions(history) == [("S1", 0, 3)]
    summary_event = history[4]
    client = aioredis.Redis.from_url(redis_url, decode_responses=True)
    entries = await read_stream(client, "app", USER, session.id)
    assert [e.data for e in entries if e.invocation_id == summary_event.invocation_id] == [summary_event.to_json_dict()]
    await client.aclose()
    await runner.session_service.aclose()
    await fresh.session_service.aclose()


async def test_a_failing_summarizer_leaves_the_history_uncompacted_and_the_invocation_completes(caplog):
    def broken(request: LlmRequest):
        raise RuntimeError("summarizer down")

    config = EventsCompactionConfig(compaction_interval=1, overlap_size=0,
                                    summarizer=LlmEventSummarizer(llm=ScriptedLlm(responder=broken)))
    runner = InMemoryRunner(app=App(name="app", root_agent=LlmAgent(name="a", model=ScriptedLlm(turns=["hi"])),
                                    events_compaction_config=config))
    session = await new_session(runner)
    events = await run(runner, session, user_text("hello"))

    assert summaries(events) == [("a", ["hi"])]
    assert summaries(await stored(runner, session)) == [("user", ["hello"]), ("a", ["hi"])]
    assert [e.actions.compaction for e in await stored(runner, session)] == [None, None]
    assert "event compaction failed; continuing with the uncompacted history" in caplog.text


async def test_without_a_summarizer_the_root_agents_own_model_summarises():
    def answer(request: LlmRequest):
        text = request.contents[-1].parts[0].text
        return "the summary" if text.startswith("Below is a conversation") else f"re:{text}"

    config = EventsCompactionConfig(compaction_interval=1, overlap_size=0)
    agent = LlmAgent(name="a", model=ScriptedLlm(responder=answer))
    runner = InMemoryRunner(app=App(name="app", root_agent=agent, events_compaction_config=config))
    session = await new_session(runner)
    await run(runner, session, user_text("hello"))

    history = await stored(runner, session)
    assert compactions(history) == [("the summary", 0, 1)]
    assert isinstance(config.summarizer, LlmEventSummarizer)


async def test_a_workflow_root_without_a_summarizer_is_refused_once_a_summary_is_due():
    config = EventsCompactionConfig(compaction_interval=1, overlap_size=0)
    root = SequentialAgent(name="seq", sub_agents=[LlmAgent(name="a", model=ScriptedLlm(turns=["hi"]))])
    runner = InMemoryRunner(app=App(name="app", root_agent=root, events_compaction_config=config))
    session = await new_session(runner)
    with pytest.raises(UsageError, match="^events compaction needs a summarizer: agent 'seq' is not an LlmAgent"):
        await run(runner, session, user_text("hello"))


def test_events_compaction_config_needs_a_whole_trigger_pair():
    def error(**fields) -> str:
        with pytest.raises(ValueError) as raised:
            EventsCompactionConfig(**fields)
        return raised.value.errors()[0]["msg"]

    assert [error(token_threshold=10), error(compaction_interval=2), error()] == [
        "Value error, token_threshold and event_retention_size must be set together.",
        "Value error, compaction_interval and overlap_size must be set together.",
        "Value error, At least one compaction trigger must be configured: the token-threshold pair "
        "(token_threshold, event_retention_size) or the sliding-window pair (compaction_interval, overlap_size).",
    ]


def test_events_compaction_config_is_importable_where_adk_has_it():
    from runtime.apps import app

    config = EventsCompactionConfig(compaction_interval=3, overlap_size=1)
    assert app.EventsCompactionConfig is EventsCompactionConfig
    assert App(name="app", root_agent=LlmAgent(name="a"), events_compaction_config=config
               ).events_compaction_config is config
    assert InMemoryRunner(app=App(name="app", root_agent=LlmAgent(name="a"), events_compaction_config=config)
                          ).events_compaction_config is config


async def test_the_llm_summarizer_writes_out_the_events_and_makes_the_answer_a_compaction_event():
    sent = []

    def summarize(request: LlmRequest):
        sent.append(request.contents)
        return types.Content(role="assistant", parts=[types.Part(text="short")])

    def event(author, *parts, at, **fields):
        return Event(author=author, timestamp=at, content=types.Content(role="model", parts=list(parts)), **fields)

    events = [
        event("user", types.Part(text="hi"), at=1.0),
        event("a", types.Part(text="pondering", thought=True), types.Part(function_call=types.FunctionCall(
            name="lookup", args={"q": "x" * 2005})), at=2.0),
        event("a", types.Part(function_response=types.FunctionResponse(name="lookup", response={"ok": 1})), at=3.0),
        event("a", types.Part(function_call=types.FunctionCall(name="adk_request_credential", args={})), at=4.0),
        event("a", types.Part(text="old summary thought", thought=True), types.Part(text="old summary"), at=5.0,
              actions=EventActions(compaction=EventCompaction(start_timestamp=0, end_timestamp=0,
                                                              compacted_content=types.Content(parts=[])))),
    ]
    summarizer = LlmEventSummarizer(llm=ScriptedLlm(responder=summarize),
                                    prompt_template="Sum up:\n{conversation_history}")
    made = await summarizer.maybe_summarize_events(events=events)

    args = str({"q": "x" * 2005})
    assert [[c.model_dump(exclude_none=True) for c in contents] for contents in sent] == [[{"role": "user", "parts": [{
        "text": "Sum up:\nuser: hi\na (thought): pondering\n"
                f"a called tool: lookup({args[:2000]}... [truncated {len(args) - 2000} chars])\n"
                "Tool response from lookup: {'ok': 1}\na: old summary"}]}]]
    assert (made.author, made.content, made.actions.compaction.model_dump(exclude_none=True), bool(made.invocation_id)) == (
        "user", None, {"start_timestamp": 1.0, "end_timestamp": 5.0,
                       "compacted_content": {"role": "model", "parts": [{"text": "short"}]}}, True)
    assert await summarizer.maybe_summarize_events(events=[]) is None
