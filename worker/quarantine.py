"""Quarantine: a suspected invocation runs alone, in a process its worker forks for it (the rule: worker.attempts).

Why a forked child: it has the worker's apps loaded already, so it starts in milliseconds with no settings to pass
on; and when the invocation kills it, the worker that forked it survives, sees how it ended (a signal, an exit
code) and charges the crash. Nothing else ran in that process, so the crash is the invocation's doing.

Who does what:
- the worker claims the invocation and heartbeats its lease until a quarantine slot is free; then it forks,
  waits for the child's exit on a pidfd, and after a crash hands the invocation back with the crash charged
  (``RELEASE``); the next claim runs it alone again, or fails it once ``AGENTQ_MAX_ATTEMPTS`` crashes are charged;
- the child builds its own event loop, Redis connections, Celery app and runners (a socket inherited from the
  worker is never used: both processes would read its replies) and runs the claim as ``Executor.run_claim``
  does in a worker: the same fence on every commit, its own tool journal records, its own heartbeats and settle
  (so the heartbeat's lease bookkeeping and the settle that clears it stay in order on one connection). It exits
  0 whatever the outcome of the run, so any other ending is a crash;
- a graceful shutdown forwards SIGTERM: the child hands the invocation back at its next event (nothing charged);
- when the worker dies the child notices (its parent changes) and hands the invocation back: the worker's death
  was not this invocation's doing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, NoReturn

from . import lease
from .lease import Claim
from .store import InvocationStore

if TYPE_CHECKING:
    from .executor import Executor

log = logging.getLogger("agentq.worker")

EXIT_GAVE_UP = 75
"""The child's exit code when agentq's own code failed in it (Redis away at the end, a bug): handed back, not
charged. Every exit code but 0 and this one, and every signal, is a crash."""

SLOTS = 8
"""Quarantine processes one worker runs at once; further isolated runs wait for one, holding their lease."""

PARENT_CHECK_S = 0.5
HEARTBEAT_S = 1.0
CHILD_DRAIN_S = 8.0
"""On SIGTERM the child stops at its next event, or is cut off after this (within the worker's own drain)."""
LOST_GRACE_S = 2.0
"""When the worker finds the lease gone (the child settled, or it was taken over) it gives the child this long to
exit on its own before killing it (a fenced-out child writes nothing anyway)."""

_CELERY_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGQUIT, signal.SIGHUP, signal.SIGUSR1)


