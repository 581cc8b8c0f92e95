"""AgentqClient: enqueue invocations, follow their events, answer parked calls, cancel and wait, from Python.

The HTTP API is built on this client; backends may use it directly without going through HTTP.

    async with AgentqClient("redis://localhost:6379/0") as client:
        session = await client.create_session("weather", "alice")
        invocation_id = await client.enqueue("weather", "alice", session.id, "What is the weather in Paris?")
        async for entry in client.events(invocation_id):
            print(entry.kind, entry.data)
        record = await client.get(invocation_id)
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any

from google.genai import types

from runtime.events.tool_confirmation import REQUEST_CONFIRMATION_FUNCTION_CALL_NAME
from runtime.statuses import InvocationStatus
from worker.records import follow as reading
from worker.records.audit import AuditEntry, app_audit_page, cli_actor
from worker.records.listing import Page
from worker.records.record import InvocationRecord, PendingCall, only_confirmation
from worker.records.retention import RetentionPolicy
from worker.webhooks.config import WebhookSettings

if TYPE_CHECKING:
    from runtime.redis_store.streams import StreamEntry
    from runtime.sessions import Session

MessageLike = types.Content | str | dict[str, Any]
"""A new user message: a Content, its JSON dict, or plain text (one text part, role user)."""

FunctionResponseLike = types.FunctionResponse | dict[str, Any]
"""A function response: a FunctionResponse or its JSON dict ``{id, name, response, will_continue?}``."""


class AgentqClient:
    """Async client of one agentq deployment (one Redis). Cheap to create; share one per process.

    Every method raises errors from ``runtime.errors``: ``SessionNotFoundError``, ``InvocationNotFoundError``,
    ``CallNotPendingError``, ``InvalidTransitionError``, ``InvalidMessageError``.
    """

    def __init__(self, redis_url: str | None = None, *, celery_app: Any | None = None,
                 retention: RetentionPolicy | None = None, webhooks: WebhookSettings | None = None,
                 reads_only: bool = False):
        """``redis_url``: default ``AGENTQ_REDIS_URL``, else the embedded redis-server that ``agentq`` started
        from the current directory (``worker.config.local_redis``; UsageError when there is none).
        ``celery_app``: the app used to send run jobs (default: one built for ``redis_url``); ``retention``:
        how long what this client's invocations and sessions leave is kept (default ``RetentionPolicy()``;
        give every process of a deployment the same one, e.g. ``RetentionPolicy.from_env()``); ``webhooks``:
        the per-app webhook URLs of invocations enqueued without their own (``WebhookSettings.from_env()``);
        ``reads_only``: a client that only reads (``agentq status``, ``agentq inbox``) sends no run job, so it needs
        no broker (a store on a Redis Cluster, no ``AGENTQ_BROKER_URL``); its methods that write (create_session,
        delete_session, enqueue, respond, approve, reject, cancel) raise UsageError before sending anything."""
        from worker.config.local_redis import discover_url
        from worker.records.reads import A2ATasks, DeadLetters, InboxReads, OpsReads, SessionTraces
        from worker.records.store import InvocationStore

        self.redis_url = redis_url = redis_url or discover_url()
        self._store = InvocationStore(redis_url, celery_app=celery_app, retention=retention, webhooks=webhooks,
                                      reads_only=reads_only)
        self._reads_only = reads_only
        self._artifact_service = None
        self.ops = OpsReads(self._store)
        """Redis answering, workers alive, the run queue's depth, invocations by status, webhook figures."""
        self.inbox = InboxReads(self._store)
        """The parked invocations across apps and users (the approvers' inbox)."""
        self.dead_letters = DeadLetters(self._store)
        """Webhook notifications given up on, and sending one again."""
        self.traces = SessionTraces(self._store)
        """The spans saved for a session, and which users have a session of a given id."""
        self.a2a_tasks = A2ATasks(self._store)
        """The A2A tasks of an app served over A2A (api.a2a): saved whole by the A2A SDK, read by any API process."""
        from worker.schedules import ScheduleClient

        self.schedules = ScheduleClient(self._store, writes=self._writes)
        """Cron and interval schedules that enqueue invocations (create, list, pause, resume, trigger, delete)."""

    async def aclose(self) -> None:
        """Close the Redis connections."""
        if self._artifact_service is not None:
            await self._artifact_service.aclose()
        await self.schedules.aclose()
        await self._store.aclose()

    def _writes(self, method: str) -> None:
        if self._reads_only:
            from runtime.errors import UsageError

            raise UsageError(f"AgentqClient.{method}: this client was made with reads_only=True; make one without it "
                             "to write (on a Redis Cluster store with AGENTQ_BROKER_URL set)")

    async def __aenter__(self) -> AgentqClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    @property
    def session_service(self):
        """The RedisSessionService on the same Redis (read sessions, list them, delete them)."""
        return self._store.session_service

    @property
    def artifact_service(self):
        """A RedisArtifactService on the same Redis (made on first use, closed with the client)."""
        if self._artifact_service is None:
            from runtime.artifacts import RedisArtifactService

            self._artifact_service = RedisArtifactService(self.redis_url)
        return self._artifact_service

    async def create_session(
        self,
        app_name: str,
        user_id: str,
        session_id: str | None = None,
        state: dict[str, Any] | None = None,
    ) -> Session:
        """Create a session (a fresh id when none is given). Raises SessionExistsError on a taken id."""
        self._writes("create_session")
        return await self._store.create_session(app_name, user_id, session_id, state)

    async def delete_session(self, app_name: str, user_id: str, session_id: str, reason: str | None = None, *,
                             actor: dict | None = None) -> list[str]:
        """Delete every key of the session; its queued, running and parked invocations are cancelled with
        ``reason`` and leave the inbox, with ``actor`` recorded as who cancelled them (as for ``cancel``); its
        AgentTool child sessions go too. Returns their ids. Deleting a session that does not exist is no error."""
        self._writes("delete_session")
        return await self._store.delete_session(app_name, user_id, session_id, reason, actor=actor or cli_actor())

    async def list_sessions(
        self, app_name: str, user_id: str, *, page_size: int = 100, page_token: str | None = None
    ) -> Page[Session]:
        """A page of the user's sessions in the app, by id, without events; pass ``next_page_token`` on."""
        from worker.records.listing import sessions_page

        return await sessions_page(self._store, app_name, user_id, page_size=page_size, page_token=page_token)

    async def enqueue(
        self,
        app_name: str,
        user_id: str,
        session_id: str,
        new_message: MessageLike,
        state_delta: dict[str, Any] | None = None,
        run_config: dict[str, Any] | Any | None = None,
        *,
        time_limit: float | None = None,
        park_timeout: float | None = None,
        webhook: str | None = None,
        principal: str | None = None,
        invocation_id: str | None = None,
        strategy: str = "enqueue",
        actor: dict | None = None,
    ) -> str:
        """Record a new invocation as ``queued`` behind the session's earlier ones, send its run job; its id.

        ``run_config`` is a RunConfig or its dict (``max_llm_calls``, ``streaming_mode``). ``time_limit`` bounds
        one run's wall clock (seconds); ``park_timeout`` is how long a long-running call may stay unanswered
        before it is answered with an expiry error (default: the retention policy's ``park_timeout_s``).
        ``webhook`` (an http(s) URL) is POSTed a signed notification when the invocation parks, completes,
        fails, is cancelled or a pending call expires (default: the app's URL in ``webhooks``, else none).
        ``principal`` (the API's caller) is recorded as who enqueued it, for the approval rules.
        ``invocation_id``: the id to give it, minted by the caller with ``runtime.ids.new_invocation_id`` (an A2A
        task's id is its invocation's); an id in use is refused. Default: a new one.
        ``strategy`` (double texting, worker.records.double_texting): ``enqueue`` queues behind the session's live
        invocations; ``reject`` raises SessionBusyError while one is queued, running or parked; ``interrupt``
        cancels them (what they committed stays); ``rollback`` cancels them and rewinds the session to before
        them (RollbackRefusedError when that would take back another invocation's events). ``actor`` is
        recorded as who cancelled them (default ``cli:<os user>``).
        Raises SessionNotFoundError, InvalidMessageError, UsageError (a webhook that is not an http(s) URL, an
        unknown strategy).
        """
        self._writes("enqueue")
        by = {"strategy": strategy, "actor": actor or cli_actor()} if strategy != "enqueue" else {}
        return await self._store.enqueue(
            app_name, user_id, session_id, new_message, state_delta, run_config,
            time_limit=time_limit, park_timeout=park_timeout, webhook=webhook, principal=principal,
            invocation_id=invocation_id, **by,
        )

    async def rewind(self, app_name: str, user_id: str, session_id: str, before_invocation_id: str) -> Session:
        """Put the session back as it was before ``before_invocation_id``: history, session state and session
        artifacts (``Runner.rewind_async``'s result, worker.records.rewind); the session after the rewind.

        Raises SessionNotFoundError, InvocationNotFoundError (no event of that invocation in the session),
        SessionBusyError (an invocation is queued, running or parked on the session: cancel it first)."""
        self._writes("rewind")
        from worker.records.rewind import rewind

        return await rewind(self._store, app_name, user_id, session_id, before_invocation_id)

    async def cancel_session(self, app_name: str, user_id: str, session_id: str,
                             reason: str = "cancelled by client", *, actor: dict | None = None) -> list[str]:
        """Cancel every invocation queued, running or parked on the session, all in one step (so no queued one is
        claimed between the cancels, worker.records.session_cancel); their ids (empty when none was live)."""
        self._writes("cancel_session")
        from worker.records.session_cancel import cancel_session

        return await cancel_session(self._store, app_name, user_id, session_id, reason,
                                    actor=actor or cli_actor())

    async def add_approval(self, invocation_id: str, call_id: str, principal: str) -> list[str] | None:
        """Record ``principal``'s approval of a parked confirmation that needs several approvers, without
        answering it; the approvers so far (None: that principal had approved it already). Answer it with
        ``approve`` once enough have. Raises InvocationNotFoundError, CallNotPendingError."""
        self._writes("add_approval")
        return await self._store.add_approval(invocation_id, call_id, principal)

    async def get(self, invocation_id: str) -> InvocationRecord:
        """The invocation's record (status, pending calls, error). Raises InvocationNotFoundError."""
        return await self._store.get(invocation_id)

    async def events(self, invocation_id: str, after: str | None = None) -> AsyncIterator[StreamEntry]:
        """The invocation's stream entries (events, partial ones too, and status entries), oldest first.

        ``after`` is a stream entry id (SSE ``Last-Event-ID``): only later entries are returned. The iterator
        ends after the status entry that settles the invocation (parked, completed, failed, cancelled).
        Raises InvocationNotFoundError.
        """
        async for entry in reading.follow(self._store, invocation_id, after=after):
            yield entry

    async def stream_position(self, invocation_id: str) -> str:
        """The newest entry id of the invocation's session stream: pass it as ``after`` to see only what follows."""
        return await reading.stream_position(self._store, invocation_id)

    async def session_position(self, app_name: str, user_id: str, session_id: str) -> str:
        """The newest entry id of a session's stream ('0-0' when it is empty or gone)."""
        return await reading.session_position(self._store, app_name, user_id, session_id)

    async def session_events(
        self, app_name: str, user_id: str, session_id: str, after: str | None = None, *, follow: bool = True
    ) -> AsyncIterator[StreamEntry]:
        """Every stream entry of a session, oldest first; with ``follow`` it waits for new ones forever."""
        async for entry in reading.follow_session(self._store, app_name, user_id, session_id, after=after,
                                                  follow=follow):
            yield entry

    async def respond(
        self, invocation_id: str, function_responses: list[FunctionResponseLike], *, actor: dict | None = None,
        pending: list[PendingCall] | None = None, state_delta: dict[str, Any] | None = None,
    ) -> InvocationRecord:
        """Answer pending long-running calls; the invocation is ``queued`` again when this returns.

        Each response is validated against the pending calls (id must be pending and, unless an earlier
        response had ``will_continue``, not answered already) and stored on the record before the resume job
        is sent. ``actor`` (``{"principal": ..., "client": ...}``) is recorded as who answered (worker.records.audit;
        default ``cli:<os user>``); a response carrying ``agentq:answered_by`` itself is refused. ``pending``:
        the record's pending calls when the caller just read the record (their answer shapes are checked from
        it instead of read again). ``state_delta`` is committed with the response event when the invocation
        resumes, as ADK's runner commits a message's state delta.
        Raises InvocationNotFoundError, CallNotPendingError (nothing stored), UsageError.
        """
        self._writes("respond")
        return await self._store.respond(invocation_id, function_responses, actor=actor or cli_actor(),
                                         pending=pending, state_delta=state_delta)

    async def approve(self, invocation_id: str, call_id: str | None = None, payload: Any = None, *,
                      actor: dict | None = None) -> InvocationRecord:
        """Confirm a pending tool confirmation (``call_id``: the ``adk_request_confirmation`` call's id; may be
        left out when exactly one confirmation is pending). The held tool runs once when the invocation resumes.
        ``actor``: as for ``respond``. Raises InvocationNotFoundError, CallNotPendingError (answered already),
        UsageError."""
        return await self._confirm(invocation_id, call_id, True, payload, actor)

    async def reject(self, invocation_id: str, call_id: str | None = None, payload: Any = None, *,
                     actor: dict | None = None) -> InvocationRecord:
        """Refuse a pending tool confirmation: the held tool never runs, the model is told it was rejected."""
        return await self._confirm(invocation_id, call_id, False, payload, actor)

    async def _confirm(self, invocation_id: str, call_id: str | None, confirmed: bool, payload: Any,
                       actor: dict | None = None):
        self._writes("approve" if confirmed else "reject")
        if call_id is None:
            record = await self._store.get(invocation_id)
            call_id = only_confirmation(record).id
        answer = {"confirmed": confirmed} if payload is None else {"confirmed": confirmed, "payload": payload}
        return await self.respond(invocation_id, [
            {"id": call_id, "name": REQUEST_CONFIRMATION_FUNCTION_CALL_NAME, "response": answer}], actor=actor)

    async def cancel(self, invocation_id: str, reason: str = "cancelled by client", *,
                     actor: dict | None = None) -> InvocationRecord:
        """Cancel a queued, running or parked invocation; a running one stops before its next commit.

        ``actor`` is recorded as who cancelled (as for ``respond``; default ``cli:<os user>``); the AgentTool
        child sessions it made are deleted. Raises InvocationNotFoundError, InvalidTransitionError (already
        completed, failed or cancelled).
        """
        self._writes("cancel")
        return await self._store.cancel(invocation_id, reason, actor=actor or cli_actor())

    async def audit(self, invocation_id: str) -> list[AuditEntry]:
        """Who answered, cancelled or redelivered for the invocation, oldest first. Raises InvocationNotFoundError."""
        return (await self._store.get(invocation_id)).audit

    async def app_audit_page(self, app_name: str, *, allows: Any = None, page_size: int = 100,
                             page_token: str | None = None) -> Page[dict[str, Any]]:
        """A page of the app's audited invocations with their entries, newest first (worker.records.audit);
        ``allows(app, user)`` keeps only the users a caller may see (default: all)."""
        return await app_audit_page(self._store, app_name, allows=allows or (lambda app, user: True),
                                    page_size=page_size, page_token=page_token)

    async def wait(self, invocation_id: str, timeout: float | None = None) -> InvocationRecord:
        """Wait until the invocation settles (parked, completed, failed, cancelled) and return its record.

        Raises InvocationNotFoundError, TimeoutError after ``timeout`` seconds.
        """
        return await reading.wait(self._store, invocation_id, timeout)

    async def list_invocations(
        self,
        app_name: str,
        user_id: str,
        status: InvocationStatus | None = None,
        *,
        session_id: str | None = None,
        limit: int = 100,
    ) -> list[InvocationRecord]:
        """A user's invocations in an app, newest first, optionally by status (``parked``: the approval inbox)."""
        return await self._store.list_invocations(app_name, user_id, status, session_id=session_id, limit=limit)

    async def invocations_page(
        self,
        app_name: str,
        user_id: str,
        status: InvocationStatus | None = None,
        *,
        session_id: str | None = None,
        page_size: int = 100,
        page_token: str | None = None,
    ) -> Page[InvocationRecord]:
        """A page of ``list_invocations``; pass ``next_page_token`` on for the next (None: that was the last).

        Stable while invocations come and go: none present throughout is returned twice or skipped. The
        parked inbox and the unfiltered listing read their own indexes; another status or a session filter
        scans, so such a page may hold fewer than ``page_size`` and still have a next one."""
        from worker.records.listing import invocations_page

        return await invocations_page(self._store, app_name, user_id, status=status, session_id=session_id,
                                      page_size=page_size, page_token=page_token)


