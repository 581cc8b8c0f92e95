"""FunctionNode: a plain function, coroutine function or (async) generator function as a node.

Parameters are bound by name: ``ctx`` gets the node's Context, ``node_input`` the input (coerced to its type
hint when that is a pydantic model), and every other parameter the session state value of the same name (its
default when state lacks it; WorkflowDataError when there is neither).
"""

from __future__ import annotations

import asyncio
import inspect
import typing
from collections.abc import AsyncGenerator, Callable
from typing import Any

from pydantic import BaseModel, PrivateAttr

from .base_node import BaseNode
from .errors import WorkflowConfigurationError, WorkflowDataError

_CONTEXT_NAMES = ("ctx",)


class FunctionNode(BaseNode):
    """Wraps ``func``; its name (default: the function's name) must be a Python identifier."""

    _func: Callable[..., Any] = PrivateAttr()
    _signature: inspect.Signature = PrivateAttr()
    _hints: dict[str, Any] = PrivateAttr(default_factory=dict)

    def __init__(self, func: Callable[..., Any], name: str | None = None, **data: Any):
        unsupported = sorted(data.keys() & {"auth_config", "require_confirmation", "parameter_binding"})
        if unsupported:
            raise WorkflowConfigurationError(f"FunctionNode argument(s) {unsupported} are not supported by agentq "
                                             "yet")
        if not callable(func):
            raise WorkflowConfigurationError("Function must be callable.")
        target = _callable_target(func)
        node_name = name or getattr(func, "__name__", None) or type(func).__name__
        super().__init__(name=node_name, description=data.pop("description", None) or inspect.getdoc(func) or "",
                         **data)
        self._func = func
        self._signature = inspect.signature(target)
        try:
            self._hints = typing.get_type_hints(target)
        except Exception:  # noqa: BLE001 - unresolvable hints only cost the coercion
            self._hints = {}

    def model_copy(self, *, update: dict[str, Any] | None = None, deep: bool = False) -> FunctionNode:
        copied = super().model_copy(update=update, deep=deep)
        copied._func, copied._signature, copied._hints = self._func, self._signature, self._hints
        return copied

    def _arguments(self, ctx: Any, node_input: Any) -> dict[str, Any]:
        arguments: dict[str, Any] = {}
        for name, parameter in self._signature.parameters.items():
            if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
                continue
            if name in _CONTEXT_NAMES:
                arguments[name] = ctx
            elif name == "node_input":
                arguments[name] = _coerce(node_input, self._hints.get(name))
            elif name in ctx.state:
                arguments[name] = _coerce(ctx.state[name], self._hints.get(name))
            elif parameter.default is not parameter.empty:
                arguments[name] = parameter.default
            else:
                raise WorkflowDataError(
                    f'Missing value for parameter "{name}" of function "{self.name}". It was not found in state '
                    "and has no default value.")
        return arguments

    async def _run_impl(self, *, ctx: Any, node_input: Any) -> AsyncGenerator[Any, None]:
        arguments = self._arguments(ctx, node_input)
        function = self._func
        call = _callable_target(function)
        if inspect.isasyncgenfunction(call):
            async for item in function(**arguments):
                yield item
        elif inspect.isgeneratorfunction(call):
            for item in function(**arguments):
                yield item
        elif inspect.iscoroutinefunction(call):
            yield await function(**arguments)
        else:
            # A blocking function must not stall the worker's event loop, which runs other invocations too.
            yield await asyncio.to_thread(function, **arguments)


def _callable_target(function: Any) -> Any:
    """The function to inspect: the function itself, or a callable object's ``__call__`` method."""
    if inspect.isroutine(function):
        return function
    return type(function).__call__.__get__(function)


def _coerce(value: Any, hint: Any) -> Any:
    """A dict becomes the pydantic model its parameter is typed as; anything else is passed as it is."""
    if isinstance(hint, type) and issubclass(hint, BaseModel) and isinstance(value, dict):
        try:
            return hint.model_validate(value)
        except Exception as exc:
            raise WorkflowDataError(f"input does not fit {hint.__name__}: {exc}") from exc
    return value
