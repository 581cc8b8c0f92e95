"""api.streams.change_feed: one follower per API process reads the inbox change feed (real redis-server) and hands each
change to the subscribers that may see it. The entries are appended here as the status scripts append them
(``keys.inbox_changes``: app, user, inv, change), so the follower is tested apart from any worker."""

from __future__ import annotations

import asyncio

import redis.asyncio as aioredis

from api.streams.change_feed import ChangeFeed, Subscription, Update
from runtime.redis_store import keys
from worker.client import AgentqClient
from worker.records.inbox_feed import InboxChangeEntry


async def _append(redis, app: str, user: str, invocation_id: str, change: str) -> None:
    await redis.xadd(keys.inbox_changes(""), {"app": app, "user": user, "inv": invocation_id, "change": change})


def _seen(update: Update) -> list[tuple[str, str, str, str]]:
    return [(c.app, c.user, c.invocation_id, c.change) for c in update.changes]


async def _commands_processed(redis) -> int:
    return int((await redis.info("stats"))["total_commands_processed"])


async def test_each_subscriber_gets_only_the_changes_it_may_see_and_an_idle_feed_sends_nothing(redis_url):
    client = AgentqClient(redis_url, reads_only=True)
    redis = aioredis.Redis.from_url(redis_url, decode_responses=True)
    await _append(redis, "weather", "alice", "e-before", "parked")  # before anyone follows: nobody is told
    feed = ChangeFeed(client.inbox, block_ms=60_000)
    async with feed.subscribe(lambda app, user: user == "alice") as alice, \
            feed.subscribe(lambda app, user: app == "weather") as weather:
        before = await _commands_processed(redis)
        await asyncio.sleep(1.0)  # idle: the follower's one read stays blocked
        idle = await _commands_processed(redis) - before - 1  # the first INFO counts itself in the second
        await _append(redis, "weather", "bob", "e-1", "parked")
        await _append(redis, "reimbursement", "alice", "e-2", "parked")
        await _append(redis, "reimbursement", "carol", "e-3", "parked")  # neither may see it
        await _append(redis, "weather", "alice", "e-4", "answered")
        got_alice, got_weather = [], []
        while len(got_alice) < 2:
            got_alice += _seen(await asyncio.wait_for(alice.next(), 10))
        while len(got_weather) < 2:
            got_weather += _seen(await asyncio.wait_for(weather.next(), 10))
        reads = feed.reads
    assert (idle, feed.subscribers) == (0, 0)
    assert got_alice == [("reimbursement", "alice", "e-2", "parked"), ("weather", "alice", "e-4", "answered")]
    assert got_weather == [("weather", "bob", "e-1", "parked"), ("weather", "alice", "e-4", "answered")]
    print(f"blocking reads for 4 changes to 2 subscribers: {reads}")
    await redis.aclose()
    await client.aclose()


async def test_the_follower_stops_with_its_last_subscriber_and_a_new_one_starts_at_the_newest_change(redis_url):
    client = AgentqClient(redis_url, reads_only=True)
    redis = aioredis.Redis.from_url(redis_url, decode_responses=True)
    feed = ChangeFeed(client.inbox, block_ms=60_000)
    async with feed.subscribe(lambda app, user: True) as first:
        await _append(redis, "weather", "alice", "e-1", "parked")
        got_first = _seen(await asyncio.wait_for(first.next(), 10))
    # the follower's blocking read ends with its connection, which the server notices a moment later
    for _ in range(100):
        blocked_clients = int((await redis.info("clients"))["blocked_clients"])
        if blocked_clients == 0:
            break
        await asyncio.sleep(0.05)
    await _append(redis, "weather", "alice", "e-2", "answered")  # nobody follows: nobody is told
    async with feed.subscribe(lambda app, user: True) as second:
        await _append(redis, "weather", "alice", "e-3", "parked")
        got_second = _seen(await asyncio.wait_for(second.next(), 10))
    assert got_first == [("weather", "alice", "e-1", "parked")]
    assert blocked_clients == 0
    assert got_second == [("weather", "alice", "e-3", "parked")]
    await redis.aclose()
    await client.aclose()


async def test_a_follower_that_fell_behind_the_trim_tells_every_subscriber_to_reload(redis_url):
    from worker.records import inbox_feed

    client = AgentqClient(redis_url, reads_only=True)
    redis = aioredis.Redis.from_url(redis_url, decode_responses=True)
    cursor = await client.inbox.feed_cursor()
    # Three reads' worth arrive while the reader is away, and the stream keeps one read's worth.
    kept = inbox_feed.READ_COUNT
    for n in range(3 * kept):
        await redis.xadd(keys.inbox_changes(""), {"app": "a", "user": "u", "inv": f"e-{n}", "change": "parked"},
                         maxlen=kept, approximate=False)
    behind = await client.inbox.read_changes(cursor, block_ms=100)
    caught_up = await client.inbox.read_changes(cursor, block_ms=100)
    fresh = await client.inbox.feed_cursor()
    for n in range(inbox_feed.READ_COUNT):  # a full read that lost nothing: no reload
        await _append(redis, "a", "u", f"f-{n}", "parked")
    whole = await client.inbox.read_changes(fresh, block_ms=100)
    assert (behind.behind, len(behind.changes), behind.changes[0].invocation_id) == (True, kept, f"e-{2 * kept}")
    assert (caught_up.behind, caught_up.changes) == (False, [])
    assert (whole.behind, [c.invocation_id for c in whole.changes]) == (
        False, [f"f-{n}" for n in range(inbox_feed.READ_COUNT)])
    await redis.aclose()
    await client.aclose()


def test_a_subscriber_that_does_not_keep_up_gets_one_reload_instead_of_a_growing_backlog():
    from api.streams import change_feed

    subscription = Subscription(lambda app, user: user == "ann")
    change = InboxChangeEntry(id="1-0", app="a", user="ann", invocation_id="e-1", change="parked")
    other = InboxChangeEntry(id="1-1", app="a", user="bob", invocation_id="e-2", change="parked")
    for _ in range(change_feed.MAX_PENDING + 1):
        subscription.offer([change, other])
    overflowed = asyncio.run(subscription.next())
    subscription.offer([change, other])
    after = asyncio.run(subscription.next())
    assert overflowed == Update(changes=[], reload=True)
    assert after == Update(changes=[change], reload=False)


async def test_on_a_cluster_the_follower_reads_every_shard_and_picks_up_shards_registered_later(redis_cluster_url):
    from runtime.redis_store.redis_url import redis_client_from_url
    from worker.config.shards import register, shard_of

    client = AgentqClient(redis_cluster_url, reads_only=True)
    redis = redis_client_from_url(redis_cluster_url, decode_responses=True)
    users = [f"user-{n}" for n in range(40)]
    shards = {shard_of("app", user, cluster=True) for user in users}
    first, *later = sorted(shards)
    await register(redis, first)
    feed = ChangeFeed(client.inbox, block_ms=60_000, shards_every_s=0.0)  # looks for new shards before each read
    async with feed.subscribe(lambda app, user: True) as everyone:
        for shard in later:
            await register(redis, shard)
        expected = set()
        for user in users:
            shard = shard_of("app", user, cluster=True)
            await redis.xadd(keys.inbox_changes(shard), {"app": "app", "user": user, "inv": f"e-{user}",
                                                         "change": "parked"})
            expected.add(f"e-{user}")
        seen: set[str] = set()
        while seen != expected:
            seen |= {change.invocation_id for change in (await asyncio.wait_for(everyone.next(), 30)).changes}
    assert (len(shards) > 1, seen) == (True, expected)
    await redis.aclose()
    await client.aclose()