class SyncAgentqClient:
    """A blocking wrapper of AgentqClient for scripts and the CLI (runs its own event loop)."""

    def __init__(self, redis_url: str | None = None, *, celery_app: Any | None = None,
                 retention: RetentionPolicy | None = None):
        """See AgentqClient (``redis_url`` None: found the same way)."""
        self._runner = asyncio.Runner()
        try:
            self._client = self._runner.run(_make(redis_url, celery_app, retention))
        except BaseException:
            self._runner.close()
            raise

    def close(self) -> None:
        """Close connections and the private event loop."""
        self._runner.run(self._client.aclose())
        self._runner.close()

    def __enter__(self) -> SyncAgentqClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def create_session(self, *args: Any, **kwargs: Any) -> Session:
        """See AgentqClient.create_session."""
        return self._runner.run(self._client.create_session(*args, **kwargs))

    def enqueue(self, *args: Any, **kwargs: Any) -> str:
        """See AgentqClient.enqueue."""
        return self._runner.run(self._client.enqueue(*args, **kwargs))

    def get(self, invocation_id: str) -> InvocationRecord:
        """See AgentqClient.get."""
        return self._runner.run(self._client.get(invocation_id))

    def events(self, invocation_id: str, after: str | None = None) -> Iterator[StreamEntry]:
        """The invocation's entries as they arrive, until it settles."""
        entries = self._client.events(invocation_id, after)
        try:
            while True:
                try:
                    yield self._runner.run(entries.__anext__())
                except StopAsyncIteration:
                    return
        finally:
            self._runner.run(entries.aclose())

    def stream_position(self, invocation_id: str) -> str:
        """See AgentqClient.stream_position."""
        return self._runner.run(self._client.stream_position(invocation_id))

    def respond(self, invocation_id: str, function_responses: list[FunctionResponseLike], *,
                actor: dict | None = None) -> InvocationRecord:
        """See AgentqClient.respond."""
        return self._runner.run(self._client.respond(invocation_id, function_responses, actor=actor))

    def approve(self, invocation_id: str, call_id: str | None = None, payload: Any = None, *,
                actor: dict | None = None) -> InvocationRecord:
        """See AgentqClient.approve."""
        return self._runner.run(self._client.approve(invocation_id, call_id, payload, actor=actor))

    def reject(self, invocation_id: str, call_id: str | None = None, payload: Any = None, *,
               actor: dict | None = None) -> InvocationRecord:
        """See AgentqClient.reject."""
        return self._runner.run(self._client.reject(invocation_id, call_id, payload, actor=actor))

    def cancel(self, invocation_id: str, reason: str = "cancelled by client", *,
               actor: dict | None = None) -> InvocationRecord:
        """See AgentqClient.cancel."""
        return self._runner.run(self._client.cancel(invocation_id, reason, actor=actor))

    def rewind(self, *args: Any, **kwargs: Any) -> Session:
        """See AgentqClient.rewind."""
        return self._runner.run(self._client.rewind(*args, **kwargs))

    def wait(self, invocation_id: str, timeout: float | None = None) -> InvocationRecord:
        """See AgentqClient.wait."""
        return self._runner.run(self._client.wait(invocation_id, timeout))

    def list_invocations(self, *args: Any, **kwargs: Any) -> list[InvocationRecord]:
        """See AgentqClient.list_invocations."""
        return self._runner.run(self._client.list_invocations(*args, **kwargs))

    def delete_session(self, *args: Any, **kwargs: Any) -> list[str]:
        """See AgentqClient.delete_session."""
        return self._runner.run(self._client.delete_session(*args, **kwargs))

    def list_sessions(self, *args: Any, **kwargs: Any) -> Page[Session]:
        """See AgentqClient.list_sessions."""
        return self._runner.run(self._client.list_sessions(*args, **kwargs))

    def invocations_page(self, *args: Any, **kwargs: Any) -> Page[InvocationRecord]:
        """See AgentqClient.invocations_page."""
        return self._runner.run(self._client.invocations_page(*args, **kwargs))


async def _make(redis_url: str | None, celery_app: Any | None, retention: RetentionPolicy | None) -> AgentqClient:
    # The client's Redis connections belong to the loop they are created on.
    return AgentqClient(redis_url, celery_app=celery_app, retention=retention)
