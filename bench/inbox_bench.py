"""Inbox and listing benchmark: the first page at 10,000 parked, or behind 100,000 completed, vs at 20.

    .venv/bin/python -m bench.inbox_bench            # full sizes
    .venv/bin/python -m bench.inbox_bench --quick    # a tenth of them

Four users in one embedded redis-server (AOF on): 20 parked invocations (the anchor), 10,000 parked, 100,000
completed plus 20 parked, and, for the record of what changed, 5,000 completed (the issue's case) read the way
the inbox was read before (a scan of the user's whole history). A parked and a completed record are made by the
real scripts (enqueue, claim, settle), then cloned under new ids with the index entries those scripts write, so
the stores hold what a deployment would hold without running 110,000 agents. Users' sessions: 20 vs 10,000.

Timed one call after another, the users interleaved, median of many calls, each ratio against the anchor
measured in the same run: the store's first page (page size 20) of the parked inbox, of the full listing and
of the sessions, and the same inbox page over HTTP (the API in-process over httpx's ASGI transport).
Target (DESIGN 7): within 1.5x. A walk over every page of the 10,000-parked inbox checks nothing is lost or
repeated.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time

PAGE = 20
APP = "approval"


class _NoBroker:
    """Run jobs go nowhere: no worker runs these invocations."""

    def send_task(self, *args, **kwargs) -> None:
        pass


async def _template(store, status: str) -> dict[str, str]:
    """A record as the real scripts leave it: parked on one call, or completed."""
    from worker.fleet import lease
    from worker.records.record import PendingCall

    user = f"template-{status}"
    session = await store.create_session(APP, user)
    invocation_id = await store.enqueue(APP, user, session.id, "Please approve a payment of 100", None, None)
    claim = await lease.acquire(store, invocation_id, "bench")
    if status == "parked":
        await lease.add_pending(store, claim, [PendingCall(id="call-1", name="ask_for_approval",
                                                           args={"amount": 100, "purpose": "lunch"})])
    await lease.settle(store, claim, status)
    return await store.fields(store.record_key(invocation_id, claim.where))


async def _clone(store, user: str, template: dict[str, str], n: int, status: str, start: float) -> None:
    """``n`` copies of ``template`` for ``user``, indexed as ENQUEUE and SETTLE index them."""
    from runtime.redis_store import keys

    redis = store.redis
    for first in range(0, n, 2000):
        pipe = redis.pipeline(transaction=False)
        for i in range(first, min(n, first + 2000)):
            invocation_id = f"e-{user}-{status}-{i:07d}"
            created = start + i * 0.001
            fields = {**template, "id": invocation_id, "user_id": user, "session_id": f"s-{i % 50}",
                      "created_at": repr(created)}
            pipe.hset(keys.invocation(APP, user, invocation_id), mapping=fields)
            pipe.zadd(keys.user_invocations(APP, user), {invocation_id: created})
            if status == "parked":
                pipe.zadd(keys.user_parked(APP, user), {invocation_id: created})
            pipe.hset(keys.invocation_index(), invocation_id, json.dumps([APP, user, f"s-{i % 50}"]))
        await pipe.execute()


async def _sessions(store, user: str, n: int) -> None:
    for first in range(0, n, 500):
        await asyncio.gather(*(store.create_session(APP, user, f"session-{i:06d}")
                               for i in range(first, min(n, first + 500))))


async def _legacy_inbox(store, user: str, limit: int) -> list:
    """The inbox as it was read before its own index: the user's whole history, newest first, filtered."""
    from runtime.redis_store import keys
    from worker.records.codec import decode_record

    ids = await store.redis.zrevrange(keys.user_invocations(APP, user), 0, -1)
    found = []
    for start in range(0, len(ids), 200):
        pipe = store.redis.pipeline(transaction=False)
        for invocation_id in ids[start : start + 200]:
            pipe.hgetall(keys.invocation(APP, user, invocation_id))
        for fields in await pipe.execute():
            if fields and (record := decode_record(fields)).status == "parked":
                found.append(record)
                if len(found) >= limit:
                    return found
    return found


async def _median_ms(calls: dict, rounds: int) -> dict[str, float]:
    """Median milliseconds of each named call, the calls interleaved round by round."""
    samples: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(rounds):
        for name, call in calls.items():
            t0 = time.perf_counter()
            await call()
            samples[name].append(time.perf_counter() - t0)
    return {name: statistics.median(values) * 1000 for name, values in samples.items()}


