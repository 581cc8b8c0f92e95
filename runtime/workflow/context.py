"""Context: what a node's function sees as ``ctx`` (ADK 2's ``google.adk.agents.context.Context`` for nodes)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..contexts.callback_context import CallbackContext

if TYPE_CHECKING:
    from ..contexts.invocation_context import InvocationContext
    from .executor import NodeExecutor


class Context(CallbackContext):
    """State, artifacts and actions as for callbacks, plus the node's place in the run.

    ``node_path``: this run's path (``wf@1/node@1``); ``resume_inputs``: the person's answers by interrupt id when
    the node runs again after a RequestInput; ``run_node`` runs another node from inside this one (a dynamic
    node), durably: on a resumed invocation a child that finished before is not run again, its output is reused.
    State written here is committed with the node's next event.
    """

    def __init__(self, invocation_context: InvocationContext, *, node_path: str, resume_inputs: dict[str, Any],
                 executor: NodeExecutor, branch: str | None, author: str):
        super().__init__(invocation_context)
        self.node_path = node_path
        self.resume_inputs = resume_inputs
        self.branch = branch
        self.event_author = author
        self._executor = executor
        self._children: dict[str, int] = {}

    @property
    def invocation_context(self) -> InvocationContext:
        """The invocation this node runs in (on this node's branch)."""
        return self._invocation_context

    async def run_node(self, node: Any, node_input: Any = None, *, name: str | None = None,
                       use_sub_branch: bool = False) -> Any:
        """Run ``node`` (a node, function, agent or tool) as a child of this node and return its output.

        Children are numbered per name in call order (``parent@1/child@2``), which is how a resumed run finds
        the ones that already finished. A child waiting for a person makes this node wait as well."""
        return await self._executor.run_child(self, node, node_input, name=name, use_sub_branch=use_sub_branch)

    def next_child_path(self, name: str) -> tuple[str, str]:
        """The path and run id of this node's next child called ``name``."""
        self._children[name] = self._children.get(name, 0) + 1
        run_id = str(self._children[name])
        return f"{self.node_path}/{name}@{run_id}", run_id

    def take_actions(self):
        """The state and artifact changes made since the last event, for the next event to carry."""
        from ..events import EventActions

        taken = EventActions(state_delta=dict(self._event_actions.state_delta),
                             artifact_delta=dict(self._event_actions.artifact_delta))
        self._event_actions.state_delta.clear()
        self._event_actions.artifact_delta.clear()
        return taken
