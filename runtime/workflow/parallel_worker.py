"""ParallelWorker: a node run once per item of its list input, a bounded number at a time.

Each item runs as a dynamic child (``parent@1/child@k`` for item k, on its own branch), so on a resumed
invocation the items that finished are not run again: their outputs come from history. Only
``max_parallel_workers`` items are in flight at once, so a fan-out over thousands of items holds bounded work.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

from pydantic import ConfigDict, Field

from .base_node import BaseNode
from .emitter import stop_tasks
from .errors import NodeInterrupted


class ParallelWorker(BaseNode):
    """Outputs the list of ``node``'s outputs, in input order."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    node: BaseNode = Field(...)
    max_parallel_workers: int | None = None

    def __init__(self, *, node: BaseNode, max_parallel_workers: int | None = None, **data: Any):
        data.setdefault("name", node.name)
        data.setdefault("rerun_on_resume", True)
        super().__init__(node=node, max_parallel_workers=max_parallel_workers, **data)

    async def _run_impl(self, *, ctx: Any, node_input: Any) -> AsyncGenerator[Any, None]:
        items = node_input if isinstance(node_input, list) else [node_input]
        if not items:
            yield []
            return
        results: list[Any] = [None] * len(items)
        limit = self.max_parallel_workers or len(items)
        in_flight: dict[asyncio.Task, int] = {}
        waiting: list[str] = []
        next_item = 0
        try:
            while next_item < len(items) or in_flight:
                while next_item < len(items) and len(in_flight) < limit and not waiting:
                    task = asyncio.create_task(ctx.run_node(self.node, node_input=items[next_item],
                                                            use_sub_branch=True))
                    in_flight[task] = next_item
                    next_item += 1
                if not in_flight:
                    break
                done, _ = await asyncio.wait(in_flight, return_when=asyncio.FIRST_COMPLETED)
                failure = None
                for task in sorted(done, key=in_flight.get):
                    index = in_flight.pop(task)
                    try:
                        results[index] = task.result()
                    except NodeInterrupted as paused:
                        waiting.extend(paused.interrupt_ids)
                    except Exception as exc:  # noqa: BLE001 - the first failure, in input order, is raised
                        failure = failure or exc
                if failure is not None:
                    raise failure
        finally:
            await stop_tasks(in_flight)
        if waiting:
            raise NodeInterrupted(waiting)
        yield results
