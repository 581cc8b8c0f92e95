"""worker.records.inbox: the parked inbox merged across (app, user) pairs on the server, paged by an exact cursor."""

from __future__ import annotations

import json

import pytest
import redis.asyncio as aioredis

from runtime.errors import UsageError
from runtime.redis_store import keys
from worker.records.inbox import fingerprint, parked_page, user_pairs


async def _park(redis, app: str, user: str, invocation_id: str, created: float) -> None:
    await redis.hset(keys.invocation(app, user, invocation_id), mapping={
        "id": invocation_id, "app_name": app, "user_id": user, "session_id": "s", "status": "parked",
        "created_at": repr(created), "updated_at": repr(created), "attempts": "0"})
    await redis.zadd(keys.user_parked(app, user), {invocation_id: created})
    await redis.sadd(keys.app_users(app), user)
    await redis.hset(keys.invocation_index(), invocation_id, json.dumps([app, user, "s"]))


async def _walk(redis, pairs, page_size: int) -> list[str]:
    seen, token = [], None
    while True:
        page, _ = await parked_page(redis, pairs, page_size=page_size, page_token=token)
        seen += [record.id for record in page.items]
        if (token := page.next_page_token) is None:
            return seen


async def test_pages_list_every_parked_invocation_once_newest_first_even_when_times_tie(redis_url):
    redis = aioredis.Redis.from_url(redis_url)
    # Five users, three invocations each, all created in the same instant but one: ties order by id.
    for u in range(5):
        for i in range(3):
            await _park(redis, "app", f"user-{u}", f"e-{u}{i}", 100.0)
    await _park(redis, "app", "user-0", "e-newest", 200.0)
    pairs = await user_pairs(redis, ["app"], None)
    expected = ["e-newest", *sorted((f"e-{u}{i}" for u in range(5) for i in range(3)), reverse=True)]
    assert [await _walk(redis, pairs, size) for size in (1, 2, 4, 16)] == [expected] * 4
    first, total = await parked_page(redis, pairs, page_size=3)
    assert ([r.id for r in first.items], total) == (expected[:3], 16)
    await redis.aclose()


async def test_the_fingerprint_changes_when_an_invocation_parks_or_leaves(redis_url):
    redis = aioredis.Redis.from_url(redis_url)
    await _park(redis, "app", "ann", "e-1", 1.0)
    pairs = [("app", "ann"), ("app", "bob")]
    before = await fingerprint(redis, pairs)
    await _park(redis, "app", "bob", "e-2", 2.0)
    parked = await fingerprint(redis, pairs)
    await redis.zrem(keys.user_parked("app", "ann"), "e-1")
    left = await fingerprint(redis, pairs)
    assert (before[0], parked[0], left[0]) == (1, 2, 1)
    assert len({before[1], parked[1], left[1]}) == 3
    await redis.aclose()


async def test_a_page_token_that_was_not_handed_out_is_refused_as_bad_input(redis_url):
    from runtime.errors import UsageError
    from worker.records.listing import encode_token

    redis = aioredis.Redis.from_url(redis_url)
    for token in ("bogus", encode_token("p", "not-a-time", "e-1"), encode_token("p", 1.0), encode_token("s", "x")):
        with pytest.raises(UsageError, match="is not one this listing handed out"):
            await parked_page(redis, [("app", "ann")], page_token=token)
    await redis.aclose()


async def test_the_app_wide_page_lists_every_user_s_parked_invocations_once_newest_first_from_one_index(redis_url):
    from worker.fleet import lease
    from worker.records.inbox import app_wide_page
    from worker.records.listing import encode_token
    from worker.records.record import PendingCall
    from worker.records.store import InvocationStore

    class NoBroker:
        def send_task(self, *args, **kwargs) -> None:
            pass

    store = InvocationStore(redis_url, celery_app=NoBroker())
    made = []
    for n, (app, user) in enumerate([("a", "ann"), ("b", "bob"), ("a", "bob"), ("a", "cy"), ("b", "ann"),
                                     ("a", "ann")]):
        session = await store.create_session(app, user)
        invocation_id = await store.enqueue(app, user, session.id, f"pay {n}", None, None)
        claim = await lease.acquire(store, invocation_id, "w")
        await lease.add_pending(store, claim, [PendingCall(id=f"c{n}", name="approve")])
        await lease.settle(store, claim, "parked")
        made.append(invocation_id)
    answered = made[2]
    await store.respond(answered, [{"id": "c2", "name": "approve", "response": {"ok": True}}])
    seen, token, totals = [], None, []
    while True:
        page, total = await app_wide_page(store.redis, ["a", "b"], cluster=False, page_size=2, page_token=token)
        seen += [record.id for record in page.items]
        totals.append(total)
        if (token := page.next_page_token) is None:
            break
    only_a, total_a = await app_wide_page(store.redis, ["a"], cluster=False, page_size=10)
    assert (seen, set(totals)) == ([i for i in made[::-1] if i != answered], {5})
    assert ([r.id for r in only_a.items], total_a) == ([made[5], made[3], made[0]], 3)
    with pytest.raises(UsageError, match="is not one this listing handed out"):  # a per-user listing's token
        await app_wide_page(store.redis, ["a"], cluster=False, page_token=encode_token("p", 1.0, "e-1"))
    await store.aclose()
