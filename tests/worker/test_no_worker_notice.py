"""With no worker alive an invocation only queues: /health, the status route and the API's log say so, and the
notice goes once a real ``agentq worker`` starts and takes the invocation."""

from __future__ import annotations

import asyncio
import logging

import httpx

from api import ApiSettings, create_app
from api.services import redis_services
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

            pool.ensure("lone")
            async with asyncio.timeout(30):  # ready first, then its first beat
                while (health := (await http.get("/health")).json())["workers"] == 0:
                    await asyncio.sleep(0.05)
            assert (health["workers"], "warning" in health) == (1, False)
            async with asyncio.timeout(30):
                while (status := (await http.get(f"/invocations/{invocation_id}")).json())["status"] == "queued":
                    await asyncio.sleep(0.05)
            assert (status["status"], status["notice"]) == ("parked", None)
    finally:
        await backed.aclose()
        pool.stop_all()
        server.stop()
