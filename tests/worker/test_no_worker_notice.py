"""With no worker alive an invocation only queues: /health, the status route and the API's log say so, and the
notice (also an ``event: notice`` frame on the invocation's SSE) goes once a real ``agentq worker`` starts and takes the invocation."""

from __future__ import annotations

import asyncio
import logging

import httpx
import redis.asyncio

from api import ApiSettings, create_app
from api.services import redis_services
from api.streams.sse_client import read_frames
from api.views.worker_presence import no_worker_notice
from runtime.redis_store import keys
from runtime.redis_store.launcher import EmbeddedRedis
from tests.worker.conftest import WorkerPool
from tests.worker.held_ready_apps import READY_GATE
from worker.fleet.workers_alive import alive_workers

MESSAGE = {"role": "user", "parts": [{"text": "Please pay 100"}]}


async def test_with_no_worker_alive_health_status_and_log_say_so_until_a_worker_starts(tmp_path, caplog, monkeypatch):
    server = EmbeddedRedis(tmp_path / "redis")
    server.start()
    monkeypatch.setenv("AGENTQ_REDIS_URL", server.url)  # for the test apps' side-effect counters
    pool = WorkerPool(server.url, tmp_path)
    backed = redis_services(server.url)
    app = create_app(ApiSettings(app_names=["approval"]), backed.services)
    transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 40000))
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://agentq.test", timeout=30) as http:
            health = (await http.get("/health")).json()
            assert (health["status"], health["workers"]) == ("ok", 0)
            assert "no worker is alive" in health["warning"]

            session = (await http.post("/apps/approval/users/ann/sessions", json={})).json()["id"]
            with caplog.at_level(logging.WARNING, logger="agentq.api"):
                enqueued = await http.post(f"/apps/approval/users/ann/sessions/{session}/invocations",
                                           json={"newMessage": MESSAGE})
            invocation_id = enqueued.json()["invocationId"]
            assert f"invocation {invocation_id}: {no_worker_notice('approval')}" in caplog.messages
            status = (await http.get(f"/invocations/{invocation_id}")).json()
            assert (status["status"], status["notice"]) == ("queued", no_worker_notice("approval"))

            # httpx's ASGI transport hands the body over only once it ends: the app's first body chunk is
            # watched instead, so the worker starts only once the stream has begun while the invocation waits
            first_chunk = asyncio.Event()
            watched = httpx.AsyncClient(transport=httpx.ASGITransport(app=_first_chunk_sets(app, first_chunk),
                                                                      client=("127.0.0.1", 40000)),
                                        base_url="http://agentq.test", timeout=30)
            followed = asyncio.create_task(_frames(watched, invocation_id))  # ends when the invocation parks
            await asyncio.wait_for(first_chunk.wait(), 30)

            pool.ensure("lone")
            async with asyncio.timeout(30):  # ready first, then its first beat
                while (health := (await http.get("/health")).json())["workers"] == 0:
                    await asyncio.sleep(0.05)
            assert (health["workers"], "warning" in health) == (1, False)
            async with asyncio.timeout(30):
                while (status := (await http.get(f"/invocations/{invocation_id}")).json())["status"] in (
                        "queued", "running"):
                    await asyncio.sleep(0.05)
            assert (status["status"], status["notice"]) == ("parked", None)
            frames = await asyncio.wait_for(followed, 30)
            await watched.aclose()
            assert (frames[0].event, frames[0].id, frames[0].data) == (
                "notice", None, {"invocationId": invocation_id, "notice": no_worker_notice("approval")})
            assert (frames[-1].event, frames[-1].data["status"]) == ("status", "parked")
    finally:
        await backed.aclose()
        pool.stop_all()
        server.stop()


async def _frames(http: httpx.AsyncClient, invocation_id: str) -> list:
    async with http.stream("GET", f"/invocations/{invocation_id}/events") as response:
        return [frame async for frame in read_frames(response)]


def _first_chunk_sets(app, event: asyncio.Event):
    """``app``, setting ``event`` when it sends its first non-empty body chunk."""
    async def watched(scope, receive, send):
        async def send_watched(message):
            if message["type"] == "http.response.body" and message.get("body"):
                event.set()
            await send(message)
        await app(scope, receive, send_watched)
    return watched


class _HeldReadyPool(WorkerPool):
    """Workers that beat but wait to announce their apps until the test sets ``READY_GATE``."""

    def env(self) -> dict[str, str]:
        return {**super().env(), "AGENTQ_APPS": "tests.worker.held_ready_apps:app"}


async def test_a_worker_that_beats_but_has_not_announced_its_apps_yet_is_not_reported_missing(
    tmp_path, monkeypatch
):
    server = EmbeddedRedis(tmp_path / "redis")
    server.start()
    monkeypatch.setenv("AGENTQ_REDIS_URL", server.url)
    pool = _HeldReadyPool(server.url, tmp_path)
    backed = redis_services(server.url)
    app = create_app(ApiSettings(app_names=["approval"]), backed.services)
    transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 40000))
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://agentq.test", timeout=30) as http:
            session = (await http.post("/apps/approval/users/ann/sessions", json={})).json()["id"]
            invocation_id = (await http.post(f"/apps/approval/users/ann/sessions/{session}/invocations",
                                             json={"newMessage": MESSAGE})).json()["invocationId"]
            status = (await http.get(f"/invocations/{invocation_id}")).json()
            assert (status["status"], status["notice"]) == ("queued", no_worker_notice("approval"))

            pool.start("starting")
            reader = redis.asyncio.Redis.from_url(server.url)
            async with asyncio.timeout(60):  # it beats: alive, its apps not announced yet
                while not (alive := await alive_workers(reader)):
                    await asyncio.sleep(0.05)
            await reader.aclose()
            with pool.admin() as admin:
                assert ([worker.apps for worker in alive], admin.hexists(keys.workers(), "starting")) == ([[]], False)
            status = (await http.get(f"/invocations/{invocation_id}")).json()
            assert (status["status"], status["notice"]) == ("queued", None)
            followed = asyncio.create_task(_frames(http, invocation_id))
            await asyncio.sleep(0.2)  # the stream starts while the invocation waits

            with pool.admin() as admin:
                admin.set(READY_GATE, "1")
            frames = await asyncio.wait_for(followed, 60)
            assert [frame.event for frame in frames if frame.event != "message"][-1:] == ["status"]
            assert "notice" not in [frame.event for frame in frames]
            assert frames[-1].data["status"] == "parked"
    finally:
        await backed.aclose()
        pool.stop_all()
        server.stop()


async def test_a_worker_is_alive_from_the_moment_it_announces_itself_not_from_its_first_beat(tmp_path, monkeypatch):
    server = EmbeddedRedis(tmp_path / "redis")
    server.start()
    monkeypatch.setenv("AGENTQ_REDIS_URL", server.url)
    pool = WorkerPool(server.url, tmp_path)
    backed = redis_services(server.url)
    app = create_app(ApiSettings(app_names=["approval"]), backed.services)
    transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 40000))
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://agentq.test", timeout=30) as http:
            pool.ensure("lone")  # returns as soon as the worker is in keys.workers(): it consumes from then on
            health = (await http.get("/health")).json()
            assert (health["status"], health["workers"], "warning" in health) == ("ok", 1, False)
    finally:
        await backed.aclose()
        pool.stop_all()
        server.stop()
