"""Running sync tool functions off the event loop, on a small pool of daemon threads.

Leaner than ``asyncio.to_thread`` (no concurrent.futures machinery between the two futures): one queue put
to hand the job over, and results handed back in batches (see ``_Inbox``). Context variables are copied,
as ``to_thread`` does.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import queue
import threading
import weakref
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
    global _pool, _inboxes
    _pool = _Pool()  # the parent's threads do not exist in a forked child
    _inboxes = weakref.WeakKeyDictionary()  # nor do its loops, and an inbox lock may have been held at the fork


os.register_at_fork(after_in_child=_reset_after_fork)


def _settle(future: asyncio.Future, result: Any, error: BaseException | None) -> None:
    if future.done():  # the caller was cancelled meanwhile
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


class _Inbox:
    """Results finished in pool threads, handed to one loop in batches: a thread wakes the loop (a self-pipe
    write and a wakeup) only when the inbox was empty; the results that arrive before the loop drains it ride
    along. Under load, many tool calls then share one wakeup."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._lock = threading.Lock()
        self._results: list[tuple[asyncio.Future, Any, BaseException | None]] = []

    def put(self, future: asyncio.Future, result: Any, error: BaseException | None) -> None:
        with self._lock:
            self._results.append((future, result, error))
            first = len(self._results) == 1
        if first:
            try:
                self._loop.call_soon_threadsafe(self._drain)
            except RuntimeError:  # the loop closed while the tool ran; nobody is waiting any more
                pass

    def _drain(self) -> None:
        with self._lock:
            results, self._results = self._results, []
        for future, result, error in results:
            _settle(future, result, error)


_inboxes: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Inbox] = weakref.WeakKeyDictionary()


def _inbox(loop: asyncio.AbstractEventLoop) -> _Inbox:
    inbox = _inboxes.get(loop)
    if inbox is None:
        inbox = _inboxes[loop] = _Inbox(loop)
    return inbox


async def run_off_loop(func: Callable[..., Any], /, **kwargs: Any) -> Any:
    """``func(**kwargs)`` in a pool thread; the event loop keeps running meanwhile."""
    loop = asyncio.get_running_loop()
    future = loop.create_future()
    context = contextvars.copy_context()
    inbox = _inbox(loop)

    def job() -> None:
        result, error = None, None
        try:
            result = context.run(func, **kwargs)
        except BaseException as exc:  # handed to the awaiting task
            error = exc
        inbox.put(future, result, error)

    _pool.submit(job)
    return await future