class Quarantine:
    """Forks, watches and stops the quarantine processes of one worker."""

    def __init__(self, store: InvocationStore, make_runners: Callable[[InvocationStore], dict], *,
                 slots: int = SLOTS):
        self.parent_store = store
        self.make_runners = make_runners
        """Builds the child's runners on its own store (the worker's apps, as ``worker.host`` builds them)."""
        self.slots = slots
        self._free: asyncio.Semaphore | None = None
        self.children: dict[str, int] = {}
        """Invocation id -> pid of the quarantine process running it."""

    def stop_all(self) -> None:
        """Ask every quarantine process to hand its invocation back (graceful shutdown)."""
        for pid in self.children.values():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)

    async def run(self, executor: Executor, claim: Claim) -> None:
        """Run the claim in a quarantine process; after a crash, hand the invocation back with the crash charged."""
        invocation_id = claim.record.id
        if self._free is None:
            self._free = asyncio.Semaphore(self.slots)
        async with self._free:
            if executor.draining:
                await lease.hand_back(executor.store, claim)
                return
            claim.in_child = True  # from here on the child heartbeats it (worker.host skips it)
            pid = self._fork(executor, claim)
            pidfd = os.pidfd_open(pid)
            self.children[invocation_id] = pid
            log.info("invocation %s: running alone in quarantine process %d (%s)", invocation_id, pid,
                     ", ".join(crash.describe() for crash in claim.evidence.log[-3:]))
            try:
                status = await _exit_status(pid, pidfd)
            except asyncio.CancelledError:  # the lease is gone, or the worker is shutting down
                grace = LOST_GRACE_S if executor.is_lost(invocation_id) else 0.0
                await asyncio.shield(_stop(pid, pidfd, grace=grace))  # (closes the pidfd)
                raise
            finally:
                self.children.pop(invocation_id, None)
            os.close(pidfd)
        code = os.waitstatus_to_exitcode(status)
        if code == 0:
            return
        if code == EXIT_GAVE_UP:
            log.warning("invocation %s: quarantine process %d gave up; handing it back", invocation_id, pid)
            await lease.hand_back(executor.store, claim)
            return
        ended = describe_exit(code)
        log.error("invocation %s: crashed its quarantine process %d (%s); charged", invocation_id, pid, ended)
        await lease.hand_back(executor.store, claim, worker=executor.config.worker_name, crash_exit=ended)

    def _fork(self, executor: Executor, claim: Claim) -> int:
        """Fork; in the child, run the claim and exit (this never returns there)."""
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:
            self._child(executor, claim, parent)
        return pid

    def _child(self, executor: Executor, claim: Claim, parent: int) -> NoReturn:
        code = 0
        try:
            for signum in _CELERY_SIGNALS:  # the inherited handlers are Celery's, for the worker's main thread
                signal.signal(signum, signal.SIG_DFL)
            # A loop of its own; left unclosed, since the process exits right after (and sooner without teardown).
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
            loop.run_until_complete(self._child_run(executor, claim, parent))
        except SystemExit as exc:  # the agent's code asked the process to exit: that ends the run like a crash
            code = exc.code if isinstance(exc.code, int) else 1
        except BaseException:
            log.exception("invocation %s: quarantine process failed", claim.record.id)
            code = EXIT_GAVE_UP
        finally:
            with contextlib.suppress(Exception):
                sys.stdout.flush()
                sys.stderr.flush()
            os._exit(code)

    async def _child_run(self, parent_executor: Executor, claim: Claim, parent: int) -> None:
        from .executor import Executor

        old = self.parent_store
        store = InvocationStore(old.redis_url, retention=old.retention, webhooks=old.webhooks)
        store.remember(claim.record.id, claim.where)
        executor = Executor(store, self.make_runners(store), parent_executor.config)
        task = asyncio.create_task(executor.run_claim(claim), name=claim.record.id)
        executor.active[claim.record.id] = (claim, task)
        beats = asyncio.create_task(_heartbeat(executor, claim))
        loop = asyncio.get_running_loop()

        def drain() -> None:  # graceful shutdown of the worker: hand back at the next event, or cut off later
            executor.draining = True
            loop.call_later(CHILD_DRAIN_S, task.cancel)

        loop.add_signal_handler(signal.SIGTERM, drain)
        while not task.done():
            await asyncio.wait({task}, timeout=PARENT_CHECK_S)
            if not task.done() and os.getppid() != parent:
                log.warning("invocation %s: the worker that forked quarantine process %d is gone; handing it back",
                            claim.record.id, os.getpid())
                task.cancel()
                await asyncio.wait({task})
        beats.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            task.result()


async def _heartbeat(executor: Executor, claim: Claim) -> None:
    """Keep the child's lease (as ``worker.host`` does for a worker's claims); stop the run once it is lost."""
    while True:
        await asyncio.sleep(HEARTBEAT_S)
        if claim.settling:
            continue
        try:
            held = await lease.heartbeat(executor.store, [claim], executor.config.lease_ttl_s)
        except Exception as exc:  # Redis away for a moment: the run rides it out or hands back (worker.recovery)
            log.warning("invocation %s: heartbeat failed: %s: %s", claim.record.id, type(exc).__name__, exc)
            continue
        if not held[0]:
            executor.lease_lost(claim.record.id)


def describe_exit(code: int) -> str:
    """``killed by SIGKILL`` for a signal (a negative code from ``os.waitstatus_to_exitcode``), else ``exit code N``."""
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


async def _exit_status(pid: int, pidfd: int) -> int:
    """Wait (without blocking the loop) until the process exits; its wait status, reaped."""
    loop = asyncio.get_running_loop()
    exited = loop.create_future()
    loop.add_reader(pidfd, lambda: exited.done() or exited.set_result(None))
    try:
        await exited
    finally:
        loop.remove_reader(pidfd)
    return os.waitpid(pid, 0)[1]


async def _stop(pid: int, pidfd: int, *, grace: float) -> None:
    """Give the process ``grace`` seconds to exit, then SIGKILL it; reap it either way and close its pidfd."""
    try:
        if grace:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(_exit_status(pid, pidfd), grace)
                return
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(TimeoutError, ChildProcessError):
            await asyncio.wait_for(_exit_status(pid, pidfd), 5.0)
    finally:
        os.close(pidfd)
