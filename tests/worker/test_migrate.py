"""Layout migrations (worker.records.migrate, ``agentq migrate``) on a real redis-server, and the refusals at start.

A store "as the previous release left it" is made here from records of this one by taking off what the previous
release did not write (counts, 'counted' markers, the app-wide parked index, retention entries) and putting back
its TTL on final records; tests/upgrade runs the previous release itself.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from runtime.redis_store import keys
from runtime.redis_store.layout import LAYOUT_VERSION, layout_key
from runtime.redis_store.redis_url import redis_client_from_url
from runtime.statuses import STATUSES
from worker.fleet import lease
from worker.fleet.sweeper import sweep_once
from worker.records import migrate
from worker.records.codec import dumps
from worker.records.record import PendingCall
from worker.records.retention import RetentionPolicy
from worker.records.status_counts import UNDERFLOWS, app_scope, count_by_status, user_scope
from worker.records.store import InvocationStore

from .test_lifecycle import RecordingCelery
from .test_retention import _run

ROOT = Path(__file__).resolve().parents[2]
USERS = ("ann", "bob/x", "cé")


@pytest.fixture
async def store(redis_url):
    store = InvocationStore(redis_url, celery_app=RecordingCelery(), retention=RetentionPolicy(settled_s=3600))
    yield store
    await store.aclose()


@pytest.fixture
def sync_client(redis_url):
    client = redis_client_from_url(redis_url, asyncio=False, decode_responses=True)
    yield client
    client.close()


async def _previous_release_store(store, per_user: int = 4) -> dict[str, list[str]]:
    """Queued, parked and completed invocations for USERS, then what the previous release did not write taken
    off; their ids by status."""
    ids: dict[str, list[str]] = {"queued": [], "parked": [], "completed": []}
    for user in USERS:
        for n in range(per_user):
            session = f"s{n}"
            await store.create_session("app", user, session)
            invocation_id = await store.enqueue("app", user, session, "hi", None, None)
            status = ("completed", "parked", "queued", "completed")[n % 4]
            if status != "queued":
                await _run(store, invocation_id, status, [PendingCall(id="c1", name="approve")] if
                           status == "parked" else [])
            ids[status].append(invocation_id)
    redis = store.redis
    async for key in redis.scan_iter(match="agentq:{*}:i:*"):
        if key.endswith((":journal", ":settled")):
            continue
        await redis.hdel(key, "counted")
        if await redis.hget(key, "status") == "completed":
            await redis.pexpire(key, 3_600_000)  # the previous release's TTL on a final record
    await redis.delete(keys.status_counts(), keys.app_parked("app"), keys.retention_due(), layout_key())
    return ids


async def _assert_counts_equal_a_scan(store) -> None:
    truth: Counter = Counter()
    async for key in store.redis.scan_iter(match="agentq:{*}:i:*"):
        if not key.endswith((":journal", ":settled")):
            app, user, status = await store.redis.hmget(key, "app_name", "user_id", "status")
            truth.update([("all", status), ((app, user), status)])
    assert await count_by_status(store.redis, cluster=False) == {s: truth["all", s] for s in STATUSES}
    for user in USERS:
        assert await count_by_status(store.redis, cluster=False, apps=["app"], users=[user]) == {
            s: truth[("app", user), s] for s in STATUSES}, user


async def test_a_migration_counts_indexes_and_hands_ttls_to_retention_and_a_second_one_does_nothing(
        store, sync_client):
    ids = await _previous_release_store(store)
    report = migrate.migrate_store(sync_client, retention_s=3600, owner="test")
    assert (report.from_version, report.to_version) == (0, LAYOUT_VERSION)
    assert report.records == report.counted == 12
    assert report.indexed == len(ids["parked"]) == 3
    assert report.persisted == len(ids["completed"]) == 6
    assert report.due == 12
    await _assert_counts_equal_a_scan(store)
    members = await store.redis.zrange(keys.app_parked("app"), 0, -1)
    assert sorted(members) == sorted(dumps([user, i]) for user, i in zip(USERS, ids["parked"], strict=True))
    for invocation_id in ids["completed"]:
        app, user, _ = json.loads(await store.redis.hget(keys.invocation_index(), invocation_id))
        assert await store.redis.pttl(keys.invocation(app, user, invocation_id)) == -1
        assert await store.redis.zscore(keys.retention_due(), invocation_id) is not None
    assert await store.redis.hget(layout_key(), "version") == str(LAYOUT_VERSION)
    assert migrate.migrate_store(sync_client, retention_s=3600, owner="test") is None  # at the layout already
    await store.redis.hdel(layout_key(), "version")
    again = migrate.migrate_store(sync_client, retention_s=3600, owner="test")
    assert (again.records, again.counted, again.indexed, again.persisted, again.due) == (12, 0, 0, 0, 0)
    await _assert_counts_equal_a_scan(store)


async def test_parked_invocations_answered_while_a_migration_runs_are_counted_once(store, sync_client,
                                                                                    monkeypatch):
    ids = await _previous_release_store(store)
    monkeypatch.setattr(migrate, "SCAN_COUNT", 2)
    loop = asyncio.get_running_loop()
    waiting = list(ids["parked"])

    def answer_one_between_batches(_report) -> None:  # an approver answers while the migration goes on
        if waiting:
            answer = store.respond(waiting.pop(), [{"id": "c1", "name": "approve", "response": {"ok": True}}])
            assert asyncio.run_coroutine_threadsafe(answer, loop).result(timeout=30).status == "queued"

    await asyncio.to_thread(migrate.migrate_store, sync_client, retention_s=3600, owner="test",
                            on_batch=answer_one_between_batches)
    assert not waiting
    await _assert_counts_equal_a_scan(store)
    assert await store.redis.hget(keys.status_counts(), UNDERFLOWS) is None


async def test_a_stopped_migration_goes_on_from_where_it_stopped(store, sync_client, monkeypatch):
    await _previous_release_store(store)
    monkeypatch.setattr(migrate, "SCAN_COUNT", 2)
    batches = []

    def stop_after_two(report) -> None:
        batches.append(report.records)
        if len(batches) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        migrate.migrate_store(sync_client, retention_s=3600, owner="test", on_batch=stop_after_two)
    assert await store.redis.hget(layout_key(), "cursor") not in (None, "0")
    assert await store.redis.get("agentq:layout:migrating") is None  # the lock is let go
    report = migrate.migrate_store(sync_client, retention_s=3600, owner="test")
    assert report.resumed
    assert report.records + batches[-1] >= 12
    await _assert_counts_equal_a_scan(store)


async def _layout_1_counts(store) -> dict[str, str]:
    """The status counts put back as layout 1's scripts kept them (one counter per status in each of three
    scopes, a counter at zero left out of the hash), worked out from the records' statuses, and the store
    stamped with layout 1; the counters written."""
    redis = store.redis
    counters: Counter = Counter()
    async for key in redis.scan_iter(match="agentq:{*}:i:*"):
        if not key.endswith((":journal", ":settled")):
            app, user, status = await redis.hmget(key, "app_name", "user_id", "status")
            counters.update([status, f"{app_scope(app)}{status}", f"{user_scope(app, user)}{status}"])
    layout_1 = {field: str(n) for field, n in counters.items()}
    await redis.delete(keys.status_counts())
    await redis.hset(keys.status_counts(), mapping=layout_1)
    await redis.hset(layout_key(), "version", 1)
    return layout_1


async def test_a_layout_1_stores_per_status_counters_become_flows_that_read_the_same_and_keep_counting_exactly(
        redis_url, sync_client):
    store = InvocationStore(redis_url, celery_app=RecordingCelery(), retention=RetentionPolicy(settled_s=0.05))
    try:
        await _layout_1_counters_become_flows(store, sync_client)
    finally:
        await store.aclose()


async def _layout_1_counters_become_flows(store, sync_client) -> None:
    for app in ("app", "other/app"):
        for n, user in enumerate(USERS):
            session = f"s-{app}"
            await store.create_session(app, user, session)
            for status in ("completed", "parked", "failed", "completed")[: n + 2]:
                invocation_id = await store.enqueue(app, user, session, "hi", None, None)
                await _run(store, invocation_id, status, [PendingCall(id="c1", name="approve")] if
                           status == "parked" else [])
            await store.create_session(app, user, f"q-{app}")
            await store.enqueue(app, user, f"q-{app}", "hi", None, None)  # stays queued
    scopes = ({}, {"apps": ["app"]}, {"apps": ["other/app"]}, {"apps": ["app", "other/app"], "users": ["cé"]})
    before = [await count_by_status(store.redis, cluster=False, **scope) for scope in scopes]
    layout_1 = await _layout_1_counts(store)

    report = migrate.migrate_store(sync_client, retention_s=3600, owner="test")
    assert (report.from_version, report.to_version, report.counted) == (1, LAYOUT_VERSION, 0)
    assert report.flows == len(layout_1)
    assert f"  {len(layout_1)} per-status counter(s) turned into flows" in report.lines()
    left = await store.redis.hgetall(keys.status_counts())
    assert [field for field in left if field in layout_1] == []  # every counter of layout 1 is gone
    assert sorted(left["!apps"].split()) == ["app", "other%2Fapp"]
    for scope, counts in zip(scopes, before, strict=True):
        assert await count_by_status(store.redis, cluster=False, **scope) == counts, scope
    await _assert_counts_equal_a_scan(store)

    # and the transitions go on from there: every parked one answered and completed, every final one swept
    for record in [r for user in USERS for r in await store.list_invocations("app", user, "parked")]:
        await store.respond(record.id, [{"id": "c1", "name": "approve", "response": {"ok": True}}])
        claim = await lease.acquire(store, record.id, "w")
        assert await lease.consume_responses(store, claim, claim.response_fields)
        assert (await lease.settle(store, claim, "completed"))[0] == "ok"
    await _assert_counts_equal_a_scan(store)
    await asyncio.sleep(0.1)  # every final record is past its retention
    while any(n for status, n in (await count_by_status(store.redis, cluster=False)).items()
              if status in ("completed", "failed")):
        await store.redis.zadd(keys.retention_due(), dict.fromkeys(
            await store.redis.zrange(keys.retention_due(), 0, -1), 0))
        await sweep_once(store)
    await _assert_counts_equal_a_scan(store)
    await store.redis.hdel(layout_key(), "version")
    assert migrate.migrate_store(sync_client, retention_s=3600, owner="test").flows == 0  # nothing left to turn


def _agentq(redis_url: str, *argv: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agentq.cli", *argv], capture_output=True, text=True, timeout=120,
                          cwd=ROOT, env={**os.environ, "AGENTQ_REDIS_URL": redis_url, "PYTHONPATH": str(ROOT),
                                         **(env or {})})


@pytest.mark.parametrize("command", [["worker", "--app", "tests.worker.apps:approval_app"], ["api"], ["scheduler"],
                                     ["get", "e-1"]])
def test_every_process_refuses_a_store_of_a_newer_layout_naming_both_versions(redis_url, sync_client, command):
    sync_client.hset(layout_key(), "version", LAYOUT_VERSION + 1)
    done = _agentq(redis_url, *command)
    assert done.returncode == 2, done
    said = done.stderr
    assert f"version {LAYOUT_VERSION + 1}, newer than this code's {LAYOUT_VERSION}" in said, said


def test_a_process_refuses_an_older_store_when_migrating_at_start_is_off_and_agentq_migrate_brings_it_forward(
        redis_url, sync_client):
    sync_client.hset("agentq:{app/ann}:i:e-old", mapping={"app_name": "app", "user_id": "ann", "status": "parked",
                                                          "created_at": "1.5", "session_id": "s"})
    refused = _agentq(redis_url, "get", "e-old", env={"AGENTQ_MIGRATE_AT_START": "off"})
    assert refused.returncode == 2, refused
    assert f"version 0, older than this code's {LAYOUT_VERSION}" in refused.stderr
    assert "agentq migrate" in refused.stderr
    done = _agentq(redis_url, "migrate")
    assert done.returncode == 0, done
    assert f"layout 0 -> {LAYOUT_VERSION}" in done.stdout
    assert "1 counted in the status counts" in done.stdout
    assert "per 100,000 invocations" in done.stdout
    assert sync_client.hmget(keys.status_counts(), ["a:app:>parked", "u:app/ann:>parked"]) == ["1", "1"]
    assert _agentq(redis_url, "migrate", "--check").returncode == 0


def test_a_worker_refuses_to_start_beside_a_worker_of_the_previous_release(redis_url, sync_client):
    import time

    # what a worker of the previous release writes: its announcement (no layout) and its beats
    sync_client.hset(keys.workers(), "old-w", json.dumps({"pid": 1, "apps": ["echo"], "started_at": time.time()}))
    sync_client.zadd(keys.workers_alive(), {"old-w": int(time.time() * 1000) + 60_000})
    sync_client.hset(layout_key(), "version", LAYOUT_VERSION)
    done = _agentq(redis_url, "worker", "--app", "tests.worker.apps:approval_app")
    assert done.returncode == 2, done
    assert "old-w (layout 0)" in done.stderr and f"this code is layout {LAYOUT_VERSION}" in done.stderr


def _plain_celery_worker(redis_url: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "celery", "-A", "worker.celery_main", "worker", "-n", "plain@here",
                           "--pool", "solo"], capture_output=True, text=True, timeout=120, cwd=ROOT,
                          env={**os.environ, "AGENTQ_REDIS_URL": redis_url, "PYTHONPATH": str(ROOT),
                               "AGENTQ_APPS": "tests.worker.apps:approval_app", "AGENTQ_WEBHOOKS_UNSIGNED": "1",
                               **(env or {})})


def test_a_plain_celery_worker_refuses_a_store_of_a_newer_layout_naming_both_versions(redis_url, sync_client):
    sync_client.hset(layout_key(), "version", LAYOUT_VERSION + 1)
    done = _plain_celery_worker(redis_url)
    assert done.returncode == 2, done
    assert f"version {LAYOUT_VERSION + 1}, newer than this code's {LAYOUT_VERSION}" in done.stderr, done.stderr
    assert sync_client.hlen(keys.workers()) == 0  # it never announced itself


def test_a_plain_celery_worker_refuses_an_older_store_when_migrating_at_start_is_off(redis_url, sync_client):
    sync_client.hset("agentq:{app/ann}:i:e-old", mapping={"app_name": "app", "user_id": "ann", "status": "parked",
                                                          "created_at": "1.5", "session_id": "s"})
    done = _plain_celery_worker(redis_url, env={"AGENTQ_MIGRATE_AT_START": "off"})
    assert done.returncode == 2, done
    assert f"version 0, older than this code's {LAYOUT_VERSION}" in done.stderr, done.stderr


async def test_a_running_record_the_previous_releases_sigterm_left_with_no_worker_is_sent_to_run_again_once(
        store, sync_client):
    from worker.fleet.reaper import reap_once

    for session in ("orphan", "held"):
        await store.create_session("app", "ann", session)
    orphan = await store.enqueue("app", "ann", "orphan", "hi", None, None)
    held = await store.enqueue("app", "ann", "held", "hi", None, None)
    # what the previous release's hand-back at SIGTERM leaves when its re-sent run job is lost with the stopping
    # worker: the record `running`, handed back, no lease and no reaper entry
    for invocation_id in (orphan, held):
        sync_client.hset(keys.invocation("app", "ann", invocation_id),
                         mapping={"status": "running", "handed_back": 1, "worker": "old-w"})
        sync_client.hdel(keys.invocation("app", "ann", invocation_id), "counted")
    sync_client.set(keys.session_lease("app", "ann", "held"), "a live worker's token")  # this one is held
    sync_client.delete(keys.dispatch_due(), keys.lease_expiries(), keys.status_counts(), layout_key())

    report = migrate.migrate_store(sync_client, retention_s=3600, owner="test")
    assert report.requeued == 1
    assert "  1 running one(s) no worker held sent to run again" in report.lines()
    assert sync_client.zscore(keys.dispatch_due(), held) is None
    broker = RecordingCelery()
    reaper = InvocationStore(store.redis_url, celery_app=broker)
    try:
        await reap_once(reaper)
        await reap_once(reaper)
    finally:
        await reaper.aclose()
    assert broker.sent == [orphan]  # sent once: the reaper's ZREM took its entry
    assert migrate.migrate_store(sync_client, retention_s=3600, owner="test") is None  # migrated: never again
