"""Running one node run: replay from history, waiting on a person, retries, timeouts, and stamping its events.

``NodeExecutor.execute`` is the single place a node run happens, whether the graph scheduled it, a node called
``ctx.run_node``, or a parallel worker fanned out over items. Three event shapes, by how the app runs:

- plain (no resumability): only the nodes' own events, as ADK writes them;
- ADK resumable (``App(resumability_config=ResumabilityConfig(is_resumable=True))``): plus ADK's checkpoint
  events (``agent_state`` with every node's status, ``end_of_agent``) and, on a resumed run, a replay event for
  each node that had finished, as ADK 2.13 yields them;
- durable (agentq's workers): one commit per node boundary. A node's output event is its checkpoint; a node that
  finished without output commits a bare completion event; a node with a retry policy or a timeout commits an
  attempt marker before each attempt, so the attempt count and the deadline survive a killed worker. Nothing is
  replayed: history is the checkpoint.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..events import Event, EventActions, NodeInfo
from .context import Context
from .emitter import Emitter
from .errors import NodeInterrupted, NodeTimeoutError
from .history import ATTEMPT_KEY, NodeHistory

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from ..contexts.invocation_context import InvocationContext
    from .base_node import BaseNode


@dataclass
class Outcome:
    """How a node run ended: finished (with its output and route) or waiting on the listed interrupts."""

    finished: bool = False
    output: Any = None
    route: Any = None
    interrupts: list[str] = field(default_factory=list)
    produced: bool = True
    """False for a run that finished without yielding an output (a ``wait_for_output`` node then triggers
    nothing and waits to be triggered again)."""


@dataclass
class SharedRun:
    """What every node run of one workflow invocation shares."""

    invocation: InvocationContext
    emitter: Emitter
    history: NodeHistory

    @property
    def adk_checkpoints(self) -> bool:
        """ADK's resumable event shape (checkpoints, end_of_agent, replays)."""
        return self.invocation.run.llm_end_events

    @property
    def durable(self) -> bool:
        """agentq's durable shape: one commit per node boundary, attempt markers."""
        return self.invocation.run.resumable and not self.invocation.run.llm_end_events

    async def emit(self, event: Event) -> None:
        event.invocation_id = self.invocation.invocation_id
        await self.emitter.emit(event)


@runtime_checkable
class GraphNode(Protocol):
    """A node that is itself a graph (a Workflow): it runs its own nodes through the same executor machinery."""

    async def run_graph(self, shared: SharedRun, *, path: str, node_input: Any, branch: str | None,
                        output_for: list[str]) -> Outcome: ...


