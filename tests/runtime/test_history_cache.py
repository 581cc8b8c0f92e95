"""Parsed histories kept between reads (a worker's session service): never stale, never changed by a reader."""

from __future__ import annotations

import pytest
from google.genai import types

from runtime.agents import LlmAgent
from runtime.events import Event, EventActions
from runtime.flows.contents import build_contents
from runtime.models import LlmRequest, LlmResponse, ScriptedLlm
from runtime.runners import Runner
from runtime.sessions import RedisSessionService
from runtime.sessions.history_cache import HistoryCache
from runtime.sessions.invocation_index import InvocationIndex

APP, USER, SID = "app", "ann", "s1"


@pytest.fixture
async def cached(redis_url):
    service = RedisSessionService(redis_url, history_cache_bytes=1 << 20)
    yield service
    await service.aclose()


@pytest.fixture
async def other(redis_url):
    """Another process on the same Redis (another worker, the API), without a cache."""
    service = RedisSessionService(redis_url)
    yield service
    await service.aclose()


def _event(text: str, delta: dict | None = None, invocation_id: str = "e-1") -> Event:
    return Event(author="agent", invocation_id=invocation_id, actions=EventActions(state_delta=delta or {}),
                 content=types.Content(role="model", parts=[types.Part(text=text)]))


async def _read(service) -> object:
    return await service.get_session(app_name=APP, user_id=USER, session_id=SID)


async def _known(service) -> object:
    """The session read by ``service`` for the second time: a session is kept from its second read on."""
    await _read(service)
    return await _read(service)


async def _texts(service) -> list[str]:
    return [event.content.parts[0].text for event in (await _read(service)).events]


async def _session_with(service, *texts: str):
    session = await service.create_session(app_name=APP, user_id=USER, session_id=SID)
    for text in texts:
        await service.append_event(session, _event(text))
    return session


async def test_a_read_parses_only_the_events_committed_since_the_last_one_and_sees_other_writers_state(
        cached, other):
    await _session_with(other, "a", "b", "c")
    held = list((await _known(cached)).events)
    assert (await _read(cached)).events == held  # nothing new
    writer = await _read(other)
    await other.append_event(writer, _event("d", {"k": 1, "user:u": 2}))
    session = await _read(cached)
    assert [event.content.parts[0].text for event in session.events] == ["a", "b", "c", "d"]
    assert [session.events[i] is held[i] for i in range(3)] == [True, True, True]  # not parsed again
    assert (session.state, session.version) == ({"k": 1, "user:u": 2}, 4)


async def test_events_committed_through_a_read_session_are_kept_without_being_read_back(cached, other):
    await _session_with(other, "a")
    session = await _known(cached)
    committed = _event("b")
    await cached.append_event(session, committed)
    del session
    again = await _read(cached)
    assert (again.events[-1] is committed, again.version, await _texts(other)) == (True, 2, ["a", "b"])


async def test_a_session_deleted_and_created_again_under_its_id_is_read_afresh(cached, other):
    await _session_with(other, "a", "b")
    assert [event.content.parts[0].text for event in (await _known(cached)).events] == ["a", "b"]
    await other.delete_session(app_name=APP, user_id=USER, session_id=SID)
    await _session_with(other, "x", "y", "z")  # as many new events past the cached ones as versions moved
    assert await _texts(cached) == ["x", "y", "z"]
    await other.delete_session(app_name=APP, user_id=USER, session_id=SID)
    assert await _read(cached) is None


async def test_a_read_lends_the_cached_history_itself_once_no_earlier_session_holds_it(cached, other):
    import weakref

    await _session_with(other, "a")
    first = await _known(cached)
    lent = weakref.ref(first.events)
    await cached.append_event(first, _event("b"))
    del first
    second = await _read(cached)
    assert (second.events is lent(), len(second.events)) == (True, 2)  # no copy of a long history per read


async def test_a_reader_holding_its_session_keeps_its_history_while_later_reads_and_commits_go_on(cached, other):
    await _session_with(other, "a")
    first = await _known(cached)
    second = await _read(cached)
    await cached.append_event(second, _event("b"))
    third = await _read(cached)
    assert ([e.content.parts[0].text for e in first.events], [e.content.parts[0].text for e in third.events]) == (
        ["a"], ["a", "b"])


