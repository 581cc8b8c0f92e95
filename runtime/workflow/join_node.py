"""JoinNode: waits for every predecessor, then outputs their outputs as one dict keyed by their names."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from ..events import Event
from .base_node import BaseNode


class JoinNode(BaseNode):
    """Fan-in: runs once all its predecessors have delivered; its output is ``{predecessor: output}``."""

    @property
    def waits_for_all_predecessors(self) -> bool:
        return True

    async def _run_impl(self, *, ctx: Any, node_input: Any) -> AsyncGenerator[Any, None]:
        yield Event(output=node_input)