class NodeExecutor:
    """Runs node runs of one workflow (``author`` is the workflow's name, the author of its nodes' events)."""

    def __init__(self, shared: SharedRun, author: str):
        self.shared = shared
        self.author = author
        self._built: dict[int, BaseNode] = {}

    # --- the one entry point ---

    async def execute(self, node: BaseNode, *, path: str, node_input: Any, branch: str | None,
                      output_for: list[str], static: bool = True,
                      on_start: Callable[[], Awaitable[None]] | None = None) -> Outcome:
        """Run ``node`` as run ``path`` unless history says it finished or still waits; raise what it raised
        once its retries are spent (its error event already committed)."""
        history = self.shared.history
        if history.finished(path):
            outcome = Outcome(finished=True, output=history.outputs[path], route=history.routes.get(path))
            if static and self.shared.adk_checkpoints:
                await self._replay(path, outcome.output, branch)
            return outcome
        resume_inputs: dict[str, Any] = {}
        asked = history.open_interrupts(path)
        if asked:
            answers = history.answered(path, asked)
            if not node.rerun_on_resume:
                unanswered = [call_id for call_id in dict.fromkeys(asked) if call_id not in answers]
                if unanswered:
                    return Outcome(interrupts=unanswered)
                output = answers[asked[0]] if len(answers) == 1 else answers
                if static and self.shared.adk_checkpoints:
                    await self._replay(path, output, branch)
                return Outcome(finished=True, output=output)
            if not answers:
                return Outcome(interrupts=list(dict.fromkeys(asked)))
            resume_inputs = answers
        if on_start is not None:
            await on_start()
        return await self._attempts(node, path=path, node_input=node_input, branch=branch,
                                    output_for=output_for, resume_inputs=resume_inputs)

    async def run_child(self, parent: Context, node_like: Any, node_input: Any, *, name: str | None,
                        use_sub_branch: bool) -> Any:
        """``ctx.run_node``: run a dynamic child of ``parent`` and return its output."""
        node = self._node_for(node_like, name)
        path, run_id = parent.next_child_path(node.name)
        branch = parent.branch
        if use_sub_branch:
            branch = f"{branch}.{node.name}@{run_id}" if branch else f"{node.name}@{run_id}"
        outcome = await self.execute(node, path=path, node_input=node_input, branch=branch, output_for=[],
                                     static=False)
        if outcome.interrupts:
            raise NodeInterrupted(outcome.interrupts)
        return outcome.output

    # --- attempts ---

    async def _attempts(self, node: BaseNode, *, path: str, node_input: Any, branch: str | None,
                        output_for: list[str], resume_inputs: dict[str, Any]) -> Outcome:
        """Attempt the node until it finishes, waits, or its retries are spent.

        On a durable runner a node with a retry policy or a timeout commits an attempt marker first, so the
        rules hold across workers: with a retry policy, an attempt lost with its worker counts as a failed one;
        with only a timeout, the lost attempt goes on here with the time it had left."""
        retry = node.retry_config
        markers = self.shared.history.attempts.get(path, []) if self.shared.durable else []
        attempt = len(markers) + 1
        budget = node.timeout
        carried = bool(markers) and retry is None and node.timeout is not None
        if carried:
            attempt -= 1
            budget = max(node.timeout - (time.time() - markers[-1]), 0.0)
        while True:
            if retry is not None and attempt > retry.attempts:
                exc = RuntimeError(f"Node '{node.name}' used all {retry.attempts} attempts (the last was lost "
                                   "with the worker running it)")
                await self._report(exc, path, branch)
                raise exc
            if self.shared.durable and (retry is not None or node.timeout is not None) and not carried:
                await self.shared.emit(Event(author=self.author, branch=branch, node_info=NodeInfo(path=path),
                                             actions=EventActions(agent_state={ATTEMPT_KEY: attempt})))
            carried = False
            try:
                run = self._attempt(node, path=path, node_input=node_input, branch=branch, output_for=output_for,
                                    resume_inputs=resume_inputs)
                if budget is None:
                    return await run
                try:
                    async with asyncio.timeout(budget):
                        return await run
                except TimeoutError:
                    raise NodeTimeoutError(node_name=node.name, timeout=node.timeout) from None
            except Exception as exc:
                await self._report(exc, path, branch)
                if retry is None or not retry.retries(exc) or attempt >= retry.attempts:
                    raise
                await asyncio.sleep(retry.delay(attempt))
                attempt += 1
                budget = node.timeout

    async def _attempt(self, node: BaseNode, *, path: str, node_input: Any, branch: str | None,
                       output_for: list[str], resume_inputs: dict[str, Any]) -> Outcome:
        if isinstance(node, GraphNode):  # a nested workflow: its nodes' events are its output
            return await node.run_graph(self.shared, path=path, node_input=node_input, branch=branch,
                                        output_for=output_for)
        ctx = Context(self.shared.invocation.model_copy(update={"branch": branch}), node_path=path,
                      resume_inputs=resume_inputs, executor=self, branch=branch, author=self.author)
        outcome, produced = Outcome(), False
        try:
            async for event in node.run(ctx=ctx, node_input=node_input):
                self._stamp(event, ctx, path, branch)
                info = event.node_info
                if not event.partial and (event.output is not None or info.message_as_output):
                    outcome.output = event.text() if info.message_as_output else event.output
                    # a copy: an agent's events share one NodeInfo per path (runtime.flows._fast.node_info)
                    event.node_info = info = info.model_copy(update={"output_for": [path, *output_for]})
                    produced = True
                if event.actions.route is not None:
                    outcome.route = event.actions.route
                if event.long_running_tool_ids and not event.partial:
                    outcome.interrupts.extend(c.id for c in event.get_function_calls()
                                              if c.id in event.long_running_tool_ids)
                await self.shared.emit(event)
        except NodeInterrupted as waiting:
            outcome.interrupts.extend(waiting.interrupt_ids)
        leftover = ctx.take_actions()
        if leftover.state_delta or leftover.artifact_delta:
            await self.shared.emit(Event(author=self.author, branch=branch, node_info=NodeInfo(path=path),
                                         actions=leftover))
        if outcome.interrupts:
            return outcome
        outcome.produced = produced
        if not produced and self.shared.durable:
            # the only trace of a run that finished without output: without it a resumed run would repeat it
            await self.shared.emit(Event(author=self.author, branch=branch,
                                         node_info=NodeInfo(path=path, output_for=[path, *output_for])))
        outcome.finished = True
        return outcome

    def _stamp(self, event: Event, ctx: Context, path: str, branch: str | None) -> None:
        """Give a node's event its author, branch, node path and the state changes made through ``ctx``."""
        if not event.author:
            event.author = self.author
        if event.branch is None and branch:
            event.branch = branch
        if event.node_info is None:
            event.node_info = NodeInfo(path=path)
        elif not event.node_info.path:
            event.node_info = event.node_info.model_copy(update={"path": path})  # shared ones stay as they are
        taken = ctx.take_actions()
        if taken.state_delta:
            event.actions.state_delta = {**event.actions.state_delta, **taken.state_delta}
        if taken.artifact_delta:
            event.actions.artifact_delta = {**event.actions.artifact_delta, **taken.artifact_delta}

    async def _report(self, exc: BaseException, path: str, branch: str | None) -> None:
        await self.shared.emit(Event(author=self.author, branch=branch, node_info=NodeInfo(path=path),
                                     error_code=type(exc).__name__, error_message=str(exc)))

    async def _replay(self, path: str, output: Any, branch: str | None) -> None:
        await self.shared.emit(Event(author=self.author, branch=branch, node_info=NodeInfo(path=path),
                                     output=output))

    def _node_for(self, node_like: Any, name: str | None) -> BaseNode:
        from .base_node import BaseNode
        from .build import build_node

        if isinstance(node_like, BaseNode) and name is None:
            return node_like
        key = id(node_like)
        if key not in self._built or name is not None:
            self._built[key] = build_node(node_like, name=name)
        return self._built[key]
