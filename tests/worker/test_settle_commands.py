"""What the settle script (``runtime/redis_store/lua/invocations/settle.lua``, ``lib/settle_step.lua``) sends
Redis, seen on a real redis-server through MONITOR: the work it skips when it can, and the work it keeps doing
when it must (issue 26: the Redis commands per invocation).

The store and the lease functions run in this process against the package's redis-server (conftest), with a
broker that records what is sent.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

import redis as redis_sync

from runtime.redis_store import keys
from worker.fleet import lease
from worker.records.store import InvocationStore

from .test_lifecycle import RecordingCelery

DONE = "agentq-test-monitor-done"


@contextmanager
def monitored(url: str):
    """The commands the server ran meanwhile (inside scripts too), each as its list of arguments."""
    seen: list[list[str]] = []
    client = redis_sync.Redis.from_url(url, decode_responses=True)
    started = threading.Event()

    def listen() -> None:
        with client.monitor() as monitor:
            started.set()
            for line in monitor.listen():
                words = line["command"].split(" ")
                if words == ["ECHO", DONE]:
                    return
                seen.append(words)

    thread = threading.Thread(target=listen, daemon=True)
    thread.start()
    started.wait(10)
    client.ping()  # MONITOR is in place once a command after it is seen: PING is sent after it
    try:
        yield seen
    finally:
        client.echo(DONE)
        thread.join(10)
        client.close()


async def _store_with_an_invocation(redis_url: str) -> tuple[InvocationStore, str]:
    store = InvocationStore(redis_url, celery_app=RecordingCelery())
    await store.create_session("app", "u", "s")
    return store, await store.enqueue("app", "u", "s", "hello", None, None)


def _touching(seen: list[list[str]], key: str) -> list[list[str]]:
    return [words[:3] for words in seen if key in words[1:3]]


async def test_a_settle_before_any_heartbeat_leaves_lease_expiries_alone(redis_url):
    store, invocation_id = await _store_with_an_invocation(redis_url)
    try:
        claim = await lease.acquire(store, invocation_id, "w")
        with monitored(redis_url) as seen:
            assert (await lease.settle(store, claim, "completed"))[0] == "ok"
        assert _touching(seen, keys.lease_expiries()) == []
        assert (await store.get(invocation_id)).status == "completed"
    finally:
        await store.aclose()


async def test_a_settle_after_a_heartbeat_takes_the_invocation_out_of_lease_expiries(redis_url):
    store, invocation_id = await _store_with_an_invocation(redis_url)
    try:
        claim = await lease.acquire(store, invocation_id, "w", ttl_s=60)
        assert await lease.heartbeat(store, [claim]) == [True]
        assert await store.redis.zscore(keys.lease_expiries(), invocation_id) is not None
        with monitored(redis_url) as seen:
            assert (await lease.settle(store, claim, "completed"))[0] == "ok"
        assert _touching(seen, keys.lease_expiries()) == [["ZREM", keys.lease_expiries(), invocation_id]]
        assert await store.redis.zscore(keys.lease_expiries(), invocation_id) is None
    finally:
        await store.aclose()


async def test_a_settle_of_a_run_taken_over_from_an_earlier_holder_takes_its_entry_out_of_lease_expiries(redis_url):
    """The earlier holder's heartbeat left the entry; this claim never beat, but it was interrupted."""
    store, invocation_id = await _store_with_an_invocation(redis_url)
    try:
        first = await lease.acquire(store, invocation_id, "w1", ttl_s=0.05)
        assert await lease.heartbeat(store, [first], ttl_s=0.05) == [True]
        await store.redis.delete(keys.session_lease("app", "u", "s"))  # its lease ran out: w1 is gone
        second = await lease.acquire(store, invocation_id, "w2")
        assert (second.tracked, second.interrupted) == (False, True)
        assert (await lease.settle(store, second, "completed"))[0] == "ok"
        assert await store.redis.zscore(keys.lease_expiries(), invocation_id) is None
    finally:
        await store.aclose()


async def test_a_settle_reads_its_streams_head_once_and_gives_the_idle_stream_its_ttl(redis_url):
    """The trim by age needs the length and the oldest entry: one XINFO STREAM, not XLEN + XRANGE (+ TIME: the
    settle's own status entry id is the clock); no invocation left active, the stream expires by itself."""
    store, invocation_id = await _store_with_an_invocation(redis_url)
    try:
        claim = await lease.acquire(store, invocation_id, "w")
        stream = keys.session_stream("app", "u", "s")
        with monitored(redis_url) as seen:
            assert (await lease.settle(store, claim, "completed"))[0] == "ok"
        assert [words[0] for words in _touching(seen, stream)] == ["XADD", "XINFO", "PEXPIRE"]
        assert [words[0] for words in seen if words[0] == "TIME"] == []
        assert 0 < await store.redis.pttl(stream) <= store.retention.stream_max_age_s * 1000
    finally:
        await store.aclose()
