"""Double-texting benchmark: what a strategy costs an enqueue, against a plain (FIFO) enqueue in the same run.

No worker runs (run jobs go nowhere), so each figure is the enqueue path alone, on one session, sequentially:
- ``enqueue`` (the anchor): onto a session with one invocation queued;
- ``reject``: refused (409) on that session;
- ``interrupt`` and ``rollback``: each cancels the one queued before it (nothing committed: no rewind);
- ``rewind``: ``worker.records.rewind`` to before an invocation of two events, on a session that grows by three each time.

Run: ``python -m bench.double_texting_bench`` (starts its own redis-server). Prints one JSON object.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from pathlib import Path

from runtime.events import Event
from runtime.redis_store.launcher import EmbeddedRedis
from worker.records import rewind
from worker.records.rewind import SessionBusyError
from worker.records.store import InvocationStore

N = 300
APP, USER = "bench", "u"


class _NoBroker:
    def send_task(self, *args, **kwargs) -> None:
        pass


ROUNDS = 10
"""Each figure is taken in ROUNDS slices, interleaved with the others', so a load change on a shared machine
falls on every figure alike."""


async def _session_with_one_queued(store: InvocationStore) -> str:
    session = await store.create_session(APP, USER)
    await store.enqueue(APP, USER, session.id, "first", None, None)
    return session.id


async def _steps(store: InvocationStore) -> dict:
    """Each figure's step (called with a running index) and how many steps it takes."""
    steps = {}
    sid = await _session_with_one_queued(store)
    steps["enqueue"] = (lambda i, sid=sid: store.enqueue(APP, USER, sid, f"m{i}", None, None), N)
    busy = await _session_with_one_queued(store)

    async def refused(i: int) -> None:
        try:
            await store.enqueue(APP, USER, busy, f"m{i}", None, None, strategy="reject")
        except SessionBusyError:
            return
        raise AssertionError("reject accepted a message on a busy session")

    steps["reject"] = (refused, N)
    for strategy in ("interrupt", "rollback"):
        sid = await _session_with_one_queued(store)
        steps[strategy] = (lambda i, sid=sid, strategy=strategy: store.enqueue(
            APP, USER, sid, f"m{i}", None, None, strategy=strategy, actor={"principal": "bench"}), N)
    session = await store.create_session(APP, USER)

    async def rewound(i: int) -> None:
        for text in ("asked", "answered"):
            await store.session_service.append_event(session, Event(
                invocation_id=f"e-bench-{i}", author="agent", content={"role": "model", "parts": [{"text": text}]}))
        await rewind.rewind(store, APP, USER, session.id, f"e-bench-{i}")
        session.version += 1  # the rewind committed an event through another Session object

    steps["rewind"] = (rewound, N // 3)
    return steps


async def _figures(store: InvocationStore) -> dict:
    steps = await _steps(store)
    seconds = dict.fromkeys(steps, 0.0)
    done = dict.fromkeys(steps, 0)
    for round_ in range(ROUNDS):
        for name, (step, total) in steps.items():
            upto = total * (round_ + 1) // ROUNDS
            started = time.perf_counter()
            while done[name] < upto:
                await step(done[name])
                done[name] += 1
            seconds[name] += time.perf_counter() - started
    rates = {name: done[name] / seconds[name] for name in steps}
    anchor = rates["enqueue"]
    return {"per_second": {name: round(rate) for name, rate in rates.items()},
            "vs_enqueue": {name: round(rate / anchor, 2) for name, rate in rates.items() if name != "enqueue"}}


async def _main(url: str) -> dict:
    store = InvocationStore(url, celery_app=_NoBroker())
    try:
        return await _figures(store)
    finally:
        await store.aclose()


def main() -> None:
    server = EmbeddedRedis(Path(tempfile.mkdtemp(prefix="agentq-bench-dt-")))
    server.start()
    try:
        print(json.dumps(asyncio.run(_main(server.url)), indent=2))
    finally:
        server.stop()


if __name__ == "__main__":
    main()
