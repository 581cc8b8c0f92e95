"""Where each node run of a workflow invocation stands, read from the invocation's committed events.

The /ui invocation page shows it (``GET /invocations/{id}/nodes``). A node run is a path (``wf@1/draft@1``);
the events say what happened to it (runtime/workflow/history.py and executor.py write them):

- ``done``: its output is committed (``node_info.output_for`` names it, or a replayed ``output``), or every
  person-facing call it made is answered (the answer is its output);
- ``waiting``: it made a long-running call (an ``adk_request_input``, a confirmation) not answered yet;
- ``failed``: its last attempt failed (an event with ``errorCode`` and its path) and no attempt followed;
- ``retrying``: an attempt after a failed or lost one is under way (a second attempt marker, or any event of
  the run after its failure);
- ``running``: it committed something else, or a node inside it is under way;
- ``stopped``: the invocation failed or was cancelled while the run was neither done nor failed.

A workflow run that has no event of its own (the root, a nested workflow between its nodes) stands where its
nodes stand. Once the invocation completed, every run not failed is done.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Literal

from api.views.schemas import InvocationErrorOut, WireModel
from runtime.events import Event
from runtime.events.node_info import split_segment
from runtime.workflow.history import ATTEMPT_KEY

NodeStatus = Literal["done", "running", "waiting", "failed", "retrying", "stopped"]
OUTPUT_PREVIEW_CHARS = 200
_UNDER_WAY = ("running", "retrying")


class NodeRunOut(WireModel):
    """One node run and where it stands."""

    path: str
    name: str
    run: str
    parent: str | None = None
    status: NodeStatus
    attempts: int = 1
    """Attempts begun (attempt markers; without them, failures and the attempt after the last)."""
    error: InvocationErrorOut | None = None
    """The last failed attempt's error (also when a later attempt is under way or finished)."""
    waiting_on: list[str] = []
    """Ids of the person-facing calls it waits on."""
    output: str | None = None
    """Its output as JSON (text for an agent's message), cut to ``OUTPUT_PREVIEW_CHARS``."""


class WorkflowNodesOut(WireModel):
    """GET /invocations/{id}/nodes: the node runs in the order they began (empty for a plain agent)."""

    invocation_id: str
    status: str
    nodes: list[NodeRunOut]


@dataclass
class _Run:
    path: str
    status: str | None = None  # None: nothing of its own yet (a workflow between its nodes)
    markers: int = 0
    failures: int = 0
    error: tuple[str, str] | None = None
    asked: list[str] = field(default_factory=list)
    answers: dict[str, Any] = field(default_factory=dict)
    """Call id -> this run's answer: an interrupt id asked again by a later run is answered there, not here."""
    output: str | None = None


def node_runs(events: list[Event], invocation_status: str) -> list[NodeRunOut]:
    """The node runs of one invocation's ``events`` (in commit order), given where the invocation stands."""
    runs: dict[str, _Run] = {}
    # Call id -> the runs that asked it and wait for their answer, oldest first. A review loop asks with the same
    # interrupt id on every run: the k-th answer to an id belongs to its k-th asker (runtime/workflow/history.py).
    askers: dict[str, deque[_Run]] = {}
    for event in events:
        if event.partial:
            continue
        if event.author == "user":
            for response in event.get_function_responses():
                if response.id and askers.get(response.id):
                    askers[response.id].popleft().answers[response.id] = response.response
            continue
        _note(event, runs, askers)
    children: dict[str | None, list[str]] = {}
    for path in runs:
        children.setdefault(_parent(path), []).append(path)
    statuses: dict[str, str] = {}

    def settle(path: str) -> str:
        run = runs[path]
        below = [settle(child) for child in children.get(path, [])]
        status = run.status
        if status == "waiting" and all(call_id in run.answers for call_id in run.asked):
            status = "done"  # the answer is its output (runtime/workflow/executor.py)
            run.output = _preview(run.answers[run.asked[0]] if len(run.asked) == 1 else
                                  {call_id: run.answers[call_id] for call_id in run.asked})
        if status not in ("done", "failed"):
            if any(s in _UNDER_WAY for s in below):
                status = status if status in _UNDER_WAY else "running"
            elif "waiting" in below:
                status = "waiting"
            elif status is None:  # a failed node fails its workflow only when no retry follows
                status = "failed" if "failed" in below and invocation_status == "failed" else "running"
        if invocation_status == "completed" and status != "failed":
            status = "done"
        elif invocation_status in ("failed", "cancelled") and status in (*_UNDER_WAY, "waiting"):
            status = "stopped"
        statuses[path] = status
        return status

    for root in children.get(None, []):
        settle(root)
    return [_out(run, statuses[path]) for path, run in runs.items()]


def _note(event: Event, runs: dict[str, _Run], askers: dict[str, deque[_Run]]) -> None:
    info = event.node_info
    if info is None:
        return
    if info.path:
        run = _run(runs, info.path)
        state = event.actions.agent_state or {}
        if ATTEMPT_KEY in state:
            run.markers += 1
            run.status = "retrying" if run.markers > 1 else "running"
        elif event.error_code:
            run.failures += 1
            run.error = (event.error_code, event.error_message or "")
            if run.status != "done":
                run.status = "failed"
        elif run.status != "done":
            asked = [c.id for c in event.get_function_calls() if c.id and c.id in (event.long_running_tool_ids or ())]
            if asked:
                run.asked.extend(asked)
                for call_id in asked:
                    askers.setdefault(call_id, deque()).append(run)
                run.status = "waiting"
            elif run.status == "failed":
                run.status = "retrying"
            elif run.status != "retrying":
                run.status = "running"
    if info.output_for or (info.path and event.output is not None):
        output = _preview(event.text() if info.message_as_output else event.output)
        for path in info.output_for or [info.path]:
            done = _run(runs, path)
            done.status, done.output = "done", output


def _run(runs: dict[str, _Run], path: str) -> _Run:
    """The run at ``path``, its enclosing runs noted first (so a parent always comes before its nodes)."""
    if path not in runs:
        parent = _parent(path)
        if parent is not None:
            _run(runs, parent)
        runs[path] = _Run(path)
    return runs[path]


def _parent(path: str) -> str | None:
    return path.rsplit("/", 1)[0] if "/" in path else None


def _preview(value: Any) -> str | None:
    if value is None:
        return None
    text = value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
    return text if len(text) <= OUTPUT_PREVIEW_CHARS else text[: OUTPUT_PREVIEW_CHARS - 1] + "…"


def _out(run: _Run, status: str) -> NodeRunOut:
    name, run_id = split_segment(run.path.rsplit("/", 1)[-1])
    if run.markers:
        attempts = run.markers
    else:
        attempts = run.failures + (0 if status == "failed" else 1) if run.failures else 1
    return NodeRunOut(
        path=run.path, name=name, run=run_id, parent=_parent(run.path), status=status, attempts=max(attempts, 1),
        error=InvocationErrorOut(type=run.error[0], message=run.error[1]) if run.error else None,
        waiting_on=[call_id for call_id in run.asked if call_id not in run.answers] if status == "waiting" else [],
        output=run.output,
    )
