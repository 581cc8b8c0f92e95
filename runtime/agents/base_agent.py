"""BaseAgent: a node of the agent tree; subclasses implement ``_run_async_impl``."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any, ClassVar

from google.genai import types
from pydantic import BaseModel, ConfigDict, Field

from ..contexts import failures, resume
from ..contexts.callback_context import CallbackContext
from ..contexts.callbacks import Callbacks, first_answer
from ..contexts.invocation_context import InvocationContext
from ..errors import InvalidAgentTreeError
from ..events import Event, EventActions
from ..flows import _fast
from ..sessions.base_session_service import set_fields
from ..tracing.recorder import CONVERSATION_ID, OPERATION
from . import paths, progress


class BaseAgent(BaseModel):
    """An agent: a name, a description, sub-agents, and before/after callbacks around its run.

    ``before_agent_callback`` returning Content skips the agent (that content is its answer);
    ``after_agent_callback`` returning Content adds a final event. Both may be lists, sync or async.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")
    keeps_progress: ClassVar[bool] = False
    """A workflow agent that checkpoints its progress in a resumable run (``agents.progress``)."""
    runs_as_node: ClassVar[bool] = False
    """google-adk 2.13 runs this kind of agent as a node with its own ``nodeInfo.path`` (``agents.paths``)."""

    name: str
    description: str = ""
    sub_agents: list[BaseAgent] = Field(default_factory=list)
    before_agent_callback: Callbacks = None
    after_agent_callback: Callbacks = None
    parent_agent: BaseAgent | None = Field(default=None, exclude=True, repr=False)

    def __init__(self, **data: Any):
        super().__init__(**data)
        # Checked here, not in a validator, so the error is ours rather than wrapped in a ValidationError.
        if not self.name.isidentifier():
            raise InvalidAgentTreeError(f"agent name {self.name!r} must be a Python identifier")
        if self.name == "user":
            raise InvalidAgentTreeError("agent name 'user' is reserved for the end user")
        for sub_agent in self.sub_agents:
            if sub_agent.parent_agent is not None and sub_agent.parent_agent is not self:
                raise InvalidAgentTreeError(
                    f"agent {sub_agent.name!r} already has parent {sub_agent.parent_agent.name!r}; "
                    f"cannot add it to {self.name!r}"
                )
            sub_agent.parent_agent = self

    # --- the tree ---

    @property
    def root_agent(self) -> BaseAgent:
        """The top of the tree this agent belongs to."""
        agent = self
        while agent.parent_agent is not None:
            agent = agent.parent_agent
        return agent

    def find_agent(self, name: str) -> BaseAgent | None:
        """This agent or a descendant called ``name``."""
        return self if self.name == name else self.find_sub_agent(name)

    def find_sub_agent(self, name: str) -> BaseAgent | None:
        """A descendant called ``name``."""
        for sub_agent in self.sub_agents:
            found = sub_agent.find_agent(name)
            if found is not None:
                return found
        return None

    # --- running ---

    async def run_async(self, parent_context: InvocationContext) -> AsyncGenerator[Event, None]:
        """Run this agent in ``parent_context``'s invocation, yielding its events (callbacks included).

        A failure in the agent's own code (a template, a callback, the model call) is yielded as an error
        event, committed like any other, and then raised to the caller.
        """
        ctx = parent_context.for_agent(self)
        ctx.agent_path = paths.agent_path(self, parent_context, ctx)
        spans = ctx.run.spans
        if spans is not None:
            ctx.span = spans.start(f"invoke_agent {self.name}", parent_context.span, **{
                OPERATION: "invoke_agent", "gen_ai.agent.name": self.name,
                "gen_ai.agent.description": self.description, CONVERSATION_ID: ctx.session.id})
        try:
            if not (ctx.run.resumed and resume.has_started(ctx, self)):
                event = await self._agent_callback_event(ctx, self.before_agent_callback, end=True)
                if event is not None:
                    yield self._with_path(ctx, event)
                if ctx.end_invocation:
                    return
            async with aclosing(self._run_async_impl(ctx)) as events:
                async for event in events:
                    yield self._with_path(ctx, event)
            # A paused agent still runs its after-agent callback (it ran this far); a failed one does not.
            if ctx.end_invocation or ctx.run.failed:
                return
            event = await self._agent_callback_event(ctx, self.after_agent_callback, end=False)
            if event is not None:
                yield self._with_path(ctx, event)
        except Exception as exc:
            if ctx.plugin_manager.has_callback("on_agent_error_callback"):
                await ctx.plugin_manager.run_on_agent_error_callback(
                    agent=self, callback_context=CallbackContext(ctx), error=exc)
            if ctx.run.failed or not failures.is_reportable(exc):
                raise
            ctx.run.failed = True
            yield self._with_path(ctx, failures.error_event(ctx, self.name, exc))
            raise
        finally:
            if spans is not None:
                spans.end(ctx.span)

    def _with_path(self, ctx: InvocationContext, event: Event) -> Event:
        """``event`` with this agent's ``nodeInfo.path`` when it is this agent's and has none yet (as google-adk:
        a sub-agent's events keep the path their own agent gave them)."""
        if event.author == self.name and (event.node_info is None or not event.node_info.path):
            # every event of every agent passes here: set the field without pydantic's assignment checks
            set_fields(event, node_info=_fast.node_info(ctx.agent_path) if event.node_info is None
                       else _fast.replace(event.node_info, {"path": ctx.agent_path}))
        return event

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        """The agent's own work; subclasses override it."""
        raise NotImplementedError(f"{type(self).__name__} does not implement _run_async_impl")
        yield  # pragma: no cover - makes this an async generator

    async def _agent_callback_event(self, ctx: InvocationContext, callbacks: Callbacks, *, end: bool) -> Event | None:
        """The event of the before (``end=True``) or after agent callbacks: the plugins' first, then the agent's
        own unless a plugin answered; they share one context, so all their state changes land in the event."""
        plugins = ctx.plugin_manager
        hook = "before_agent_callback" if end else "after_agent_callback"
        plugged = plugins.has_callback(hook)
        if not callbacks and not plugged:
            return None
        callback_context = CallbackContext(ctx)
        content = None
        if plugged:
            run_hook = plugins.run_before_agent_callback if end else plugins.run_after_agent_callback
            content = await run_hook(agent=self, callback_context=callback_context)
        if content is None and callbacks:
            content = await first_answer(callbacks, callback_context=callback_context)
        if isinstance(content, types.Content):
            ctx.end_invocation = end
            return Event(
                invocation_id=ctx.invocation_id, author=self.name, branch=ctx.branch, content=content,
                actions=callback_context.actions,
            )
        if callback_context.state.has_delta() or callback_context.actions.artifact_delta:
            return Event(
                invocation_id=ctx.invocation_id, author=self.name, branch=ctx.branch,
                actions=callback_context.actions,
            )
        return None

    def _checkpoint(self, ctx: InvocationContext, **actions: Any) -> Event:
        """An event with no content that records this agent's progress (for resumption)."""
        return Event(invocation_id=ctx.invocation_id, author=self.name, branch=ctx.branch,
                     actions=EventActions(**actions))

    async def _progress(self, ctx: InvocationContext, **actions: Any) -> Event | None:
        """A workflow agent's checkpoint in a resumable run: the event to commit where the app is ADK-resumable
        (ADK's event shape), else None, the checkpoint then kept privately (see ``agents.progress``): a durable
        runner (agentq's workers) resumes from it, and commits the events ADK commits, no more."""
        event = self._checkpoint(ctx, **actions)
        if ctx.run.llm_end_events or ctx.tool_journal is None:
            return event
        await progress.keep_private(ctx, event)
        return None
