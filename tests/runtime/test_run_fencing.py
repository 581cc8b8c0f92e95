"""Fenced writes on a real redis-server (one node, and a three-master Cluster): an artifact save checks the run's
fencing token in the same script as the write, and an AgentTool's child session is fenced by the lease of the run
that made it (``runtime.sessions.redis_session_service``)."""

from __future__ import annotations

import asyncio

import pytest
from google.genai import types

from runtime.artifacts import RedisArtifactService
from runtime.errors import FencedOutError
from runtime.events import Event
from runtime.redis_store import keys
from runtime.redis_store.redis_url import redis_client_from_url
from runtime.sessions import RedisSessionService
from runtime.sessions.redis_session_service import current_fence, hold_lease

APP, USER, PARENT, CHILD = "app", "ann", "parent", "child"
REPORT = types.Part(text="report")


@pytest.fixture(params=["redis", "redis-cluster"])
def url(request) -> str:
    return request.getfixturevalue("redis_cluster_url" if request.param == "redis-cluster" else "redis_url")


@pytest.fixture
async def services(url):
    sessions, artifacts = RedisSessionService(url), RedisArtifactService(url)
    raw = redis_client_from_url(url, decode_responses=True)
    yield sessions, artifacts, raw
    await artifacts.aclose()
    await raw.aclose()


async def _under(token: int, lease_session: str, write):
    """``write()`` in a task of its own that holds the lease of ``lease_session`` with ``token`` (as a worker's
    invocation task does); what it returns or raises."""
    async def run():
        hold_lease(token, APP, USER, lease_session)
        return await write()

    return await asyncio.create_task(run())


def _save(artifacts, session_id: str):
    return lambda: artifacts.save_artifact(app_name=APP, user_id=USER, session_id=session_id, filename="r.txt",
                                           artifact=REPORT)


async def _saved(artifacts, session_id: str) -> list[int]:
    return await artifacts.list_versions(app_name=APP, user_id=USER, session_id=session_id, filename="r.txt")


async def _claim(raw, session_id: str) -> int:
    """Bump the session's fencing token as a worker's claim does (lua/lib/fence.lua: a field of its meta hash)."""
    return await raw.hincrby(keys.session_meta(APP, USER, session_id), "fence", 1)


async def test_an_artifact_save_with_a_stale_fencing_token_is_refused_and_stores_nothing(services):
    sessions, artifacts, raw = services
    await sessions.create_session(app_name=APP, user_id=USER, session_id=PARENT)
    old = await _claim(raw, PARENT)
    assert await _under(old, PARENT, _save(artifacts, PARENT)) == 0
    new = await _claim(raw, PARENT)  # cancelled, rewound or taken over
    with pytest.raises(FencedOutError, match=f"fencing token {old} is not the current one \\('{new}'\\)"):
        await _under(old, PARENT, _save(artifacts, PARENT))
    assert await _saved(artifacts, PARENT) == [0]
    assert await _under(new, PARENT, _save(artifacts, PARENT)) == 1
    assert await _saved(artifacts, PARENT) == [0, 1]


async def test_a_user_scoped_artifact_save_is_fenced_too(services):
    _, artifacts, raw = services  # a session stored before the fence field: its own fence key holds the token
    old = await raw.incr(keys.session_fence(APP, USER, PARENT))
    await raw.incr(keys.session_fence(APP, USER, PARENT))
    save = lambda: artifacts.save_artifact(app_name=APP, user_id=USER, session_id=PARENT,  # noqa: E731
                                           filename="user:profile.txt", artifact=REPORT)
    with pytest.raises(FencedOutError):
        await _under(old, PARENT, save)
    assert await artifacts.list_artifact_keys(app_name=APP, user_id=USER, session_id=PARENT) == []


async def test_a_save_from_outside_a_run_is_not_fenced(services):
    _, artifacts, raw = services
    await raw.incr(keys.session_fence(APP, USER, PARENT))
    assert await _save(artifacts, PARENT)() == 0


async def test_a_child_session_is_written_under_the_lease_of_the_run_that_made_it(services):
    sessions, artifacts, raw = services
    await sessions.create_session(app_name=APP, user_id=USER, session_id=PARENT)
    child = await sessions.create_session(app_name=APP, user_id=USER, session_id=CHILD)
    token = await _claim(raw, PARENT)
    said = Event(invocation_id="e-child", author="translator", content=types.Content(
        role="model", parts=[types.Part(text="Bonjour")]))
    await _under(token, PARENT, lambda: sessions.append_event(child, said))
    assert await _under(token, PARENT, _save(artifacts, CHILD)) == 0
    await _claim(raw, PARENT)  # the parent invocation is cancelled
    late = Event(invocation_id="e-child", author="translator", content=types.Content(
        role="model", parts=[types.Part(text="Au revoir")]))
    with pytest.raises(FencedOutError, match=f"checked at '{keys.session_meta(APP, USER, PARENT)}'"):
        await _under(token, PARENT, lambda: sessions.append_event(child, late))
    with pytest.raises(FencedOutError):
        await _under(token, PARENT, _save(artifacts, CHILD))
    stored = await sessions.get_session(app_name=APP, user_id=USER, session_id=CHILD)
    assert [e.content.parts[0].text for e in stored.events] == ["Bonjour"]
    assert await _saved(artifacts, CHILD) == [0]


async def test_a_token_set_alone_inside_a_run_is_checked_against_the_written_sessions_own_fence(services):
    _, artifacts, raw = services
    run_token = await raw.incr(keys.session_fence(APP, USER, PARENT))
    own_token = await raw.incr(keys.session_fence(APP, USER, CHILD))  # e.g. a rewind taking that session's lease

    async def rewind_inside_the_run():
        fencing_token = current_fence.set(own_token)
        try:
            return await _save(artifacts, CHILD)()
        finally:
            current_fence.reset(fencing_token)

    assert await _under(run_token, PARENT, rewind_inside_the_run) == 0
    assert await _saved(artifacts, CHILD) == [0]
