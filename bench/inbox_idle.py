"""What an idle open inbox page costs Redis, before (a poll per page) and after (the change feed); part of
bench/ui_inbox_bench.py (``--idle-only`` runs just this).

One embedded redis-server holding 10,000 parked invocations over 1,000 users of one app, and one real
``agentq api`` process (no worker: nothing changes, every page is idle). The redis-server's own CPU time
(INFO cpu, ``bench.redis_counter.server_cpu_s``) is taken over ``WINDOW_S`` three ways, one after the other:

- the anchor: no page open;
- before: pages open the way ``/inbox/events`` followed the inbox until the change feed: each page, once a
  second, listed the users of the apps it may see and ran the fingerprint script over their parked indexes
  (``client.inbox.user_pairs`` + ``client.inbox.fingerprint``, the calls the old route made; replayed here, in
  this process, since the route no longer makes them);
- after: 1,000 real SSE connections to ``GET /inbox/events`` on the API process, which follow the change feed.

Reported: Redis CPU milliseconds per second per open page (the anchor taken off), before and after; then one
change appended to the feed as a status script appends it, and the time until its frame reached each of the
1,000 pages (p50, p99).
"""

from __future__ import annotations

import asyncio
import tempfile
import time

WINDOW_S = 5.0
BEFORE_PAGES = 50  # each costs O(users) a second; more would only saturate the server
AFTER_PAGES = 1_000
APP = "reimbursement"  # an app the API serves (examples.reimbursement), so /inbox/events covers it


async def _cpu_rate(redis, window_s: float = WINDOW_S) -> float:
    """Seconds of server CPU per second of wall time, over ``window_s``."""
    from bench.redis_counter import server_cpu_s

    cpu, wall = await server_cpu_s(redis), time.perf_counter()
    await asyncio.sleep(window_s)
    return (await server_cpu_s(redis) - cpu) / (time.perf_counter() - wall)


async def _polling_page(client, apps: list[str]) -> None:
    """One page the way the old ``/inbox/events`` followed it: every second, the users, then the digest."""
    while True:
        pairs = await client.inbox.user_pairs(apps, None)
        await client.inbox.fingerprint(pairs)
        await asyncio.sleep(1.0)


async def _sse_page(http, opened: asyncio.Event, arrivals: list[float]) -> None:
    async with http.stream("GET", "/inbox/events") as response:
        async for line in response.aiter_lines():
            opened.set()
            if line.startswith("data:") and '"changes"' in line:
                arrivals.append(time.time())


async def run(scale: float) -> dict:
    import httpx

    from agentq.demo import EXAMPLE_APPS
    from agentq.local_stack import LocalStack
    from bench.inbox_bench import _NoBroker, _template
    from bench.ui_inbox_bench import _clone
    from worker.client import AgentqClient
    from worker.records.store import InvocationStore

    users = int(1_000 * scale)
    with tempfile.TemporaryDirectory() as tmp:
        stack = LocalStack(tmp, apps=EXAMPLE_APPS, workers=0)
        stack.data_dir.mkdir(parents=True, exist_ok=True)
        stack.redis.start()
        try:
            store = InvocationStore(stack.redis.url, celery_app=_NoBroker())
            template = await _template(store, "parked")
            await _clone(store.redis, APP, [f"user-{i:05d}" for i in range(users)], 10, template, time.time())
            stack.start_api()
            client = AgentqClient(stack.redis.url, reads_only=True)
            apps = ["reimbursement", "weather", "money_transfer", "doc_pipeline"]
            anchor = await _cpu_rate(store.redis)
            pollers = [asyncio.create_task(_polling_page(client, apps)) for _ in range(BEFORE_PAGES)]
            before = await _cpu_rate(store.redis)
            for task in pollers:
                task.cancel()
            await asyncio.gather(*pollers, return_exceptions=True)
            limits = httpx.Limits(max_connections=AFTER_PAGES + 10, max_keepalive_connections=AFTER_PAGES + 10)
            async with httpx.AsyncClient(base_url=stack.base_url, limits=limits, timeout=60) as http:
                opened = [asyncio.Event() for _ in range(AFTER_PAGES)]
                arrivals: list[float] = []
                pages = [asyncio.create_task(_sse_page(http, event, arrivals)) for event in opened]
                await asyncio.wait_for(asyncio.gather(*(event.wait() for event in opened)), 120)
                after = await _cpu_rate(store.redis)
                clients = int((await store.redis.info("clients"))["connected_clients"])
                delays = await _change_delays(store.redis, arrivals)
                for task in pages:
                    task.cancel()
                await asyncio.gather(*pages, return_exceptions=True)
            await client.aclose()
            await store.aclose()
        finally:
            stack.stop()
    return {"users": users, "parked": users * 10, "window_s": WINDOW_S,
            "pages": {"before": BEFORE_PAGES, "after": AFTER_PAGES},
            "redis_cpu_per_s": {"anchor": anchor, "before": before, "after": after},
            "redis_clients_after": clients,
            "change_to_every_page_ms": {"pages": len(delays), "p50": delays[len(delays) // 2] if delays else None,
                                        "p99": delays[int(len(delays) * 0.99) - 1] if delays else None,
                                        "max": delays[-1] if delays else None}}


async def _change_delays(redis, arrivals: list[float]) -> list[float]:
    """Milliseconds from a change appended to the feed (as a status script appends it, in the same step as a
    park) to its frame on each open page, sorted; the entry id's time is the server's clock at the XADD."""
    from runtime.redis_store import keys

    entry_id = await redis.xadd(keys.inbox_changes(""), {"app": APP, "user": "user-00000", "inv": "e-bench",
                                                         "change": "parked"})
    deadline = time.monotonic() + 60
    while len(arrivals) < AFTER_PAGES and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    at = int(str(entry_id).split("-")[0]) / 1000
    return sorted((arrival - at) * 1000 for arrival in arrivals)


def report(results: dict) -> None:
    """Print Redis CPU per idle open page, before and after."""
    cpu, pages = results["redis_cpu_per_s"], results["pages"]
    per_page = {name: max(0.0, cpu[name] - cpu["anchor"]) / pages[name] * 1000 for name in ("before", "after")}
    print(f"Redis CPU with no page open (anchor): {cpu['anchor'] * 1000:.2f} ms/s; "
          f"{pages['before']} pages polling ({results['users']:,} users, {results['parked']:,} parked): "
          f"{cpu['before'] * 1000:.2f} ms/s; {pages['after']:,} pages on the change feed: {cpu['after'] * 1000:.2f} ms/s")
    spread = results["change_to_every_page_ms"]
    print(f"a change appended to the feed -> its frame on each of {spread['pages']:,} open pages (one client "
          f"process reading them all): p50 {spread['p50']:.0f} ms, p99 {spread['p99']:.0f} ms, max {spread['max']:.0f} ms")
    print(f"Redis CPU per idle open inbox page: before {per_page['before']:.3f} ms/s, after {per_page['after']:.4f} "
          f"ms/s (after/before {per_page['after'] / per_page['before']:.4f})" if per_page["before"] else
          f"Redis CPU per idle open inbox page: before {per_page['before']:.3f}, after {per_page['after']:.4f} ms/s")
