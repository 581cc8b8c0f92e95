"""ParallelAgent: runs its sub-agents concurrently, each on its own branch."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import ClassVar

from ..contexts import resume
from ..contexts.invocation_context import InvocationContext
from ..events import Event
from .base_agent import BaseAgent

_DONE = object()


class ParallelAgent(BaseAgent):
    """Runs every sub-agent at once on branch ``parent.child``; each sees only its own branch's history.

    Events from the branches are interleaved as they come; each branch waits until its event is committed
    before it goes on. A resumed invocation re-enters every branch; finished branches do nothing.
    """

    keeps_progress: ClassVar[bool] = True

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        state, ended = resume.workflow_progress(ctx, self)
        if ended:
            ctx.end_invocation = True
            return
        if state is None and ctx.run.resumable:
            if (checkpoint := await self._progress(ctx, agent_state={})) is not None:
                yield checkpoint
        runs = [
            sub_agent.run_async(
                ctx.model_copy(update={"branch": f"{ctx.branch or self.name}.{sub_agent.name}"})
            )
            for sub_agent in self.sub_agents
        ]
        async with aclosing(merge(runs)) as events:
            async for event in events:
                yield event
        if ctx.halted():
            return
        if ctx.run.resumable:
            if (checkpoint := await self._progress(ctx, end_of_agent=True)) is not None:
                yield checkpoint


async def merge(runs: list[AsyncGenerator[Event, None]]) -> AsyncGenerator[Event, None]:
    """Interleave several event streams; a stream resumes only after its last event was consumed."""
    queue: asyncio.Queue = asyncio.Queue()

    async def drive(run: AsyncGenerator[Event, None]) -> None:
        try:
            async with aclosing(run):
                async for event in run:
                    consumed = asyncio.Event()
                    await queue.put((event, consumed))
                    await consumed.wait()
        except Exception as exc:  # surfaced to the consumer, which stops the other branches
            queue.put_nowait((exc, None))
        finally:
            queue.put_nowait((_DONE, None))

    tasks = [asyncio.create_task(drive(run)) for run in runs]
    remaining = len(tasks)
    try:
        while remaining:
            item, consumed = await queue.get()
            if item is _DONE:
                remaining -= 1
            elif isinstance(item, Exception):
                raise item
            else:
                yield item
                consumed.set()
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
