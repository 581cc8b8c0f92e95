"""Artifact services, in memory and on Redis: versions, scopes, binary content."""

from __future__ import annotations

import pytest
from google.genai import types

from runtime.artifacts import InMemoryArtifactService


@pytest.fixture(params=["memory", "redis", "redis-cluster"])
async def artifacts(request):
    if request.param == "memory":
        yield InMemoryArtifactService()
        return
    from runtime.artifacts import RedisArtifactService

    # redis-cluster: a real three-master Redis Cluster
    service = RedisArtifactService(request.getfixturevalue("redis_cluster_url" if request.param == "redis-cluster"
                                                           else "redis_url"))
    yield service
    await service.aclose()


WHERE = {"app_name": "app", "user_id": "ann", "session_id": "s1"}
BINARY = bytes(range(256)) * 3


async def test_every_save_makes_a_new_version_and_binary_content_survives(artifacts):
    first = types.Part(inline_data=types.Blob(mime_type="application/octet-stream", data=BINARY))
    second = types.Part(text="v1")
    assert await artifacts.save_artifact(**WHERE, filename="f.bin", artifact=first) == 0
    assert await artifacts.save_artifact(**WHERE, filename="f.bin", artifact=second) == 1
    assert await artifacts.load_artifact(**WHERE, filename="f.bin", version=0) == first
    assert (await artifacts.load_artifact(**WHERE, filename="f.bin", version=0)).inline_data.data == BINARY
    assert await artifacts.load_artifact(**WHERE, filename="f.bin") == second
    assert await artifacts.list_versions(**WHERE, filename="f.bin") == [0, 1]


async def test_missing_artifacts_and_versions_load_as_none(artifacts):
    await artifacts.save_artifact(**WHERE, filename="f.txt", artifact=types.Part(text="x"))
    assert await artifacts.load_artifact(**WHERE, filename="nope.txt") is None
    assert await artifacts.load_artifact(**WHERE, filename="f.txt", version=1) is None
    assert await artifacts.load_artifact(**WHERE, filename="f.txt", version=-1) is None
    assert await artifacts.list_versions(**WHERE, filename="nope.txt") == []


async def test_user_files_are_shared_by_a_users_sessions_and_session_files_are_not(artifacts):
    await artifacts.save_artifact(**WHERE, filename="user:profile", artifact=types.Part(text="p"))
    await artifacts.save_artifact(**WHERE, filename="notes", artifact=types.Part(text="n"))
    other = {**WHERE, "session_id": "s2"}
    assert await artifacts.list_artifact_keys(**WHERE) == ["notes", "user:profile"]
    assert await artifacts.list_artifact_keys(**other) == ["user:profile"]
    assert await artifacts.load_artifact(**other, filename="user:profile") == types.Part(text="p")
    assert await artifacts.load_artifact(**other, filename="notes") is None
    assert await artifacts.list_artifact_keys(**{**WHERE, "user_id": "bob"}) == []


async def test_deleting_an_artifact_removes_every_version(artifacts):
    for text in ("a", "b"):
        await artifacts.save_artifact(**WHERE, filename="f.txt", artifact=types.Part(text=text))
    await artifacts.delete_artifact(**WHERE, filename="f.txt")
    assert (await artifacts.list_versions(**WHERE, filename="f.txt"), await artifacts.list_artifact_keys(**WHERE)) == (
        [], []
    )
    assert await artifacts.save_artifact(**WHERE, filename="f.txt", artifact=types.Part(text="c")) == 0
