"""A worker's executor keeps a session's parsed history between its invocations and forgets what it ran."""

from __future__ import annotations

import pytest

from runtime.flows.contents import build_contents
from runtime.runners import Runner
from runtime.sessions import RedisSessionService
from worker.records.store import InvocationStore
from worker.running.executor import Executor, ExecutorConfig

from .apps import make_weather_app
from .test_lifecycle import RecordingCelery


@pytest.fixture
async def executor(redis_url):
    store = InvocationStore(redis_url, celery_app=RecordingCelery())
    config = ExecutorConfig(worker_name="w1", history_cache_bytes=1 << 20)
    store.session_service.keep_histories(config.history_cache_bytes)
    app = make_weather_app()
    runner = Runner(app_name="weather", agent=app.root_agent, session_service=store.session_service)
    yield Executor(store, {"weather": runner}, config)
    await store.aclose()


async def _run(executor: Executor, session_id: str, text: str) -> tuple[str, bool]:
    """The invocation's status, and whether the worker still holds its location once it settled."""
    invocation_id = await executor.store.enqueue("weather", "u", session_id, text, None, None)
    assert await executor.start(invocation_id) == "started"
    await executor.active[invocation_id][1]
    remembered = invocation_id in executor.store._where
    return (await executor.store.get(invocation_id)).status, remembered


async def test_a_workers_invocations_of_one_session_run_on_its_kept_history_and_leave_no_locations(
        executor, redis_url):
    store = executor.store
    await store.session_service.create_session(app_name="weather", user_id="u", session_id="s")
    outcomes = [await _run(executor, "s", f"Weather in Paris? #{turn}") for turn in range(4)]
    reader = RedisSessionService(redis_url)
    stored = await reader.get_session(app_name="weather", user_id="u", session_id="s")
    kept = store.session_service.histories.get(("weather", "u", "s"))
    shown = kept.derived["contents"][("weather_agent", None)].build(kept.events)
    assert outcomes == [("completed", False)] * 4
    assert ([e.to_json() for e in kept.events], kept.count, kept.version) == (
        [e.to_json() for e in stored.events], len(stored.events), stored.version)
    assert [c.model_dump() for c in shown] == [c.model_dump() for c in build_contents(stored.events,
                                                                                    "weather_agent", None)]
    await reader.aclose()


async def _scripts_run_while(redis_url, work) -> list[str]:
    """The SHA1 of every script EVALSHA'd on the server while ``work()`` ran (a MONITOR of the real server)."""
    import asyncio

    import redis.asyncio as aioredis

    client = aioredis.Redis.from_url(redis_url, decode_responses=True)
    seen: list[str] = []
    async with client.monitor() as monitor:
        async def watch():
            while True:
                command = (await monitor.next_command())["command"]
                if command.startswith("EVALSHA "):
                    seen.append(command.split()[1])

        watching = asyncio.create_task(watch())
        await asyncio.sleep(0.1)
        await work()
        await client.ping()
        await asyncio.sleep(0.2)
        watching.cancel()
    await client.aclose()
    return seen


@pytest.mark.parametrize("kept", [True, False], ids=["history kept", "no history cache"])
async def test_a_runs_first_read_of_its_session_is_the_one_its_claim_made(executor, redis_url, kept):
    from runtime.redis_store.scripts import ACQUIRE, READ_SESSION, READ_SESSION_SINCE

    store = executor.store
    if not kept:
        store.session_service.keep_histories(0)
    await store.session_service.create_session(app_name="weather", user_id="u", session_id="s")
    assert await _run(executor, "s", "Weather in Paris?") == ("completed", False)

    async def second_turn():
        assert await _run(executor, "s", "And in Rome?") == ("completed", False)

    scripts = await _scripts_run_while(redis_url, second_turn)
    assert scripts.count(ACQUIRE.sha) == 1
    assert scripts.count(READ_SESSION_SINCE.sha) + scripts.count(READ_SESSION.sha) == 0
    reader = RedisSessionService(redis_url)
    stored = await reader.get_session(app_name="weather", user_id="u", session_id="s")
    asked = [e.content.parts[0].text for e in stored.events if e.author == "user" and e.content.parts[0].text]
    assert asked == ["Weather in Paris?", "And in Rome?"]  # the second run committed on top of the first
    await reader.aclose()
