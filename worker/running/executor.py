"""Executor: drives one claimed invocation through the Runner until it parks, completes, fails or is fenced out.

It lives on the worker's event loop; hundreds of invocations run concurrently there while their models think.
"""

from __future__ import annotations

import asyncio
import logging
import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from google.genai import types

from runtime.errors import AppNotFoundError, FencedOutError, InvocationTimeoutError, RetryableModelError
from runtime.events import Event
from runtime.redis_store import streams
from runtime.redis_store.availability import is_store_unavailable
from runtime.sessions.redis_session_service import hold_lease
from worker.fleet import attempts, lease, recovery
from worker.fleet.lease import Claim
from worker.records import audit
from worker.records.answer_check import answer_shapes, shape_for
from worker.records.codec import decode_record, response_field_names
from worker.records.store import InvocationStore
from worker.running import tracing
from worker.running.outcome import final_status, is_said, last_said, pending_call

if TYPE_CHECKING:
    from worker.running.quarantine import Quarantine

log = logging.getLogger("agentq.worker")


@dataclass(kw_only=True)
class ExecutorConfig:
    """How a worker runs invocations."""

    worker_name: str = "worker"
    max_in_flight: int = 1000
    """Invocations one worker process runs at once; further run jobs wait (and so do their Celery messages)."""
    lease_ttl_s: float = lease.LEASE_TTL_S
    default_time_limit_s: float = 3600.0
    max_model_retries: int = 5
    history_cache_bytes: int = 64 * 1024 * 1024
    """Budget of the parsed session histories kept between invocations (``runtime.sessions.history_cache``);
    0 turns the cache off, and every invocation then reads and parses its session's whole history."""
    retry_base_s: float = 0.2
    retry_max_s: float = 10.0
    max_attempts: int = field(default_factory=attempts.max_attempts_from_env)
    """Crashes of an invocation running alone in a quarantine process before it fails (worker.fleet.attempts)."""
    quarantine_after: int = field(default_factory=attempts.quarantine_after_from_env)
    """Worker deaths an invocation may be suspected of before it runs alone (worker.fleet.attempts)."""


class LeaseLost(Exception):
    """Raised inside an invocation's task when its lease was lost (cancelled, or taken over after a stall)."""


class HandBack(Exception):
    """Raised inside an invocation's task at an event boundary when its worker is shutting down."""


