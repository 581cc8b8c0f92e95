"""The Runner over the Redis session service: the same behaviour as in memory, durably."""

from __future__ import annotations

from runtime.agents import LlmAgent, SequentialAgent
from runtime.models import ScriptedLlm, call
from runtime.runners import Runner, pending_long_running_calls
from runtime.tools import LongRunningFunctionTool

from .helpers import USER, function_response, run, summaries, user_text


def lookup(key: str) -> dict:
    """Look a key up."""
    return {"key": key, "value": 1}


def approve(what: str) -> None:
    """Ask for approval."""


async def test_a_tool_round_trip_is_committed_to_redis_and_readable_by_a_fresh_service(redis_url):
    from runtime.sessions import RedisSessionService

    agent = LlmAgent(name="a", model=ScriptedLlm(turns=[call("lookup", key="k"), "found"]), tools=[lookup],
                     output_key="answer")
    service = RedisSessionService(redis_url)
    runner = Runner(app_name="app", agent=agent, session_service=service)
    session = await service.create_session(app_name="app", user_id=USER)
    events = await run(runner, session, user_text("find k"), state_delta={"asked": True})
    reader = RedisSessionService(redis_url)
    stored = await reader.get_session(app_name="app", user_id=USER, session_id=session.id)
    assert summaries(stored.events) == [("user", ["find k"])] + summaries(events)
    assert stored.state == {"asked": True, "answer": "found"}
    await service.aclose()
    await reader.aclose()


async def test_a_parked_sequence_is_resumed_by_another_runner_from_redis(redis_url):
    from runtime.sessions import RedisSessionService

    def build():
        first = LlmAgent(name="first", model=ScriptedLlm(turns=[call("approve", what="x"), "approved"]),
                         tools=[LongRunningFunctionTool(approve)])
        second = LlmAgent(name="second", model=ScriptedLlm(turns=["second ran"]))
        return SequentialAgent(name="seq", sub_agents=[first, second])

    service_a, service_b = RedisSessionService(redis_url), RedisSessionService(redis_url)
    runner_a = Runner(app_name="app", agent=build(), session_service=service_a, resumable=True)
    runner_b = Runner(app_name="app", agent=build(), session_service=service_b, resumable=True)  # another worker
    session = await service_a.create_session(app_name="app", user_id=USER)
    parked = await run(runner_a, session, user_text("go"))
    call_id = parked[-1].get_function_calls()[0].id
    stored = await service_b.get_session(app_name="app", user_id=USER, session_id=session.id)
    assert [c.id for c in pending_long_running_calls(stored, parked[0].invocation_id)] == [call_id]
    resumed = await run(runner_b, session, function_response(call_id, "approve", {"ok": True}))
    assert summaries(resumed) == [("first", ["approved"]), ("second", ["second ran"])]
    assert {e.invocation_id for e in resumed} == {parked[0].invocation_id}
    await service_a.aclose()
    await service_b.aclose()
