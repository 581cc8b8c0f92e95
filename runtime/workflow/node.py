"""``@node``: a function (or node) with node settings; ``Node``: a base class for hand-written nodes."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from pydantic import Field, PrivateAttr, model_validator

from .base_node import BaseNode
from .build import build_node
from .errors import WorkflowConfigurationError
from .retry_config import RetryConfig


def node(node_like: Any = None, *, name: str | None = None, rerun_on_resume: bool | None = None,
         retry_config: RetryConfig | None = None, timeout: float | None = None, parallel_worker: bool = False,
         max_parallel_workers: int | None = None, **unsupported: Any) -> Any:
    """Make ``node_like`` a node with these settings; usable bare (``@node``) or with arguments.

    ``parallel_worker=True`` runs the node once per item of a list input, at most ``max_parallel_workers``
    at a time, and outputs the list of their outputs in input order."""
    if unsupported:
        raise WorkflowConfigurationError(
            f"node() argument(s) {sorted(unsupported)} are not supported by agentq yet")
    if max_parallel_workers is not None:
        if not parallel_worker:
            raise WorkflowConfigurationError("max_parallel_workers can only be set when parallel_worker is True.")
        if max_parallel_workers < 1:
            raise WorkflowConfigurationError("max_parallel_workers must be greater than or equal to 1.")
    if node_like is None:
        return lambda function: node(function, name=name, rerun_on_resume=rerun_on_resume,
                                     retry_config=retry_config, timeout=timeout, parallel_worker=parallel_worker,
                                     max_parallel_workers=max_parallel_workers)
    built = build_node(node_like, name=name, rerun_on_resume=rerun_on_resume, retry_config=retry_config,
                       timeout=timeout)
    if parallel_worker:
        from .parallel_worker import ParallelWorker

        return ParallelWorker(node=built, max_parallel_workers=max_parallel_workers)
    return built


class Node(BaseNode):
    """Subclass and implement ``run_node_impl``; ``parallel_worker=True`` runs it once per item of a list input."""

    parallel_worker: bool = Field(default=False)
    max_parallel_workers: int | None = Field(default=None)
    _inner: BaseNode | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _check_parallel(self) -> Node:
        if self.max_parallel_workers is not None:
            if not self.parallel_worker:
                raise WorkflowConfigurationError(
                    "max_parallel_workers can only be set when parallel_worker is True.")
            if self.max_parallel_workers < 1:
                raise WorkflowConfigurationError("max_parallel_workers must be greater than or equal to 1.")
        return self

    async def run_node_impl(self, *, ctx: Any, node_input: Any) -> AsyncGenerator[Any, None]:
        raise NotImplementedError("run_node_impl must be implemented.")
        yield  # pragma: no cover

    async def _run_impl(self, *, ctx: Any, node_input: Any) -> AsyncGenerator[Any, None]:
        if not self.parallel_worker:
            async for item in self.run_node_impl(ctx=ctx, node_input=node_input):
                yield item
            return
        from .parallel_worker import ParallelWorker

        single = self.model_copy(update={"parallel_worker": False, "max_parallel_workers": None})
        async for item in ParallelWorker(node=single, max_parallel_workers=self.max_parallel_workers)._run_impl(
                ctx=ctx, node_input=node_input):
            yield item
