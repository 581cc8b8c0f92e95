"""SequentialAgent: runs its sub-agents one after another."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import ClassVar

from ..contexts import resume
from ..contexts.invocation_context import InvocationContext
from ..events import Event
from .base_agent import BaseAgent


class SequentialAgent(BaseAgent):
    """Runs each sub-agent in order, in the same branch. A paused sub-agent pauses the sequence.

    In a resumable run it commits a checkpoint ``{"current_sub_agent": name}`` before each sub-agent and
    ``end_of_agent`` at the end; a resumed invocation continues at the checkpointed sub-agent.
    """

    keeps_progress: ClassVar[bool] = True

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        names = [agent.name for agent in self.sub_agents]
        start, resuming = 0, False
        state, ended = resume.workflow_progress(ctx, self)
        if ended:
            ctx.end_invocation = True
            return
        if state and state.get("current_sub_agent") in names:
            start, resuming = names.index(state["current_sub_agent"]), True
        for index in range(start, len(self.sub_agents)):
            sub_agent = self.sub_agents[index]
            if ctx.run.resumable and not (resuming and index == start):
                checkpoint = await self._progress(ctx, agent_state={"current_sub_agent": sub_agent.name})
                if checkpoint is not None:
                    yield checkpoint
            async for event in sub_agent.run_async(ctx):
                yield event
            if ctx.halted():
                return
        if ctx.run.resumable:
            if (checkpoint := await self._progress(ctx, end_of_agent=True)) is not None:
                yield checkpoint