async def run(scale: float, rounds: int) -> dict:
    import httpx

    from api import ApiSettings, create_app
    from api.services import redis_services
    from runtime.redis_store.launcher import EmbeddedRedis
    from worker.records.listing import invocations_page, sessions_page
    from worker.records.store import InvocationStore

    many_parked, many_completed, legacy_completed = int(10_000 * scale), int(100_000 * scale), int(5_000 * scale)
    many_sessions = int(10_000 * scale)
    with tempfile.TemporaryDirectory() as tmp, EmbeddedRedis(tmp) as server:
        store = InvocationStore(server.url, celery_app=_NoBroker())
        parked, completed = await _template(store, "parked"), await _template(store, "completed")
        now = time.time()
        await _clone(store, "few", parked, 20, "parked", now)
        await _clone(store, "many-parked", parked, many_parked, "parked", now)
        await _clone(store, "long-history", completed, many_completed, "completed", now - 86_400)
        await _clone(store, "long-history", parked, 20, "parked", now)
        await _clone(store, "legacy", completed, legacy_completed, "completed", now)
        await _sessions(store, "few", 20)
        await _sessions(store, "many-sessions", many_sessions)

        def inbox(user):
            return lambda: invocations_page(store, APP, user, status="parked", page_size=PAGE)

        def listing(user):
            return lambda: invocations_page(store, APP, user, page_size=PAGE)

        def sessions(user):
            return lambda: sessions_page(store, APP, user, page_size=PAGE)

        backed = redis_services(server.url)
        app = create_app(ApiSettings(app_names=[APP]), backed.services)
        transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 40000))
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as http:

            def over_http(user):
                url = f"/apps/{APP}/users/{user}/invocations"
                return lambda: http.get(url, params={"status": "parked", "limit": PAGE})

            for call in (inbox("few"), sessions("few"), over_http("few")):  # warm up: scripts loaded, pools open
                await call()
            timed = await _median_ms({
                "inbox_20_parked": inbox("few"), "inbox_many_parked": inbox("many-parked"),
                "inbox_long_history": inbox("long-history"),
                "listing_20": listing("few"), "listing_long_history": listing("long-history"),
                "sessions_20": sessions("few"), "sessions_many": sessions("many-sessions"),
                "http_inbox_20_parked": over_http("few"), "http_inbox_many_parked": over_http("many-parked"),
                "http_inbox_long_history": over_http("long-history"),
            }, rounds)
            legacy = await _median_ms({"legacy_20_parked": lambda: _legacy_inbox(store, "few", PAGE),
                                       "legacy_long_history": lambda: _legacy_inbox(store, "legacy", PAGE)},
                                      max(5, rounds // 20))
        walked, pages, token = [], 0, None
        while True:
            page = await invocations_page(store, APP, "many-parked", status="parked", page_size=PAGE * 10,
                                          page_token=token)
            walked += [record.id for record in page.items]
            pages += 1
            token = page.next_page_token
            if token is None:
                break
        await backed.aclose()
        await store.aclose()
    return {"sizes": {"parked": many_parked, "completed": many_completed, "sessions": many_sessions,
                      "legacy_completed": legacy_completed, "page_size": PAGE},
            "ms": {**timed, **legacy},
            "walk": {"pages": pages, "items": len(walked), "distinct": len(set(walked))}}


def report(results: dict) -> bool:
    """Print the table and the checks; True when every target is met."""
    ms, sizes = results["ms"], results["sizes"]
    print(json.dumps(results, indent=2))
    rows = [
        (f"inbox first page, {sizes['parked']:,} parked vs 20", "inbox_many_parked", "inbox_20_parked", 1.5),
        (f"inbox first page, {sizes['completed']:,} completed + 20 parked vs 20", "inbox_long_history",
         "inbox_20_parked", 1.5),
        (f"full listing first page, {sizes['completed']:,} invocations vs 20", "listing_long_history",
         "listing_20", 1.5),
        (f"sessions first page, {sizes['sessions']:,} sessions vs 20", "sessions_many", "sessions_20", 1.5),
        (f"HTTP inbox first page, {sizes['parked']:,} parked vs 20", "http_inbox_many_parked",
         "http_inbox_20_parked", 1.5),
        (f"HTTP inbox first page, {sizes['completed']:,} completed + 20 parked vs 20", "http_inbox_long_history",
         "http_inbox_20_parked", 1.5),
    ]
    ok = True
    for label, measured, anchor, target in rows:
        ratio = ms[measured] / ms[anchor]
        ok &= ratio <= target
        print(f"{'PASS' if ratio <= target else 'MISS'} {label}: {ms[measured]:.3f} ms vs {ms[anchor]:.3f} ms = "
              f"{ratio:.2f}x (target <= {target}x)")
    legacy = ms["legacy_long_history"] / ms["legacy_20_parked"]
    print(f"INFO before (a scan of the user's history), {sizes['legacy_completed']:,} completed vs 20 parked: "
          f"{ms['legacy_long_history']:.3f} ms vs {ms['legacy_20_parked']:.3f} ms = {legacy:.1f}x")
    walk = results["walk"]
    whole = walk["items"] == walk["distinct"] == sizes["parked"]
    ok &= whole
    print(f"{'PASS' if whole else 'MISS'} every page of the {sizes['parked']:,}-parked inbox: {walk['items']:,} items "
          f"in {walk['pages']} pages, {walk['distinct']:,} distinct")
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a tenth of the sizes, fewer rounds")
    args = parser.parse_args(argv)
    results = asyncio.run(run(0.1 if args.quick else 1.0, 100 if args.quick else 400))
    report(results)  # PASS/MISS lines; like the other parts, a miss is reported, not an error
    return 0


if __name__ == "__main__":
    sys.exit(main())
