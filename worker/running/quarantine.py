"""Quarantine: a suspected invocation runs alone, in a process its worker forks for it (the rule: worker.fleet.attempts).

Why a forked child: it has the worker's apps loaded already, so it starts in milliseconds with no settings to pass
on; and when the invocation kills it, the worker that forked it survives, sees how it ended (a signal, an exit
code) and charges the crash. Nothing else ran in that process, so the crash is the invocation's doing.

Who does what:
- the worker claims the invocation and heartbeats its lease until a quarantine slot is free; then it forks,
  waits for the child's exit on a pidfd, and after a crash hands the invocation back with the crash charged
  (``RELEASE``); the next claim runs it alone again, or fails it once ``AGENTQ_MAX_ATTEMPTS`` crashes are charged;
- the child (``worker.running.quarantine_child``) runs the claim with its own loop and connections, heartbeats and
  settles it, and exits 0 whatever the outcome of the run, so any other ending is a crash;
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
from collections.abc import Callable
from typing import TYPE_CHECKING

from worker.fleet import lease
from worker.fleet.lease import Claim
from worker.records.store import InvocationStore

if TYPE_CHECKING:
    from worker.running.executor import Executor

log = logging.getLogger("agentq.worker")

EXIT_GAVE_UP = 75
"""The child's exit code when agentq's own code failed in it (Redis away at the end, a bug): handed back, not
charged. Every exit code but 0 and this one, and every signal, is a crash."""

SLOTS = 8
"""Quarantine processes one worker runs at once; further isolated runs wait for one, holding their lease."""

LOST_GRACE_S = 2.0
"""When the worker finds the lease gone (the child settled, or it was taken over) it gives the child this long to
exit on its own before killing it (a fenced-out child writes nothing anyway)."""


class Quarantine:
    """Forks, watches and stops the quarantine processes of one worker."""

    def __init__(self, store: InvocationStore, make_runners: Callable[[InvocationStore], dict], *,
                 slots: int = SLOTS):
        self.parent_store = store
        self.make_runners = make_runners
        """Builds the child's runners on its own store (the worker's apps, as ``worker.running.host`` builds them)."""
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
            try:
                pid = self._fork(executor, claim)
            except OSError as exc:  # no process to spare (EAGAIN, ENOMEM): run it here rather than never
                claim.in_child = False
                log.error("invocation %s: no quarantine process (%s); running it in the worker", invocation_id, exc)
                await executor.run_claim(claim)
                return
            pidfd = _pidfd(pid)
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
            _close(pidfd)
        code = os.waitstatus_to_exitcode(status)
        if code == 0:
            return
        if code == EXIT_GAVE_UP or executor.draining:  # neither is the invocation's doing
            log.warning("invocation %s: quarantine process %d ended (%s) %s; handing it back", invocation_id, pid,
                        describe_exit(code), "while the worker shuts down" if executor.draining else "giving up")
            await lease.hand_back(executor.store, claim)
            return
        ended = describe_exit(code)
        log.error("invocation %s: crashed its quarantine process %d (%s); charged", invocation_id, pid, ended)
        await lease.hand_back(executor.store, claim, worker=executor.config.worker_name, crash_exit=ended)

    def _fork(self, executor: Executor, claim: Claim) -> int:
        """Fork; in the child, run the claim and exit (this never returns there).

        SIGTERM is blocked across the fork: a shutdown that reached the child before it could hand back would
        otherwise kill it, and that would read as a crash. The child unblocks it once it handles it."""
        parent = os.getpid()
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})  # (this thread's mask only)
        try:
            pid = os.fork()
            if pid == 0:
                from worker.running.quarantine_child import run_child

                run_child(self, executor, claim, parent)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        return pid


def describe_exit(code: int) -> str:
    """``killed by SIGKILL`` for a signal (a negative code from ``os.waitstatus_to_exitcode``), else ``exit code N``."""
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def _pidfd(pid: int) -> int | None:
    """A file descriptor that becomes readable when the process exits (Linux 5.3+); None elsewhere."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _close(pidfd: int | None) -> None:
    if pidfd is not None:
        os.close(pidfd)


async def _exit_status(pid: int, pidfd: int | None) -> int:
    """Wait (without blocking the loop) until the process exits; its wait status, reaped."""
    if pidfd is None:  # no pidfd: a thread waits instead
        return (await asyncio.to_thread(os.waitpid, pid, 0))[1]
    loop = asyncio.get_running_loop()
    exited = loop.create_future()
    loop.add_reader(pidfd, lambda: exited.done() or exited.set_result(None))
    try:
        await exited
    finally:
        loop.remove_reader(pidfd)
    return os.waitpid(pid, 0)[1]


async def _stop(pid: int, pidfd: int | None, *, grace: float) -> None:
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
        _close(pidfd)
