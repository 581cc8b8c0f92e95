"""Runner: drives one invocation of an agent over a session, committing each event before the agent resumes.

The loop: the agent yields an event; a non-partial event is committed through the SessionService (state,
artifacts, history); the event is forwarded to the caller; only then does the agent continue, seeing the
committed state. Partial events are forwarded, never stored. The user message is committed (not yielded)
first, carrying the run's ``state_delta``.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Generator
from contextlib import aclosing
from typing import TYPE_CHECKING, Any

from google.genai import types

from ._sync import iterate_in_thread
from .agents import progress
from .agents.base_agent import BaseAgent
from .agents.llm_agent import LlmAgent
from .apps.compaction import compact_after_invocation
from .artifacts import BaseArtifactService, InMemoryArtifactService
from .contexts.agent_tree import index_tree
from .contexts.invocation_context import InvocationContext, InvocationRun
from .contexts.run_config import RunConfig
from .errors import (
    InvalidAgentTreeError,
    InvalidMessageError,
    InvocationNotFoundError,
    SessionNotFoundError,
    StaleSessionError,
    UsageError,
)
from .events import Event, EventActions, NodeInfo
from .flows import _fast, confirmation
from .flows.agent_modes import delegator_of, refuse_single_turn_root
from .flows.delegation import open_task_branch
from .ids import new_invocation_id
from .plugins import BasePlugin, PluginManager
from .plugins.run_hooks import run_with_plugins
from .routing import (
    agent_for_new_turn,
    already_committed,
    branch_of,
    check_message,
    find_invocation_for_function_responses,
    first_user_content,
    function_call_event,
    pending_long_running_calls,
    user_message_event,
)
from .sessions import BaseSessionService, InMemorySessionService, Session, State
from .sessions.base_session_service import set_fields
from .sessions.invocation_index import invocation_events
from .sessions.rewind import rewind_session
from .tracing import BaseSpanStore, InMemorySpanStore, SpanRecorder, otel

if TYPE_CHECKING:
    from .apps import App, EventsCompactionConfig
    from .tools.tool_journal import BaseToolJournal

__all__ = ["InMemoryRunner", "Runner", "find_invocation_for_function_responses", "pending_long_running_calls"]

log = logging.getLogger(__name__)


class Runner:
    """Runs ``agent`` (or ``app.root_agent``) for the sessions of ``app_name`` in ``session_service``.

    ``tool_journal`` (optional) makes tool side effects survive a crash exactly once (see tools.tool_journal).
    ``plugins`` (or ``app.plugins``; not both) run for every agent, model and tool call (see runtime.plugins).
    ``resumable`` commits workflow checkpoints (``agent_state``/``end_of_agent`` events) and pauses the whole
    invocation on a pending long-running call, as ADK's resumable apps do (an LlmAgent also commits its
    ``end_of_agent``). Default: ``app.resumability_config`` when an App is given; else a runner with a
    ``tool_journal`` (durable execution: the worker) is resumable too, and commits what ADK's plain run commits:
    its Sequential/Loop/Parallel checkpoints stay in the journal (``runtime.agents.progress``).
    Without it, events look exactly like ADK's default; resumption then infers progress from history
    (LlmAgents, Sequential and Parallel resume; a LoopAgent restarts its iteration count).
    ``events_compaction_config`` (default: ``app.events_compaction_config``) summarises older events after
    each invocation and, with a token threshold, before model calls (see runtime.apps.compaction); a worker
    passes it without ``app=``, and ``resumable=True`` only for an App that is resumable.
    ``credential_service`` (optional, a ``runtime.auth.BaseCredentialService``) keeps the users' credentials that
    tools ask for with ``tool_context.request_credential`` (see runtime.auth).
    ``span_store`` (optional) keeps each run's agent, model and tool spans, written once when the run ends
    (see runtime.tracing); without it nothing is recorded.
    """

    def __init__(
        self,
        *,
        app_name: str | None = None,
        agent: BaseAgent | None = None,
        session_service: BaseSessionService,
        artifact_service: BaseArtifactService | None = None,
        tool_journal: BaseToolJournal | None = None,
        app: App | None = None,
        memory_service: Any = None,
        credential_service: Any = None,
        resumable: bool | None = None,
        plugins: list[BasePlugin] | None = None,
        plugin_close_timeout: float = 5.0,
        events_compaction_config: EventsCompactionConfig | None = None,
        span_store: BaseSpanStore | None = None,
    ):
        if app is not None:
            if plugins is not None:
                raise UsageError("When app is provided, plugins should not be provided and should be provided "
                                 "in the app instead.")
            plugins = app.plugins
            agent = agent or app.root_agent
            app_name = app_name or app.name
        if agent is None or not app_name:
            raise InvalidAgentTreeError("Runner needs app_name= and agent= (or app=)")
        self.app_name = app_name
        self.agent = agent
        self.app = app
        self.session_service = session_service
        self.artifact_service = artifact_service
        self.tool_journal = tool_journal
        self.credential_service = credential_service
        self.plugin_manager = PluginManager(plugins=plugins, close_timeout=plugin_close_timeout)
        if events_compaction_config is None and app is not None:
            events_compaction_config = app.events_compaction_config
        self.events_compaction_config = events_compaction_config
        config = app.resumability_config if app is not None else None
        adk_resumable = resumable if resumable is not None else bool(config and config.is_resumable)
        # ADK's resumable event shape only when asked for; a journaled (durable) runner is resumable anyway
        self._llm_end_events = adk_resumable
        self.resumable = adk_resumable or (resumable is None and config is None and tool_journal is not None)
        self._agents = index_tree(agent)
        self._uncommitted: dict[tuple[str, str], Any] = {}
        self.span_store = span_store

    async def close(self) -> None:
        """Close the plugins (the runner itself holds nothing else to release)."""
        await self.plugin_manager.close()

    async def run_async(
        self,
        *,
        user_id: str,
        session_id: str,
        new_message: types.Content | None = None,
        invocation_id: str | None = None,
        state_delta: dict[str, Any] | None = None,
        run_config: RunConfig | None = None,
        message_metadata: dict[str, Any] | None = None,
    ) -> AsyncGenerator[Event, None]:
        """Run one invocation and yield its events.

        ``message_metadata`` (an agentq addition) is the ``custom_metadata`` of the event that records
        ``new_message`` (the worker names there who answered each function response).

        - A text message (or no message and no ``invocation_id``: the agent runs on the history as it is)
          starts a new invocation (``invocation_id`` may name it) with the agent that last
          answered (when it can transfer back), else the root agent.
        - A message of FunctionResponses resumes the invocation that issued those calls, under its id.
        - ``invocation_id`` of an invocation with committed events and no message continues it from them
          (after a crash or a pause); a message identical to one it already committed is not appended again.
        """
        session = await self.session_service.get_session(
            app_name=self.app_name, user_id=user_id, session_id=session_id
        )
        if session is None:
            raise SessionNotFoundError(
                f"Session not found: {session_id!r} (app {self.app_name!r}, user {user_id!r})"
            )
        refuse_single_turn_root(self.agent)
        responses = check_message(new_message)
        if invocation_id and not responses and _has_idless_response(new_message):
            # as ADK 2.13: an answer without an id cannot say which call it answers, so it resumes nothing
            raise InvalidMessageError("Function response id is required to resume an invocation.")
        if responses:
            owner = find_invocation_for_function_responses(session, new_message)
            if invocation_id and invocation_id != owner:
                raise InvalidMessageError(
                    f"the function responses answer calls of invocation {owner!r}, not {invocation_id!r}"
                )
            invocation_id = owner
        # What is derived from the history (this index, the model contents) outlives the run when the service
        # keeps the session's parsed history: a long session is then not rescanned by every invocation.
        scratch = self.session_service.history_scratch(session)
        prior = invocation_events(scratch, session.events, invocation_id) if invocation_id else []
        if new_message is None and not prior and invocation_id:
            raise InvocationNotFoundError(
                f"invocation {invocation_id!r} has no committed events in session {session_id!r}; "
                "send new_message= to start it"
            )
        run = InvocationRun(agents=self._agents, resumed=bool(prior), resumable=self.resumable,
                            llm_end_events=self._llm_end_events, uncommitted=self._uncommitted,
                            contents=scratch.setdefault("contents", {}))
        for event in prior:
            run.record(event)
        if prior and self.resumable and not self._llm_end_events and self.tool_journal is not None:
            await progress.restore_private(run, self.tool_journal, invocation_id, self._agents)
        ctx = InvocationContext(
            invocation_id=invocation_id or new_invocation_id(),
            agent=self.agent,
            session=session,
            session_service=self.session_service,
            artifact_service=self.artifact_service,
            tool_journal=self.tool_journal,
            credential_service=self.credential_service,
            user_content=new_message or first_user_content(prior),
            run_config=run_config or RunConfig(),
            run=run,
            plugin_manager=self.plugin_manager,
            events_compaction_config=self.events_compaction_config,
        )
        branch = None
        if responses:
            branch = function_call_event(session, responses[0].id).branch
        elif new_message is not None:  # a reply to a task agent still open belongs to that task's branch
            branch = open_task_branch(session.events, self._agents)
        if state_delta:  # temp: keys are not committed, yet this invocation sees them like any other key
            session.state.update({k: v for k, v in state_delta.items() if k.startswith(State.TEMP_PREFIX)})
        if new_message is not None and not already_committed(new_message, prior, bool(responses)):
            confirmation.check_answers(session.events, responses)
            message = await self._user_message(ctx, new_message, prior, responses)
            if message is not None:
                event = user_message_event(ctx.invocation_id, message, state_delta, branch, message_metadata)
                set_fields(event, node_info=_fast.node_info(""))  # as google-adk 2.13: a user's message's path
                await self._commit(ctx, event)
        elif new_message is None and state_delta:
            await self._commit(ctx, Event(invocation_id=ctx.invocation_id, author="user", node_info=NodeInfo(path=""),
                                          actions=EventActions(state_delta=dict(state_delta))))
        agent = self._agent_to_run(session, run, responses)
        if agent is not self.agent:
            ctx.branch = branch_of(agent, prior)
        log.debug("invocation %s: running agent %r (resumed=%s)", ctx.invocation_id, agent.name, run.resumed)
        exported = otel.enabled()
        if self.span_store is None and not exported:
            async with aclosing(self._run(ctx, agent)) as events:
                async for event in events:
                    yield event
            return
        run.spans = SpanRecorder(ctx.invocation_id, session_id, otel.OtelMirror() if exported else None)
        ended = False
        try:
            async with aclosing(self._run(ctx, agent)) as events:
                async for event in events:
                    yield event
            ended = True
        except (Exception, GeneratorExit):  # failed, or the caller stopped reading: the spans so far are kept
            ended = True
            raise
        finally:
            if ended and self.span_store is not None:  # not when cancelled (a lost lease, a shutdown): no awaiting
                await self._save_spans(ctx)
            elif exported:
                run.spans.finished()  # the OpenTelemetry spans still open end here

    async def _save_spans(self, ctx: InvocationContext) -> None:
        """One write of the run's spans; a failure to keep them never fails the run."""
        try:
            await self.span_store.save(app_name=self.app_name, user_id=ctx.user_id, session_id=ctx.session.id,
                                       spans=ctx.run.spans.finished())
        except Exception as exc:  # one line: while the store is away every settling run says so
            log.warning("invocation %s: could not save its trace spans (%s: %s)", ctx.invocation_id,
                        type(exc).__name__, exc)
            log.debug("invocation %s: trace spans not saved", ctx.invocation_id, exc_info=True)

    async def _run(self, ctx: InvocationContext, agent: BaseAgent) -> AsyncGenerator[Event, None]:
        """Run ``agent``: commit each non-partial event, then yield it (through the plugins when there are)."""
        if self.plugin_manager.plugins:
            async with aclosing(run_with_plugins(ctx, agent, self._commit)) as events:
                async for event in events:
                    yield event
            await self._compact(ctx)
            return
        async with aclosing(agent.run_async(ctx)) as events:
            async for event in events:
                if not event.invocation_id:  # a custom agent's event: it belongs to this invocation
                    event.invocation_id = ctx.invocation_id
                if not event.partial:
                    await self._commit(ctx, event)
                yield event
        await self._compact(ctx)

    async def _compact(self, ctx: InvocationContext) -> None:
        """Summarise older events once the invocation is over, as the compaction config says (as ADK, only
        after the invocation's last event: never in the middle of it)."""
        config = self.events_compaction_config
        if config is None:
            return
        try:
            await compact_after_invocation(config, session=ctx.session, session_service=self.session_service,
                                           agent=self.agent, scratch=ctx.run.contents)
        except StaleSessionError:
            # another writer moved the session on while the summary was written; the history is whole, and
            # the next invocation looks again
            log.info("invocation %s: summary discarded, the session changed meanwhile", ctx.invocation_id)

    async def _user_message(self, ctx: InvocationContext, message: types.Content, prior: list[Event],
                            responses: list) -> types.Content | None:
        """The message to commit once the plugins' on_user_message callbacks had their say; None when a
        redelivered run finds what they made of it committed already."""
        plugins = self.plugin_manager
        if not plugins.has_callback("on_user_message_callback"):
            return message
        if not responses and any(e.author == "user" and e.content and not e.get_function_responses() for e in prior):
            return None  # as ADK: an invocation's message is taken (and shown to the plugins) once
        replaced = await plugins.run_on_user_message_callback(invocation_context=ctx, user_message=message)
        if replaced is None:
            return message
        check_message(replaced)
        ctx.user_content = replaced
        return None if already_committed(replaced, prior, bool(responses)) else replaced

    async def _commit(self, ctx: InvocationContext, event: Event) -> None:
        await self.session_service.append_event(ctx.session, event)
        ctx.run.record(event)

    def _agent_to_run(self, session: Session, run: InvocationRun, responses) -> BaseAgent:
        if responses and not self.resumable:
            # as ADK: the answer goes to the agent that made the call (its workflow went on already)
            return self._agents.get(function_call_event(session, responses[0].id).author, self.agent)
        first = next((e.author for e in run.events if e.author != "user"), None)
        if first is None:  # a new turn, or a resumed one that had not reached an agent yet
            return agent_for_new_turn(session, self.agent, self._agents)
        # Resume where the invocation started: each agent then finds its own progress in the committed
        # events (a transfer is followed again, finished agents do nothing). A workflow agent manages its
        # children, so resume it rather than the child.
        agent = delegator_of(self._agents.get(first, self.agent))  # a task resumes under its delegator
        while agent.parent_agent is not None and not isinstance(agent.parent_agent, LlmAgent):
            agent = agent.parent_agent
        return agent

    async def rewind_async(
        self,
        *,
        user_id: str,
        session_id: str,
        rewind_before_invocation_id: str,
        run_config: RunConfig | None = None,
    ) -> None:
        """Put the session back as it was before invocation ``rewind_before_invocation_id``: session state,
        session artifacts, what the model is shown and which agent answers next (see ``sessions.rewind``).

        ``run_config`` is accepted as ADK's is and changes nothing: a rewind needs the whole history. Raises
        SessionNotFoundError, or InvocationNotFoundError when the session has no event of that invocation.
        """
        session = await self.session_service.get_session(
            app_name=self.app_name, user_id=user_id, session_id=session_id
        )
        if session is None:
            raise SessionNotFoundError(
                f"Session not found: {session_id!r} (app {self.app_name!r}, user {user_id!r})"
            )
        await rewind_session(session_service=self.session_service, session=session,
                             rewind_before_invocation_id=rewind_before_invocation_id,
                             artifact_service=self.artifact_service, app_name=self.app_name)

    def run(
        self,
        *,
        user_id: str,
        session_id: str,
        new_message: types.Content | None = None,
        invocation_id: str | None = None,
        state_delta: dict[str, Any] | None = None,
        run_config: RunConfig | None = None,
    ) -> Generator[Event, None, None]:
        """``run_async`` for synchronous callers: runs it on a private event loop in a thread."""
        return iterate_in_thread(lambda: self.run_async(
            user_id=user_id, session_id=session_id, new_message=new_message, invocation_id=invocation_id,
            state_delta=state_delta, run_config=run_config,
        ))


def _has_idless_response(message: types.Content | None) -> bool:
    return message is not None and any(
        part.function_response is not None and not part.function_response.id for part in message.parts or [])


class InMemoryRunner(Runner):
    """A Runner with in-memory session, artifact and span services, for tests and local experiments."""

    def __init__(
        self,
        agent: BaseAgent | None = None,
        *,
        app_name: str | None = None,
        app: App | None = None,
        tool_journal: BaseToolJournal | None = None,
        resumable: bool | None = None,
        plugins: list[BasePlugin] | None = None,
        plugin_close_timeout: float = 5.0,
    ):
        super().__init__(
            app_name=app_name or (app.name if app is not None else "InMemoryRunner"),
            agent=agent,
            app=app,
            session_service=InMemorySessionService(),
            artifact_service=InMemoryArtifactService(),
            tool_journal=tool_journal,
            resumable=resumable,
            plugins=plugins,
            plugin_close_timeout=plugin_close_timeout,
            span_store=InMemorySpanStore(),
        )
