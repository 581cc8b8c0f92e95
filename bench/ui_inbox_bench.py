"""The approver page's inbox (GET /inbox, across users) at 10,000 parked invocations vs 20.

    .venv/bin/python -m bench.ui_inbox_bench            # full sizes
    .venv/bin/python -m bench.ui_inbox_bench --quick    # a tenth of them

Three apps in one embedded redis-server: 20 parked invocations of one user (the anchor), 10,000 of one user,
and 10,000 spread over 1,000 users (10 each). Records are cloned from one made by the real scripts, with the
index entries those scripts write (as in bench/inbox_bench.py). The API runs in-process over httpx's ASGI
transport with no keys, so the page's widest view: ``/inbox?app=<app>`` merges every user of the app.

Timed one call after another, the apps interleaved, median of many calls. Target (DESIGN 7): the first page
within 1.5x of the anchor for 10,000 parked of one user. The spread case costs one sorted-set read per user
and is reported for the record (``worker/inbox.py`` says why).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time

from bench.inbox_bench import _median_ms, _NoBroker, _template

PAGE = 20


async def _clone(redis, app: str, users: list[str], per_user: int, template: dict[str, str], start: float) -> None:
    """``per_user`` parked copies of ``template`` for each of ``users`` in ``app``, indexed as the scripts do."""
    from runtime.redis_store import keys

    pipe = redis.pipeline(transaction=False)
    for u, user in enumerate(users):
        pipe.sadd(keys.app_users(app), user)
        for i in range(per_user):
            invocation_id = f"e-{app}-{user}-{i:06d}"
            created = start + (u * per_user + i) * 0.001
            pipe.hset(keys.invocation(app, user, invocation_id), mapping={
                **template, "id": invocation_id, "app_name": app, "user_id": user, "session_id": "s-1",
                "created_at": repr(created)})
            pipe.zadd(keys.user_parked(app, user), {invocation_id: created})
            pipe.hset(keys.invocation_index(), invocation_id, json.dumps([app, user, "s-1"]))
        if len(pipe) > 5000:
            await pipe.execute()
    await pipe.execute()


async def run(scale: float, rounds: int) -> dict:
    import httpx

    from api import ApiSettings, create_app
    from api.services import redis_services
    from runtime.redis_store.launcher import EmbeddedRedis
    from worker.store import InvocationStore

    many, spread_users = int(10_000 * scale), int(1_000 * scale)
    with tempfile.TemporaryDirectory() as tmp, EmbeddedRedis(tmp) as server:
        store = InvocationStore(server.url, celery_app=_NoBroker())
        template = await _template(store, "parked")
        now = time.time()
        await _clone(store.redis, "few", ["ann"], 20, template, now)
        await _clone(store.redis, "many", ["ann"], many, template, now)
        await _clone(store.redis, "spread", [f"user-{i:05d}" for i in range(spread_users)], 10, template, now)
        backed = redis_services(server.url)
        app = create_app(ApiSettings(app_names=["few", "many", "spread"]), backed.services)
        transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 40000))
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as http:

            def inbox(name: str, **params):
                return lambda: http.get("/inbox", params={"app": name, "limit": PAGE, **params})

            for name in ("few", "many", "spread"):
                assert len((await inbox(name)()).json()["invocations"]) == PAGE  # warm up, and check
            timed = await _median_ms({"inbox_20": inbox("few"), "inbox_many": inbox("many"),
                                      "inbox_spread": inbox("spread"),
                                      "inbox_spread_one_user": inbox("spread", user="user-00000")}, rounds)
            walked, token = [], None
            while True:
                params = {"pageToken": token} if token else {}
                page = (await inbox("spread", **params)()).json()
                walked += [item["invocationId"] for item in page["invocations"]]
                if not (token := page["nextPageToken"]):
                    break
        await backed.aclose()
        await store.aclose()
    return {"sizes": {"parked": many, "spread_users": spread_users, "page_size": PAGE}, "ms": timed,
            "walk": {"items": len(walked), "distinct": len(set(walked))}}


def report(results: dict) -> bool:
    """Print the figures; True when the 10,000-parked page is within 1.5x of the anchor and the walk is exact."""
    ms, sizes = results["ms"], results["sizes"]
    print(json.dumps(results, indent=2))
    ratio = ms["inbox_many"] / ms["inbox_20"]
    print(f"GET /inbox first page, {sizes['parked']:,} parked vs 20: {ratio:.2f}x (target <= 1.5x)")
    print(f"GET /inbox first page, {sizes['parked']:,} parked over {sizes['spread_users']:,} users vs 20: "
          f"{ms['inbox_spread'] / ms['inbox_20']:.2f}x (for the record)")
    walk_ok = results["walk"]["items"] == results["walk"]["distinct"] == sizes["spread_users"] * 10
    print(f"walk over every page of the spread inbox: {results['walk']} ({'ok' if walk_ok else 'WRONG'})")
    return ratio <= 1.5 and walk_ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of the sizes")
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args(argv)
    results = asyncio.run(run(0.1 if args.quick else 1.0, args.rounds))
    return 0 if report(results) else 1


if __name__ == "__main__":
    sys.exit(main())
