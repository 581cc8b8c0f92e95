"""The workflow engine's errors, split by who must act (as ``google.adk.workflow``'s)."""

from __future__ import annotations

from ..errors import UsageError


class WorkflowConfigurationError(UsageError, ValueError):
    """A workflow, node or edge declared in a way that cannot run: fails the same way every time, before running."""


class GraphValidationError(WorkflowConfigurationError):
    """The graph is not well formed (no path from START, a node name used twice, a route nobody emits...)."""


class WorkflowDataError(ValueError):
    """Data arriving during a run does not fit what takes it (a node's parameter missing from state, an input
    of the wrong type): the wiring is fine, this run's data is not."""


class NodeTimeoutError(Exception):
    """A node ran past its ``timeout``. An ordinary Exception, so ``retry_config`` can retry it."""

    def __init__(self, *, node_name: str, timeout: float) -> None:
        self.node_name = node_name
        self.timeout = timeout
        super().__init__(f"Node '{node_name}' timed out after {timeout} seconds.")


class NodeInterrupted(BaseException):  # noqa: N818 - a control-flow signal, not an error
    """Raised by ``ctx.run_node`` when the child node waits for a person: the calling node waits too.

    A BaseException, so user code's ``except Exception`` does not swallow it."""

    def __init__(self, interrupt_ids: list[str]) -> None:
        self.interrupt_ids = interrupt_ids
        super().__init__(f"waiting for input {interrupt_ids!r}")
