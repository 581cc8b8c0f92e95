"""LoopAgent: repeats its sub-agents until one escalates or ``max_iterations`` is reached."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import ClassVar

from ..contexts import resume
from ..contexts.invocation_context import InvocationContext
from ..events import Event
from .base_agent import BaseAgent


class LoopAgent(BaseAgent):
    """Runs the sub-agents in order, again and again. An event with ``actions.escalate`` (``exit_loop``) ends
    the loop after the sub-agent that sent it; ``max_iterations=None`` means no bound.

    In a resumable run, checkpoints ``{"current_sub_agent": name, "times_looped": n}`` let a resumed invocation
    continue mid-loop.
    """

    keeps_progress: ClassVar[bool] = True

    max_iterations: int | None = None

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        if not self.sub_agents:
            return
        names = [agent.name for agent in self.sub_agents]
        times_looped, start, resuming = 0, 0, False
        state, ended = resume.workflow_progress(ctx, self)
        if ended:
            ctx.end_invocation = True
            return
        if state and state.get("current_sub_agent") in names:
            times_looped = int(state.get("times_looped", 0))
            start, resuming = names.index(state["current_sub_agent"]), True
        while not self.max_iterations or times_looped < self.max_iterations:
            for index in range(start, len(self.sub_agents)):
                sub_agent = self.sub_agents[index]
                # Resuming, the escalation may have been committed before the stop.
                escalate = resuming and index == start and resume.escalated_since_checkpoint(ctx, self)
                if ctx.run.resumable and not (resuming and index == start):
                    if (checkpoint := await self._progress(
                        ctx, agent_state={"current_sub_agent": sub_agent.name, "times_looped": times_looped}
                    )) is not None:
                        yield checkpoint
                resuming = False
                async for event in sub_agent.run_async(ctx):
                    escalate = escalate or bool(event.actions.escalate)
                    yield event
                if ctx.halted():
                    return
                if escalate:
                    if ctx.run.resumable:
                        if (checkpoint := await self._progress(ctx, end_of_agent=True)) is not None:
                            yield checkpoint
                    return
            start = 0
            times_looped += 1
        if ctx.run.resumable:
            if (checkpoint := await self._progress(ctx, end_of_agent=True)) is not None:
                yield checkpoint
