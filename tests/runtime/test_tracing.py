"""Trace spans of runs: an in-process runner records its agent, model and tool spans (runtime.tracing)."""

from __future__ import annotations

import pytest

from runtime.agents import LlmAgent
from runtime.models import ScriptedLlm, call
from runtime.runners import InMemoryRunner
from runtime.tools import LongRunningFunctionTool
from runtime.tracing import InMemorySpanStore

from .helpers import function_response, new_session, run, user_text


def lookup(city: str) -> dict:
    """Look the weather up."""
    return {"city": city, "sky": "clear"}


def open_ticket(title: str) -> None:
    """Open a ticket; the answer comes later."""


async def _spans(runner, session) -> list[dict]:
    return await runner.span_store.list(app_name=runner.app_name, user_id="u", session_id=session.id)


def _tree(spans: list[dict]) -> list[tuple[str, str | None]]:
    """(span name, parent span name) in start order."""
    by_id = {span["span_id"]: span for span in spans}
    ordered = sorted(spans, key=lambda span: span["start_time"])
    return [(s["name"], by_id[s["parent_span_id"]]["name"] if s["parent_span_id"] else None) for s in ordered]


async def test_a_run_records_agent_model_and_tool_spans_named_as_adk_names_them():
    agent = LlmAgent(name="forecaster", model=ScriptedLlm(turns=[call("lookup", city="Oslo"), "Clear in Oslo."]),
                     tools=[lookup])
    runner = InMemoryRunner(agent=agent, app_name="app")
    session = await new_session(runner)
    events = await run(runner, session, user_text("weather?"))

    spans = await _spans(runner, session)
    assert _tree(spans) == [("invoke_agent forecaster", None), ("call_llm", "invoke_agent forecaster"),
                            ("execute_tool lookup", "invoke_agent forecaster"), ("call_llm", "invoke_agent forecaster")]
    invocation_id = events[0].invocation_id
    assert {span["trace_id"] for span in spans} == {invocation_id}
    assert all(span["start_time"] <= span["end_time"] for span in spans)
    root, first_call, tool, second_call = sorted(spans, key=lambda span: span["start_time"])
    assert root["attributes"] == {
        "gcp.vertex.agent.invocation_id": invocation_id, "gcp.vertex.agent.session_id": session.id,
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "forecaster", "gen_ai.agent.description": "",
        "gen_ai.conversation.id": session.id}
    assert first_call["attributes"]["gcp.vertex.agent.event_id"] == events[0].id
    assert first_call["end_time"] <= tool["start_time"]  # the model call ends before its tool runs
    assert tool["attributes"]["gcp.vertex.agent.tool_call_args"] == '{"city":"Oslo"}'
    assert tool["attributes"]["gcp.vertex.agent.tool_response"] == '{"city":"Oslo","sky":"clear"}'
    assert "Clear in Oslo." in second_call["attributes"]["gcp.vertex.agent.llm_response"]


async def test_a_parked_invocation_and_its_resume_share_one_trace():
    agent = LlmAgent(name="a", model=ScriptedLlm(turns=[call("open_ticket", title="t"), "Resolved."]),
                     tools=[LongRunningFunctionTool(open_ticket)])
    runner = InMemoryRunner(agent=agent, app_name="app")
    session = await new_session(runner)
    first = await run(runner, session, user_text("open one"))
    parked = await _spans(runner, session)
    await run(runner, session, function_response(first[0].get_function_calls()[0].id, "open_ticket", {"ok": 1}))

    spans = await _spans(runner, session)
    assert spans[:len(parked)] == parked
    assert [span["name"] for span in spans[len(parked):]] == ["invoke_agent a", "call_llm"]
    assert {span["trace_id"] for span in spans} == {first[0].invocation_id}


async def test_a_runner_without_a_span_store_records_nothing():
    agent = LlmAgent(name="a", model=ScriptedLlm(turns=["hi"]))
    runner = InMemoryRunner(agent=agent, app_name="app")
    runner.span_store = None
    session = await new_session(runner)
    assert [e.text() for e in await run(runner, session, user_text("hello"))] == ["hi"]


@pytest.mark.parametrize("backend", ["memory", "redis"])
async def test_span_stores_keep_runs_in_order_per_session(backend, request):
    if backend == "memory":
        store = InMemorySpanStore()
    else:
        from runtime.tracing import RedisSpanStore

        store = RedisSpanStore(request.getfixturevalue("redis_url"), ttl_s=60)
    where = {"app_name": "app", "user_id": "u", "session_id": "s1"}
    await store.save(**where, spans=[{"name": "one"}])
    await store.save(**where, spans=[{"name": "two"}, {"name": "three"}])
    assert [span["name"] for span in await store.list(**where)] == ["one", "two", "three"]
    assert await store.list(**{**where, "session_id": "s2"}) == []
    if backend == "redis":
        await store.aclose()


async def test_a_redis_span_store_shows_the_newest_runs_and_trims_its_list_once_per_slack_saves(redis_url):
    import redis.asyncio as aioredis

    from runtime.redis_store import keys
    from runtime.tracing import RedisSpanStore
    from runtime.tracing.redis_span_store import TRIM_SLACK
    from runtime.tracing.store import MAX_RUNS_PER_SESSION

    store, client = RedisSpanStore(redis_url, ttl_s=60), aioredis.Redis.from_url(redis_url)
    where = {"app_name": "app", "user_id": "u", "session_id": "s1"}
    raw = keys.session_spans("app", "u", "s1")
    try:
        lengths = []
        for i in range(MAX_RUNS_PER_SESSION + 2 * TRIM_SLACK + 3):
            await store.save(**where, spans=[{"name": f"run {i}"}])
            lengths.append(await client.llen(raw))
            shown = [span["name"] for span in await store.list(**where)]
            assert shown == [f"run {j}" for j in range(max(0, i + 1 - MAX_RUNS_PER_SESSION), i + 1)]
        assert max(lengths) == MAX_RUNS_PER_SESSION + TRIM_SLACK
        trims = sum(1 for a, b in zip(lengths, lengths[1:], strict=False) if b < a)
        assert trims == 2
        assert 0 < await client.pttl(raw) <= 60_000
    finally:
        await store.aclose()
        await client.aclose()
