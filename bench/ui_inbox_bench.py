"""The approver page's inbox (GET /inbox, across users) at 10,000 parked invocations vs 20.

    .venv/bin/python -m bench.ui_inbox_bench            # full sizes
    .venv/bin/python -m bench.ui_inbox_bench --quick    # a tenth of them
    .venv/bin/python -m bench.ui_inbox_bench --idle-only    # only what an idle open page costs Redis

Three apps in one embedded redis-server: 20 parked invocations of one user (the anchor), 10,000 of one user,
and 10,000 spread over 1,000 users (10 each). Records are cloned from one made by the real scripts, with the
index entries those scripts write (the user's and the app-wide parked index, as in bench/inbox_bench.py). The
API runs in-process over httpx's ASGI transport with no keys, so the page's widest view: ``/inbox?app=<app>``,
every user of the app, served from the app-wide index. For the record, the same page the way it was read
before (a merge of every user's own index, ``client.inbox.parked_page`` over all the app's users).

Timed one call after another, the apps interleaved, median of many calls. Targets (DESIGN 7, issue 19): the
first page within 1.5x of the anchor for 10,000 parked of one user, and for 10,000 parked over 1,000 users.

Then what an idle open inbox page costs Redis (bench/inbox_idle.py; ``--idle-only`` runs only that): the server's own CPU
time (INFO cpu) over a few seconds with no page open (the anchor), with pages open the way ``/inbox/events``
followed the inbox before (every page ran the fingerprint script over every user of the app once a second;
replayed here with the same calls), and with 1,000 pages open on a real ``agentq api`` process following the
change feed (real SSE connections). Reported: Redis CPU per open page, before and after.
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
            pipe.zadd(keys.app_parked(app), {json.dumps([user, invocation_id]): int(created * 1000)})
            pipe.hset(keys.invocation_index(), invocation_id, json.dumps([app, user, "s-1"]))
        if len(pipe) > 5000:
            await pipe.execute()
    await pipe.execute()


async def run(scale: float, rounds: int) -> dict:
    import httpx

    from api import ApiSettings, create_app
    from api.services import redis_services
    from runtime.redis_store.launcher import EmbeddedRedis
    from worker.records.store import InvocationStore

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
            spread_pairs = await backed.client.inbox.user_pairs(["spread"], None)

            async def merged_per_user():  # the spread page as it was read before the app-wide index
                return await backed.client.inbox.parked_page(spread_pairs, page_size=PAGE)

            timed = await _median_ms({"inbox_20": inbox("few"), "inbox_many": inbox("many"),
                                      "inbox_spread": inbox("spread"),
                                      "inbox_spread_one_user": inbox("spread", user="user-00000"),
                                      "before_spread_per_user_merge": merged_per_user}, rounds)
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
    spread = ms["inbox_spread"] / ms["inbox_20"]
    print(f"{'PASS' if ratio <= 1.5 else 'MISS'} GET /inbox first page, {sizes['parked']:,} parked vs 20: "
          f"{ratio:.2f}x (target <= 1.5x)")
    print(f"{'PASS' if spread <= 1.5 else 'MISS'} GET /inbox first page, {sizes['parked']:,} parked over "
          f"{sizes['spread_users']:,} users vs 20 of one user: {spread:.2f}x (target <= 1.5x)")
    print(f"INFO before (a merge of every user's index, store call without HTTP): "
          f"{ms['before_spread_per_user_merge']:.3f} ms for the spread page")
    walk_ok = results["walk"]["items"] == results["walk"]["distinct"] == sizes["spread_users"] * 10
    print(f"walk over every page of the spread inbox: {results['walk']} ({'ok' if walk_ok else 'WRONG'})")
    return ratio <= 1.5 and spread <= 1.5 and walk_ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of the sizes")
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--idle-only", action="store_true", help="only the idle page's cost (bench/inbox_idle.py)")
    args = parser.parse_args(argv)
    from bench import inbox_idle

    ok = True
    if not args.idle_only:
        ok = report(asyncio.run(run(0.1 if args.quick else 1.0, args.rounds)))
    idle = asyncio.run(inbox_idle.run(0.1 if args.quick else 1.0))
    print(json.dumps(idle, indent=2))
    inbox_idle.report(idle)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
