"""Calling user callbacks: one callable or a list, sync or async; the first non-None answer wins."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

Callbacks = Callable[..., Any] | list[Callable[..., Any]] | None


def as_list(callbacks: Callbacks) -> list[Callable[..., Any]]:
    """Normalise a callback field to a list."""
    if callbacks is None:
        return []
    return list(callbacks) if isinstance(callbacks, list | tuple) else [callbacks]


async def first_answer(callbacks: Callbacks, **kwargs: Any) -> Any:
    """Call each callback with ``kwargs`` in order; return the first non-None result (awaited if needed)."""
    for callback in as_list(callbacks):
        result = callback(**kwargs)
        if inspect.isawaitable(result):
            result = await result
        if result is not None:
            return result
    return None
