"""Workflow: a graph of nodes run as an agent (ADK 2's ``google.adk.workflow.Workflow``).

As the root of an App it is an agent the Runner drives; inside another workflow it is a node. Nodes run as
soon as they are triggered (fan-out runs concurrently, bounded by ``max_concurrency``); a join waits for all its
predecessors; routes pick edges. Every event is committed before the node that wrote it goes on, and the
committed events are the checkpoint a resumed invocation continues from (``history``, ``executor``).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncGenerator
from typing import Any

from google.genai import types
from pydantic import Field, model_validator

from ..agents.base_agent import BaseAgent
from ..contexts.invocation_context import InvocationContext
from ..events import Event, EventActions, NodeInfo
from .base_node import START, BaseNode
from .emitter import Emitter, stop_tasks
from .errors import WorkflowConfigurationError
from .executor import NodeExecutor, Outcome, SharedRun
from .graph import Graph
from .history import NodeHistory

_RUNNING, _COMPLETED, _WAITING = 2, 3, 4  # ADK's persisted NodeStatus numbers


class Workflow(BaseAgent, BaseNode):
    """``Workflow(name=..., edges=[(START, fetch, draft, publish), ...])``: see ``graph`` for the edge forms.

    ``max_concurrency`` bounds the graph nodes running at once (None: unbounded; dynamic children are not
    counted, their parent awaits them)."""

    rerun_on_resume: bool = True
    edges: list[Any] = Field(default_factory=list)
    graph: Graph | None = None
    max_concurrency: int | None = None

    @model_validator(mode="after")
    def _compile(self) -> Workflow:
        if self.edges and self.graph is None:
            self.graph = Graph.from_edge_items(self.edges)
        if self.graph is not None:
            self.graph.validate_graph()
        if self.sub_agents:
            raise WorkflowConfigurationError("Workflow takes its nodes from edges=, not sub_agents=")
        return self

    # --- as an agent: the root of an App ---

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        if self.graph is None:
            return
        shared = SharedRun(invocation=ctx, emitter=Emitter(), history=NodeHistory.read(ctx.run.events))

        async def run() -> None:
            try:
                await self.run_graph(shared, path=f"{self.name}@1", node_input=_input_of(ctx.user_content),
                                     branch=ctx.branch, output_for=[])
            except Exception:
                ctx.run.failed = True  # the failing node's error event is committed already
                raise

        async for event in shared.emitter.drain(run()):
            yield event

    # --- as a node of another workflow, and the graph loop both share ---

    async def run_graph(self, shared: SharedRun, *, path: str, node_input: Any, branch: str | None,
                        output_for: list[str]) -> Outcome:
        """Run this workflow's graph as run ``path``; its terminal nodes' outputs are also for ``output_for``."""
        if self.graph is None:
            return Outcome(finished=True)
        return await _GraphRun(self, shared, path=path, branch=branch, output_for=output_for).run(node_input)


class _GraphRun:
    """One run of a workflow's graph: triggers, running nodes, joins, and ADK's checkpoint bookkeeping."""

    def __init__(self, workflow: Workflow, shared: SharedRun, *, path: str, branch: str | None,
                 output_for: list[str]):
        self.workflow = workflow
        self.graph: Graph = workflow.graph  # type: ignore[assignment]
        self.shared = shared
        self.path = path
        self.branch = branch
        self.output_for = output_for
        self.executor = NodeExecutor(shared, workflow.name)
        self.runs: dict[str, int] = {}
        self.triggers: deque[tuple[str, Any, str | None, bool]] = deque()
        self.arrivals: dict[str, dict[str, tuple[Any, str | None]]] = {}
        restored = shared.history.checkpoints.get(workflow.name) if shared.adk_checkpoints else None
        self.states: dict[str, dict[str, Any]] = {
            name: dict(state) for name, state in ((restored or {}).get("nodes") or {}).items()}

    async def run(self, node_input: Any) -> Outcome:
        first = self.graph.successors(START.name, None)
        for name in first:
            self.triggers.append((name, node_input, self.branch, len(first) > 1))
        running: dict[asyncio.Task, tuple[str, str | None]] = {}
        interrupts: list[str] = []
        outputs: list[Any] = []
        limit = self.workflow.max_concurrency
        try:
            while self.triggers or running:
                while self.triggers and (not limit or limit <= 0 or len(running) < limit):
                    name, given, branch, fan_out = self.triggers.popleft()
                    task, branch = self._start(name, given, branch, fan_out)
                    running[task] = (name, branch)
                done, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                for task in [task for task in running if task in done]:  # in the order they started
                    name, branch = running.pop(task)
                    outcome = task.result()
                    if outcome.interrupts:
                        interrupts.extend(outcome.interrupts)
                        continue
                    if self.graph.node(name).wait_for_output and not outcome.produced:
                        continue  # it waits for another trigger before it lets anything follow
                    if self.graph.is_terminal(name) and outcome.output is not None:
                        outputs.append(outcome.output)
                    self._trigger_successors(name, outcome, branch)
        finally:
            await stop_tasks(running)
        if interrupts:
            return Outcome(interrupts=interrupts)
        if len(outputs) > 1:
            error = WorkflowConfigurationError(
                f"Workflow {self.workflow.name}: multiple terminal nodes produced output ({len(outputs)}). A "
                "workflow must have at most one terminal output.")
            await self.shared.emit(Event(author=self.workflow.name, branch=self.branch,
                                         node_info=NodeInfo(path=self.path), error_code=type(error).__name__,
                                         error_message=str(error)))
            raise error
        if self.shared.adk_checkpoints:
            await self.shared.emit(Event(author=self.workflow.name, node_info=NodeInfo(path=""),
                                         actions=EventActions(end_of_agent=True)))
        return Outcome(finished=True, output=outputs[0] if outputs else None)

    def _start(self, name: str, node_input: Any, branch: str | None, fan_out: bool) -> tuple[asyncio.Task, str | None]:
        self.runs[name] = self.runs.get(name, 0) + 1
        run_id = self.runs[name]
        if fan_out:
            branch = f"{branch}.{name}@{run_id}" if branch else f"{name}@{run_id}"
        node = self.graph.node(name)
        extra = [self.path, *self.output_for] if self.graph.is_terminal(name) else []
        return asyncio.create_task(self._run_node(node, f"{self.path}/{name}@{run_id}", node_input, branch,
                                                  extra)), branch

    async def _run_node(self, node: BaseNode, path: str, node_input: Any, branch: str | None,
                        output_for: list[str]) -> Outcome:
        checkpoints = self.shared.adk_checkpoints

        async def started() -> None:
            if checkpoints:
                await self._checkpoint(node.name, _RUNNING)

        outcome = await self.executor.execute(node, path=path, node_input=node_input, branch=branch,
                                              output_for=output_for, on_start=started)
        if checkpoints:
            if outcome.interrupts:
                await self._checkpoint(node.name, _WAITING, outcome.interrupts)
            elif node.wait_for_output and not outcome.produced:
                await self._checkpoint(node.name, _WAITING)
            elif self.states.get(node.name, {}).get("status") == _RUNNING:
                await self._checkpoint(node.name, _COMPLETED)
            else:  # replayed from history: ADK notes it without a checkpoint of its own
                self.states[node.name] = {"status": _COMPLETED, "interrupts": []}
        return outcome

    async def _checkpoint(self, name: str, status: int, interrupts: list[str] | None = None) -> None:
        self.states[name] = {"status": status, "interrupts": list(interrupts or [])}
        snapshot = {node: dict(state) for node, state in self.states.items()}
        await self.shared.emit(Event(author=self.workflow.name, node_info=NodeInfo(path=""),
                                     actions=EventActions(agent_state={"nodes": snapshot})))

    def _trigger_successors(self, name: str, outcome: Outcome, branch: str | None) -> None:
        successors = self.graph.successors(name, outcome.route)
        fan_out = len(successors) > 1
        for successor in successors:
            if not self.graph.node(successor).waits_for_all_predecessors:
                self.triggers.append((successor, outcome.output, branch, fan_out))
                continue
            arrived = self.arrivals.setdefault(successor, {})
            arrived[name] = (outcome.output, branch)
            predecessors = self.graph.predecessors(successor)
            if all(predecessor in arrived for predecessor in predecessors):
                del self.arrivals[successor]
                joined = {predecessor: arrived[predecessor][0] for predecessor in predecessors}
                self.triggers.append((successor, joined, _common_branch([b for _, b in arrived.values()]), False))


def _common_branch(branches: list[str | None]) -> str | None:
    """The longest dot-separated prefix the branches share (None when they share nothing)."""
    split = [branch.split(".") if branch else [] for branch in branches]
    common: list[str] = []
    for segments in zip(*split, strict=False):
        if len(set(segments)) != 1:
            break
        common.append(segments[0])
    return ".".join(common) or None


def _input_of(content: types.Content | None) -> Any:
    """The workflow's input from the user's message: its text when it is all text, else the Content."""
    if content is None or not content.parts:
        return None
    if all(part.text is not None for part in content.parts):
        return "".join(part.text for part in content.parts)
    return content