async def test_a_history_its_reader_changed_or_appended_to_without_committing_is_not_served_again(cached, other):
    await _session_with(other, "a", "b")
    session = await _known(cached)
    del session.events[0]
    del session
    assert await _texts(cached) == ["a", "b"]
    session = await _read(cached)
    session.events.append(_event("never committed"))
    del session
    assert await _texts(cached) == ["a", "b"]
    session = await _read(cached)
    session.events[1] = _event("replaced")
    await other.append_event(await _read(other), _event("c"))
    assert await _texts(cached) == ["a", "b", "c"]


async def test_a_session_read_once_is_not_kept_and_read_again_it_is(cached, other):
    await _session_with(other, "a")
    await _read(cached)
    assert cached.histories.get((APP, USER, SID)) is None
    session = await _read(cached)
    assert cached.histories.get((APP, USER, SID)).events is session.events


def test_parsed_histories_past_the_byte_budget_are_dropped_least_recently_used_first():
    from runtime._lent import LentList

    cache = HistoryCache(max_bytes=100)
    for name in ("s1", "s2", "s3"):
        cache.put((APP, USER, name), LentList(), version=0, last_digest="", nbytes=40)
        cache.get((APP, USER, "s1"))  # s1 stays the most recently used
    assert ([cache.get((APP, USER, name)) is not None for name in ("s1", "s2", "s3")], cache.nbytes) == (
        [True, False, True], 80)


def test_an_invocations_events_are_found_as_the_history_grows_and_again_in_another_history():
    index = InvocationIndex()
    history = [_event("a", invocation_id="e-1"), _event("b", invocation_id="e-2")]
    assert index.events_of(history, "e-1") == [history[0]]
    history += [_event("c", invocation_id="e-1")]
    assert index.events_of(history, "e-1") == [history[0], history[2]]
    elsewhere = [_event("d", invocation_id="e-1")]
    assert (index.events_of(elsewhere, "e-1"), index.events_of(elsewhere, "e-2")) == (elsewhere, [])


async def test_two_workers_taking_turns_on_one_session_show_the_model_exactly_the_stored_history(redis_url):
    """Each worker keeps the session's parsed history and model contents between its invocations; the
    other's commits come in through the version check. Every request is what ADK builds from scratch."""
    seen: list[list[dict]] = []

    def answer(request: LlmRequest) -> LlmResponse:
        seen.append([content.model_dump(exclude_none=True) for content in request.contents])
        if request.contents[-1].parts[0].function_response:
            return LlmResponse(content=types.Content(role="model", parts=[types.Part(text="done")]))
        call = types.FunctionCall(name="lookup", args={"n": len(seen)})
        return LlmResponse(content=types.Content(role="model", parts=[types.Part(function_call=call)]))

    def lookup(n: int) -> dict:
        """Look n up."""
        return {"n": n}

    workers = [RedisSessionService(redis_url, history_cache_bytes=1 << 20) for _ in range(2)]
    runners = [Runner(app_name=APP, agent=LlmAgent(name="a", model=ScriptedLlm(responder=answer), tools=[lookup]),
                      session_service=service) for service in workers]
    await workers[0].create_session(app_name=APP, user_id=USER, session_id=SID)
    for turn in range(6):
        message = types.Content(role="user", parts=[types.Part(text=f"turn {turn}")])
        async for _ in runners[turn % 3 % 2].run_async(user_id=USER, session_id=SID, new_message=message,
                                                     invocation_id=f"e-{turn}"):
            pass
    history = (await _read(workers[1])).events
    # each invocation commits: the message, the call, the answer, the text; its model calls came after the
    # message and after the answer
    expected = [[c.model_dump(exclude_none=True) for c in build_contents(history[:end], "a", None)]
                for turn in range(6) for end in (4 * turn + 1, 4 * turn + 3)]
    assert (len(history), seen) == (24, expected)
    for service in workers:
        await service.aclose()
