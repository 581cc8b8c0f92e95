"""Running sync tool functions off the event loop, on a small pool of daemon threads.

Leaner than ``asyncio.to_thread`` (no concurrent.futures machinery between the two futures): one queue put
to hand the job over, one ``call_soon_threadsafe`` to hand the result back. Context variables are copied,
as ``to_thread`` does.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import queue
import threading
from collections.abc import Callable
from typing import Any

_MAX_THREADS = min(32, (os.cpu_count() or 1) + 4)


class _Pool:
    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue = queue.SimpleQueue()
        self.threads = 0
        self.idle = 0
        self.lock = threading.Lock()

    def submit(self, job: Callable[[], None]) -> None:
        with self.lock:
            if self.idle == 0 and self.threads < _MAX_THREADS:
                self.threads += 1
                threading.Thread(target=self._work, name=f"agentq-tool-{self.threads}", daemon=True).start()
            else:
                self.idle -= 1  # this job will wake one idle thread
        self.jobs.put(job)

    def _work(self) -> None:
        while True:
            job = self.jobs.get()
            job()
            with self.lock:
                self.idle += 1


_pool = _Pool()


def _reset_after_fork() -> None:
    global _pool
    _pool = _Pool()  # the parent's threads do not exist in a forked child


os.register_at_fork(after_in_child=_reset_after_fork)


def _settle(future: asyncio.Future, result: Any, error: BaseException | None) -> None:
    if future.done():  # the caller was cancelled meanwhile
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


async def run_off_loop(func: Callable[..., Any], /, **kwargs: Any) -> Any:
    """``func(**kwargs)`` in a pool thread; the event loop keeps running meanwhile."""
    loop = asyncio.get_running_loop()
    future = loop.create_future()
    context = contextvars.copy_context()

    def job() -> None:
        result, error = None, None
        try:
            result = context.run(func, **kwargs)
        except BaseException as exc:  # handed to the awaiting task
            error = exc
        try:
            loop.call_soon_threadsafe(_settle, future, result, error)
        except RuntimeError:  # the loop closed while the tool ran; nobody is waiting any more
            pass

    _pool.submit(job)
    return await future
