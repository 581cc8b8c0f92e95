"""agentq uses Celery, kombu and redis-py through their public API only, and its run jobs are ordinary Celery
tasks: ``celery inspect active`` lists them, ``revoke`` drops them, Flower shows them (real redis-server, real
worker processes, Flower over HTTP)."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import uuid

import pytest
import redis

from runtime.redis_store import keys
from tests.worker.conftest import ROOT, WorkerPool
from tests.worker.flower_process import flower_running
from tests.worker.public_api_probe import changes, import_everything, snapshot
from worker.queues.celery_app import make_celery
from worker.queues.dispatch import QUEUE, RUN_TASK

LIBRARY_OWN_CHANGES = re.compile("|".join([
    r"celery\.app\.task\.(Base)?Task\.(__call__ replaced|_stackprotected added)",  # trace._install_stack_protection
    r"celery\.worker\.[\w.]+\.requires (added|replaced)",  # bootsteps.Blueprint resolving each step's requirements
    r"celery\.app\.log\.Logging\._setup replaced",  # Celery's logging set up once per process
    r"redis\.lock\.Lock\.lua_\w+ replaced",  # redis-py's Lock.register_scripts caching its scripts on the class
]))
"""What the libraries change in their own classes, with or without agentq (each pattern names where)."""


def _until(check, what: str, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while not (found := check()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)
    return found


def test_the_snapshot_comparison_sees_a_replaced_kombu_method():
    from kombu.transport import redis as kombu_redis

    import_everything()
    before = snapshot()
    original = kombu_redis.QoS.ack
    kombu_redis.QoS.ack = lambda self, delivery_tag: None  # what the old broker_writes did
    try:
        assert changes(before, snapshot()) == ["kombu.transport.redis.QoS.ack replaced"]
    finally:
        kombu_redis.QoS.ack = original
    assert changes(before, snapshot()) == []


def test_starting_the_worker_and_the_api_replaces_no_celery_kombu_or_redis_attribute(worker_redis, tmp_path):
    report_path = tmp_path / "report.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "AGENTQ_REDIS_URL": worker_redis.url}
    done = subprocess.run([sys.executable, "-m", "tests.worker.public_api_probe", worker_redis.url, str(report_path)],
                          cwd=ROOT, env=env, capture_output=True, timeout=180)
    assert report_path.exists(), done.stderr.decode()[-3000:]
    report = json.loads(report_path.read_text())
    assert report["status"] == "completed", done.stderr.decode()[-3000:]
    assert [change for change in report["changes"] if not LIBRARY_OWN_CHANGES.fullmatch(change)] == []
    assert "celery.app.task.Task.__call__ replaced" in report["changes"]  # the worker really ran in the probe


@pytest.fixture
def slow_pool(worker_redis, tmp_path):
    """One ``agentq worker`` with Celery's threads pool and one invocation in flight at most, so that a second
    run job has to wait for a slot."""
    env = WorkerPool(worker_redis.url, tmp_path).env()
    broker = f"redis://127.0.0.1:{worker_redis.port}/3"  # a broker apart from the store: another database
    name = "narrow-" + uuid.uuid4().hex[:6]
    with redis.Redis.from_url(worker_redis.url) as client:
        client.hdel(keys.workers(), name)
    log = open(tmp_path / f"{name}.log", "ab")  # noqa: SIM115 (closed below)
    process = subprocess.Popen(
        [sys.executable, "-m", "agentq.cli", "--log-level", "INFO", "worker", "--name", name, "--pool", "threads",
         "--threads", "2", "--concurrency", "1", "--app", "tests.worker.apps:slow_app"],
        cwd=ROOT, env={**env, "AGENTQ_BROKER_URL": broker, "TEST_MODEL_LATENCY": "1"},  # the first runs for seconds
        stdout=log, stderr=subprocess.STDOUT)
    try:
        with redis.Redis.from_url(worker_redis.url) as client:
            _until(lambda: client.hexists(keys.workers(), name), "the worker to get ready", 60)
        yield f"{name}@{socket.gethostname()}", broker
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


async def test_celery_inspect_shows_the_app_queues_and_a_job_waiting_for_a_slot_holds_no_task(
        slow_pool, worker_redis, monkeypatch, user):
    """The worker consumes its app's run queue besides the shared one (``inspect active_queues``, which Flower
    shows), and a job waiting for a free slot waits in the worker's line (worker.queues.app_limits), not inside a task
    that would hold up the consumer: ``inspect active`` stays empty while it waits."""
    from worker.client import AgentqClient

    name, broker = slow_pool
    monkeypatch.setenv("AGENTQ_BROKER_URL", broker)
    client = AgentqClient(worker_redis.url)
    try:
        inspect = make_celery(broker).control.inspect(timeout=2)
        queues = _until(lambda: (inspect.active_queues() or {}).get(name), "the worker's queues in inspect")
        first_session = await client.create_session("slow", user)
        second_session = await client.create_session("slow", user)
        first = await client.enqueue("slow", user, first_session.id, "go")
        second = await client.enqueue("slow", user, second_session.id, "go")
        _until(lambda: _status(worker_redis, user, first) == "running", "the first invocation to run")
        active = _until(lambda: (replies := inspect.active()) and name in replies and replies, "inspect active")
        waiting = (_status(worker_redis, user, second), active[name])
        assert (await client.wait(first, timeout=60)).status == "completed"
        assert (await client.wait(second, timeout=60)).status == "completed"
        assert (sorted(queue["name"] for queue in queues), waiting) == (["agentq", "agentq.app.slow"], ("queued", []))
    finally:
        await client.aclose()


def _status(worker_redis, user: str, invocation_id: str) -> str | None:
    with redis.Redis.from_url(worker_redis.url, decode_responses=True) as client:
        return client.hget(keys.invocation("slow", user, invocation_id), "status")


def test_a_revoked_run_job_is_dropped_and_flower_shows_it_revoked(workers, tmp_path):
    app = make_celery(workers.redis_url)
    with flower_running(workers.redis_url, tmp_path / "flower.log") as base:
        import httpx

        def flower(path):  # Flower's JSON answer, None until it gives one
            try:
                reply = httpx.get(f"{base}{path}", timeout=5)
            except httpx.HTTPError:
                return None
            return reply.json() if reply.status_code == 200 else None

        _until(lambda: flower("/api/workers") is not None, "Flower to answer", 60)
        task_id = f"revoked-{uuid.uuid4().hex}"
        app.control.revoke(task_id)  # the workers remember it, then drop the job when it arrives
        _until(lambda: all(task_id in ids for ids in (app.control.inspect(timeout=2).revoked() or {"": []}).values()),
               "every worker to know the revoked id")
        app.send_task(RUN_TASK, args=["e-never-runs"], queue=QUEUE, task_id=task_id)
        info = _until(lambda: (t := flower(f"/api/task/info/{task_id}")) and t.get("state") == "REVOKED" and t,
                      "Flower to show the job revoked")
        assert (info["name"], info["state"], info["result"]) == (RUN_TASK, "REVOKED", None)


async def test_a_plain_celery_worker_serves_announces_and_unregisters_like_agentq_worker(
        worker_redis, tmp_path, monkeypatch, user):
    from worker.client import AgentqClient

    broker = f"redis://127.0.0.1:{worker_redis.port}/4"  # only this worker consumes here
    monkeypatch.setenv("AGENTQ_BROKER_URL", broker)
    nodename = f"plain-{uuid.uuid4().hex[:6]}@{socket.gethostname()}"
    env = {**WorkerPool(worker_redis.url, tmp_path).env(), "AGENTQ_BROKER_URL": broker,
           "AGENTQ_APPS": "tests.worker.apps:weather_app"}
    log = open(tmp_path / "plain.log", "wb")  # noqa: SIM115 (closed below)
    process = subprocess.Popen([sys.executable, "-m", "celery", "-A", "worker.celery_main", "worker", "-n", nodename,
                                "-l", "INFO"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    client = AgentqClient(worker_redis.url)
    try:
        with redis.Redis.from_url(worker_redis.url) as store:
            _until(lambda: store.hexists(keys.workers(), nodename) or process.poll() is not None, "registration", 60)
            assert process.poll() is None, (tmp_path / "plain.log").read_text()
            session = await client.create_session("weather", user)
            invocation_id = await client.enqueue("weather", user, session.id, "Weather in Paris?")
            record = await client.wait(invocation_id, timeout=30)
            assert (record.status, record.worker) == ("completed", nodename)
            process.terminate()  # Celery's warm shutdown: the worker drains and unregisters
            assert process.wait(timeout=30) == 0
            assert not store.hexists(keys.workers(), nodename)
    finally:
        await client.aclose()
        if process.poll() is None:
            process.kill()
            process.wait()
        log.close()


class _NoBroker:
    """Run jobs go nowhere: the test sends them itself."""

    def send_task(self, *args, **kwargs) -> None:
        pass


async def test_one_run_batch_task_starts_each_of_its_invocations(workers, user):
    from worker.client import AgentqClient
    from worker.queues.dispatch import RUN_BATCH_TASK

    client = AgentqClient(workers.redis_url, celery_app=_NoBroker())
    try:
        ids = []
        for n in range(3):
            session = await client.create_session("weather", user)
            ids.append(await client.enqueue("weather", user, session.id, f"Weather in Paris? #{n}"))
        await client._store.redis.zrem(keys.dispatch_due(), *ids)  # no watchdog re-send: only the batch starts them
        make_celery(workers.redis_url).send_task(RUN_BATCH_TASK, args=[[[ids[0]], [ids[1]], [ids[2], None]]],
                                                 queue=QUEUE)
        records = [await client.wait(invocation_id, timeout=30) for invocation_id in ids]
        assert [(r.status, r.attempts) for r in records] == [("completed", 1)] * 3
    finally:
        await client.aclose()
