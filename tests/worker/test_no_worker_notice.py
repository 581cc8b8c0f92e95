"""With no worker alive an invocation only queues: /health, the status route and the API's log say so, and the
notice (also an ``event: notice`` frame on the invocation's SSE) goes once a real ``agentq worker`` starts and takes the invocation."""

from __future__ import annotations

import asyncio
import logging

import httpx

from api import ApiSettings, create_app
from api.services import redis_services
from api.sse_client import read_frames
from api.worker_presence import no_worker_notice
from runtime.redis_store.launcher import EmbeddedRedis
from tests.worker.conftest import WorkerPool

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

            followed = asyncio.create_task(_frames(http, invocation_id))  # ends when the invocation parks
            await asyncio.sleep(0.2)  # the stream starts while the invocation waits

            pool.ensure("lone")
            async with asyncio.timeout(30):  # ready first, then its first beat
                while (health := (await http.get("/health")).json())["workers"] == 0:
                    await asyncio.sleep(0.05)
            assert (health["workers"], "warning" in health) == (1, False)
            async with asyncio.timeout(30):
                while (status := (await http.get(f"/invocations/{invocation_id}")).json())["status"] == "queued":
                    await asyncio.sleep(0.05)
            assert (status["status"], status["notice"]) == ("parked", None)
            frames = await asyncio.wait_for(followed, 30)
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
