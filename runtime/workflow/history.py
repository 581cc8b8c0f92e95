"""What an invocation's committed events say about its workflow node runs.

A node run is identified by its path (``wf@1/draft@1``). Its output event names it in ``node_info.output_for``
(an agent node's final message carries ``message_as_output``); an ``adk_request_input`` call it made is an
interrupt, answered by a user event's FunctionResponse with the same id; on agentq's workers a node with a retry
policy or a timeout also commits an attempt marker before each attempt. That is all a resumed run needs: a
finished node is not run again (its recorded output is replayed), a waiting one wakes when answered, and a node
that was in flight runs again, its earlier attempts counted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..events import Event

ATTEMPT_KEY = "agentq:node_attempt"
"""``actions.agent_state`` key of an attempt marker (agentq's worker-only checkpoint, never in ADK's shape)."""


@dataclass
class NodeHistory:
    """The node runs of one invocation, read from its committed events in order."""

    outputs: dict[str, Any] = field(default_factory=dict)
    """Path -> output of every node run that finished (None for one that finished without output)."""
    routes: dict[str, Any] = field(default_factory=dict)
    """Path -> the route(s) the run emitted."""
    interrupts: dict[str, list[str]] = field(default_factory=dict)
    """Path -> ids of the person-facing calls the run made, in order."""
    answers: dict[str, list[Any]] = field(default_factory=dict)
    """Call id -> the person's answers in order (the FunctionResponses' responses). An id may be asked again (a
    review loop reusing its interrupt id): the k-th call with an id pairs with the k-th answer to it."""
    askers: dict[str, list[str]] = field(default_factory=dict)
    """Call id -> the paths of the node runs that asked it, in order."""
    attempts: dict[str, list[float]] = field(default_factory=dict)
    """Path -> start times of the attempts begun (attempt markers)."""
    checkpoints: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Workflow author -> its latest ADK checkpoint (``agent_state``), when the app is resumable."""

    @classmethod
    def read(cls, events: list[Event]) -> NodeHistory:
        history = cls()
        for event in events:
            history._note(event)
        return history

    def _note(self, event: Event) -> None:
        if event.author == "user":
            for response in event.get_function_responses():
                if response.id:
                    self.answers.setdefault(response.id, []).append(response.response)
            return
        state = event.actions.agent_state
        info = event.node_info
        if state is not None and info is not None and ATTEMPT_KEY in state:
            self.attempts.setdefault(info.path, []).append(event.timestamp)
            return
        if state is not None and (info is None or not info.path):
            self.checkpoints[event.author] = state
            return
        if info is None or not info.path:
            return
        if event.actions.route is not None:
            self.routes[info.path] = event.actions.route
        if event.long_running_tool_ids:
            calls = [call.id for call in event.get_function_calls() if call.id in event.long_running_tool_ids]
            self.interrupts.setdefault(info.path, []).extend(calls)
            for call_id in calls:
                self.askers.setdefault(call_id, []).append(info.path)
        if info.output_for:
            output = event.text() if info.message_as_output else event.output
            for path in info.output_for:
                self.outputs[path] = output

    def finished(self, path: str) -> bool:
        return path in self.outputs

    def open_interrupts(self, path: str) -> list[str]:
        """The interrupts this very run made (not its children's)."""
        return self.interrupts.get(path, [])

    def answered(self, path: str, ids: list[str]) -> dict[str, Any]:
        """The answers to the calls run ``path`` made, by call id (only those answered yet)."""
        found = {}
        for call_id in dict.fromkeys(ids):
            turn = self.askers.get(call_id, []).index(path)
            answers = self.answers.get(call_id, [])
            if turn < len(answers):
                found[call_id] = answers[turn]
        return found
