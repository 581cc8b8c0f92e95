"""NodeInfo: which workflow node run wrote an event (ADK 2's ``Event.node_info``).

A node path names a run of a node inside its workflow's run: ``pipeline@1/draft@1`` is the first run of node
``draft`` in the first run of workflow ``pipeline``. Checkpoint events of a workflow carry the empty path. Outside
a workflow graph an agent's events carry the path google-adk 2.13 gives them (``runtime.agents.paths``).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class NodeInfo(BaseModel):
    """The node run an event belongs to, and the node runs whose output it is."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    path: str = ""
    """``workflow@run/node@run[/child@run...]``; '' on a workflow's checkpoint events."""

    output_for: list[str] | None = None
    """The node paths whose output this event carries: the node itself, and each enclosing workflow whose
    terminal node it is."""

    message_as_output: bool | None = None
    """The event's content (an agent node's final text) is the node's output; ``Event.output`` stays empty."""

    @property
    def name(self) -> str:
        """The node's name, without its run id (last path segment)."""
        return split_segment(self.path.rsplit("/", 1)[-1])[0] if self.path else ""

    @property
    def run_id(self) -> str:
        """The run id of the node's run ('' for a checkpoint event)."""
        return split_segment(self.path.rsplit("/", 1)[-1])[1] if self.path else ""


def split_segment(segment: str) -> tuple[str, str]:
    """``name@run`` -> (name, run)."""
    name, _, run = segment.partition("@")
    return name, run