class Executor:
    """Claims invocations and runs each in its own asyncio task."""

    def __init__(self, store: InvocationStore, runners: dict[str, Any], config: ExecutorConfig,
                 quarantine: Quarantine | None = None):
        """``quarantine``: where suspected invocations run alone (worker.running.quarantine); without one (an executor
        inside a quarantine process, or in a test) every invocation runs here."""
        self.store = store
        self.runners = runners
        self.config = config
        self.quarantine = quarantine
        self.active: dict[str, tuple[Claim, asyncio.Task]] = {}
        self._slots = asyncio.Semaphore(config.max_in_flight)
        self._lost: set[str] = set()
        self.draining = False
        """Set when the worker shuts down: running invocations are handed back at their next event."""
        self.on_release = lambda: None
        """Called whenever an invocation's slot frees up (dropped job, or settled/stopped invocation)."""

    async def start(self, invocation_id: str) -> str:
        """Claim and start an invocation; 'started' or why the job was dropped ('not_head', 'held', ...)."""
        await self._slots.acquire()
        if self.draining:  # shutting down: let another worker take it now rather than after the watchdog
            self._release()
            await self.store.dispatch_next(invocation_id)
            return "draining"
        try:
            claim = await lease.acquire(self.store, invocation_id, self.config.worker_name, self.config.lease_ttl_s)
        except BaseException:
            self._release()
            raise
        if isinstance(claim, str):
            self.store.forget(invocation_id)
            self._release()
            log.debug("invocation %s: run job dropped (%s)", invocation_id, claim)
            return claim
        task = asyncio.create_task(self._drive(claim), name=invocation_id)
        self.active[invocation_id] = (claim, task)
        task.add_done_callback(lambda _t, invocation_id=invocation_id: self._done(invocation_id))
        return "started"

    def _done(self, invocation_id: str) -> None:
        self.active.pop(invocation_id, None)
        self._lost.discard(invocation_id)
        self.store.forget(invocation_id)  # a later job for it (a resume) carries its location again
        self._release()

    def _release(self) -> None:
        self._slots.release()
        self.on_release()

    def begin_drain(self) -> None:
        """Shutting down: running invocations are handed back at their next event, quarantined ones too."""
        self.draining = True
        if self.quarantine is not None:
            self.quarantine.stop_all()

    def is_lost(self, invocation_id: str) -> bool:
        """True once ``lease_lost`` stopped the invocation (its lease is gone: settled elsewhere or taken over)."""
        return invocation_id in self._lost

    def lease_lost(self, invocation_id: str) -> None:
        """Stop an invocation whose lease is gone; it writes nothing more."""
        entry = self.active.get(invocation_id)
        if entry is not None and not entry[0].settling:
            log.warning("invocation %s: lease lost (cancelled, or taken over after a stall)", invocation_id)
            self._lost.add(invocation_id)
            entry[1].cancel()

    async def _drive(self, claim: Claim) -> None:
        """Fail a poison invocation, run a suspected one alone, and any other here (worker.fleet.attempts)."""
        record = claim.record
        poisoned = attempts.poison_failure(record.id, claim.evidence, self.config.max_attempts)
        if poisoned is not None:
            log.error("invocation %s: failed: %s", record.id, poisoned["error"]["message"])
            await self._settle(claim, "failed", poisoned)
        elif self.quarantine is not None and attempts.should_isolate(claim.evidence, self.config.quarantine_after):
            await self._run_isolated(claim, self.quarantine)
        else:
            await self.run_claim(claim)

    async def _run_isolated(self, claim: Claim, quarantine: Quarantine) -> None:
        try:
            await quarantine.run(self, claim)
        except asyncio.CancelledError:
            if not self.is_lost(claim.record.id):  # shutting down: the quarantine process was stopped
                await asyncio.shield(lease.hand_back(self.store, claim))
            raise
        except Exception as exc:
            if not is_store_unavailable(exc):
                raise
            await recovery.hand_back_when_reachable(self.store, claim, exc)

    async def run_claim(self, claim: Claim) -> None:
        """Run a claimed invocation in this process until it settles, is handed back or loses its lease."""
        with tracing.run_span(claim.record, self.config.worker_name):  # a no-op unless spans are exported
            await self._run_claim(claim)

    async def _run_claim(self, claim: Claim) -> None:
        record = claim.record
        # Every write of this task, its AgentTool child sessions' included, is fenced by this lease: a child is
        # part of this invocation, not a writer of its own (runtime.sessions.redis_session_service).
        hold_lease(claim.fence, claim.where.app, claim.where.user, claim.where.session)
        log.info("invocation %s: running (attempt %d)", record.id, record.attempts)
        try:
            runner = self.runners.get(record.app_name)
            if runner is None:
                raise AppNotFoundError(f"app {record.app_name!r} is not served by worker {self.config.worker_name!r}")
            if claim.session_read is not None:  # the claim read the session for this run: no read of its own
                self.store.session_service.adopt_claimed_read(claim.where.app, claim.where.user,
                                                              claim.where.session, *claim.session_read)
                claim.session_read = None
            limit = record.time_limit or self.config.default_time_limit_s
            try:
                async with asyncio.timeout(limit):
                    status, detail = await self._run_until_settled(claim, runner)
            except TimeoutError:
                raise InvocationTimeoutError(f"invocation {record.id!r} ran past its {limit:g}s time limit") from None
        except FencedOutError as exc:
            if not await lease.is_held(self.store, claim):
                log.info("invocation %s: lease lost, stopping without writing", record.id)
                return
            # The lease is still this run's: the refused write was to a session this lease does not cover (not a
            # lost lease). Stopping silently would leave the lease to expire, and the reaper would take that for
            # a dead worker and quarantine a run that fails the same way again.
            log.error("invocation %s: a write was refused while its lease is held: %s", record.id, exc)
            status, detail = "failed", {"error": {"type": "FencedOutError", "message": str(exc)}}
        except LeaseLost:
            log.info("invocation %s: lease lost, stopping without writing", record.id)
            return
        except HandBack:
            await lease.hand_back(self.store, claim)
            log.info("invocation %s: handed back (worker shutting down)", record.id)
            return
        except asyncio.CancelledError:
            if record.id in self._lost:
                log.info("invocation %s: lease lost, stopping without writing", record.id)
                return
            await asyncio.shield(lease.hand_back(self.store, claim))
            raise
        except Exception as exc:  # a run failure: recorded, never retried
            if is_store_unavailable(exc):  # Redis away for a moment: not the run's fault
                await recovery.hand_back_when_reachable(self.store, claim, exc)
                return
            # its traceback, once; the settle's line below says the outcome
            log.warning("invocation %s: run raised %s", record.id, type(exc).__name__, exc_info=exc)
            status, detail = "failed", {"error": {"type": type(exc).__name__, "message": str(exc)}}
        if status != "settled":
            await self._settle(claim, status, detail)

    async def _settle(self, claim: Claim, status: str, detail: dict) -> None:
        outcome, next_head = await recovery.settle(self.store, claim, status, detail)
        if outcome == "lost":
            log.info("invocation %s: lease lost before settling as %s", claim.record.id, status)
            return
        tracing.settled(status, detail)
        _log_settled(claim, status, next_head, detail.get("error"))

    async def _run_until_settled(self, claim: Claim, runner: Any) -> tuple[str, dict]:
        """Run (again after a retryable model error, or when responses arrived while running) until settled.

        Parking is settled here because the settle script may refuse it ('continue': responses are waiting).
        """
        message, response_fields = await self._first_message(claim)
        retries = 0
        while True:
            try:
                last, long_running = await self._run_once(claim, runner, message, response_fields)
            except RetryableModelError as exc:
                retries += 1
                if retries > self.config.max_model_retries:
                    raise
                delay = min(self.config.retry_max_s, self.config.retry_base_s * 2 ** (retries - 1))
                log.info("invocation %s: retryable model error (%s), retry %d in %.2fs", claim.record.id, exc,
                         retries, delay)
                await asyncio.sleep(delay * random.uniform(0.8, 1.2))
                message, response_fields = await self._first_message(claim)
                continue
            status, detail = await self._outcome(claim, runner, last, long_running)
            if status != "parked":
                return status, detail
            outcome, next_head = await recovery.settle(self.store, claim, "parked", detail)
            if outcome == "lost":
                raise LeaseLost(claim.record.id)
            if outcome == "ok":
                tracing.settled("parked", detail)
                _log_settled(claim, "parked", next_head)
                return "settled", {}
            fields = await self.store.fields(self.store.record_key(claim.record.id, claim.where))
            claim.record = decode_record(fields)
            claim.response_fields = response_field_names(fields)
            message, response_fields = await self._first_message(claim)

    async def _outcome(
        self, claim: Claim, runner: Any, last: Event | None, long_running: bool
    ) -> tuple[str, dict]:
        record = claim.record
        if last is not None and not long_running and not record.pending_calls:
            # Nothing long-running was ever issued: no need to read the history back.
            return final_status(last)
        session = await runner.session_service.get_session(
            app_name=record.app_name, user_id=record.user_id, session_id=record.session_id)
        from runtime.runners import pending_long_running_calls

        pending = pending_long_running_calls(session, record.id)
        if pending:
            shapes = answer_shapes(runner.agent)
            calls = [pending_call(call, record.park_timeout, shape_for(shapes, call)) for call in pending]
            if not await lease.add_pending(self.store, claim, calls):
                raise LeaseLost(record.id)
            return "parked", {"pendingCalls": [call.to_json_dict() for call in calls]}
        return final_status(last_said(session.events, record.id))

    async def _first_message(self, claim: Claim) -> tuple[types.Content | None, list[str]]:
        """What to send the runner: the waiting responses, else the user message.

        Sending a message again after a crash is safe: the Runner does not append a message identical to one
        the invocation already committed, and continues from its committed events instead.
        """
        record = claim.record
        if record.responses:
            message = types.Content(role="user", parts=[
                types.Part(function_response=types.FunctionResponse.model_validate(r)) for r in record.responses])
            return message, claim.response_fields
        return record.new_message, []

    async def _run_once(
        self, claim: Claim, runner: Any, message: types.Content | None, response_fields: list[str]
    ) -> tuple[Event | None, bool]:
        """One pass of the Runner; the last committed event and whether a long-running call was issued."""
        record = claim.record
        where = claim.where
        kwargs: dict[str, Any] = {"user_id": record.user_id, "session_id": record.session_id,
                                  "invocation_id": record.id}
        if message is not None:
            kwargs["new_message"] = message
            if message is record.new_message and record.state_delta:
                kwargs["state_delta"] = record.state_delta
            elif message is not record.new_message:  # function responses: who answered each (worker.audit)
                if record.response_state_delta:  # sent with the answers: committed with them, as ADK does
                    kwargs["state_delta"] = record.response_state_delta
                answered = audit.answered_by(record, [p.function_response.id for p in message.parts
                                                      if p.function_response])
                if answered:
                    kwargs["message_metadata"] = answered
        if record.run_config:
            from runtime.agents.run_config import RunConfig

            kwargs["run_config"] = RunConfig.model_validate(record.run_config)
        last: Event | None = None
        long_running = False
        async for event in runner.run_async(**kwargs):
            if response_fields:  # the Runner committed the responses before the agent produced anything
                response_fields = await self._consume(claim, response_fields)
            if event.partial:
                await streams.publish_event(self.store.mux, where.app, where.user, where.session, record.id, event)
                continue
            if is_said(event):
                last = event
            if self.draining:
                raise HandBack(record.id)
            if event.long_running_tool_ids:
                long_running = True
                calls = [c for c in event.get_function_calls() if c.id in event.long_running_tool_ids]
                shapes = answer_shapes(runner.agent)
                pending = [pending_call(c, record.park_timeout, shape_for(shapes, c)) for c in calls]
                if pending and not await lease.add_pending(self.store, claim, pending):
                    raise LeaseLost(record.id)
        if response_fields:
            await self._consume(claim, response_fields)
        return last, long_running

    async def _consume(self, claim: Claim, response_fields: list[str]) -> list[str]:
        if not await lease.consume_responses(self.store, claim, response_fields):
            raise LeaseLost(claim.record.id)
        claim.record = claim.record.model_copy(update={"responses": []})
        claim.response_fields = []
        return []


def _log_settled(claim: Claim, status: str, next_head: str, error: dict | None = None) -> None:
    # Only a log line: the settle script wrote the status entry and lease.settle sent the next head's job.
    # A failure says why in the same line (a tool's traceback was logged where it raised, once).
    why = f": {error.get('type')}: {error.get('message')}" if error else ""
    log.info("invocation %s: %s%s%s", claim.record.id, status, why, f" (next: {next_head})" if next_head else "")
