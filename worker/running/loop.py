"""LoopThread: one long-lived asyncio event loop per worker process, fed by Celery's pool threads.

Celery runs tasks on threads; an invocation spends nearly all its time awaiting its model, so all of a process's
invocations share this one loop instead of each pinning a thread (or a process).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any


class LoopThread:
    """An event loop running forever on a daemon thread."""

    def __init__(self, name: str = "agentq-loop"):
        self.loop = _new_loop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def submit(self, coro: Coroutine[Any, Any, Any]) -> concurrent.futures.Future:
        """Schedule a coroutine on the loop from any thread."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def run(self, coro: Coroutine[Any, Any, Any]) -> Any:
        """Run a coroutine on the loop and wait for its result (from another thread).

        A bare lock instead of a concurrent.futures.Future: this is on every run job's path, and waking the
        waiting thread through a Condition cost a measurable share of the loop thread's time.
        """
        done = threading.Lock()
        done.acquire()
        outcome: list[asyncio.Task] = []

        def finished(task: asyncio.Task) -> None:
            outcome.append(task)
            done.release()

        def start() -> None:
            self.loop.create_task(coro).add_done_callback(finished)

        self.loop.call_soon_threadsafe(start)
        done.acquire()
        return outcome[0].result()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the loop and join its thread."""
        if self.loop.is_running():
            self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout)


def _new_loop() -> asyncio.AbstractEventLoop:
    """uvloop where it is installed (less CPU per callback, socket read and thread wake-up than asyncio's own
    loop, and this loop runs every invocation of the process); asyncio's otherwise."""
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()
