"""FunctionTool: a Python function (sync or async) as a tool."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Any

import pydantic
from google.genai import types

from ..contexts.tool_context import ToolContext
from . import _schema
from ._callable_doc import callable_doc
from ._off_loop import run_off_loop
from .base_tool import BaseTool


class FunctionTool(BaseTool):
    """Wraps ``func``; its name, docstring and signature become the declaration the model sees.

    Arguments the signature does not name are dropped; missing required ones are answered to the model as an
    error; a parameter named ``tool_context`` receives the ToolContext. Sync functions run in a worker thread.

    ``require_confirmation`` (True, or a sync or async callable given the call's arguments that returns True
    when this call needs one) makes a call wait for a person's confirmation before the function runs.
    ``confirmation_payload_schema`` (a pydantic model class, a type or a JSON Schema dict) declares the payload
    an approval carries back (``{"confirmed": true, "payload": ...}``): the server refuses an approval whose
    payload does not match (400 naming the field), and /ui shows it as a form. ``approval``
    (``runtime.tools.approval.Approval``) says who may answer its confirmations (read by the API).
    """

    def __init__(
        self,
        func,
        *,
        require_confirmation: bool | Callable[..., Any] = False,
        idempotent: bool = False,
        is_long_running: bool = False,
        confirmation_payload_schema: Any = None,
        approval: Any = None,
    ):
        target = func.func if hasattr(func, "func") and hasattr(func, "args") else func  # functools.partial
        name = getattr(target, "__name__", None) or type(target).__name__
        super().__init__(
            name=name, description=callable_doc(func), is_long_running=is_long_running, idempotent=idempotent,
        )
        self.func = func
        self.require_confirmation = require_confirmation
        self.approval = approval
        """Who may answer this tool's confirmations (a ``runtime.tools.approval.Approval``; None: the defaults)."""
        from ..events.request_input import json_schema_of

        self.confirmation_payload_schema: dict[str, Any] | None = json_schema_of(confirmation_payload_schema)
        """The JSON Schema of an approval's payload (None: any payload)."""
        self._is_async = inspect.iscoroutinefunction(func) or inspect.iscoroutinefunction(
            getattr(func, "__call__", None)  # noqa: B004 - async callable objects
        )
        params = inspect.signature(func).parameters
        self._accepts = frozenset(p for p, v in params.items() if v.kind not in (v.VAR_POSITIONAL, v.VAR_KEYWORD))
        self._wants_context = "tool_context" in params
        self._mandatory = _schema.mandatory_params(func)
        self._models = _pydantic_params(func)
        self._declaration: types.FunctionDeclaration | None = None

    @property
    def runs_on_a_thread(self) -> bool:
        """A sync function runs on a pool thread, which a cancelled run cannot stop (see flows.functions)."""
        return not self._is_async

    def _get_declaration(self) -> types.FunctionDeclaration:
        if self._declaration is None:
            self._declaration = _schema.build_declaration(self.func, name=self.name)
        return self._declaration

    def missing_args_error(self, missing: list[str]) -> dict[str, str]:
        """The answer to a call that lacks mandatory arguments (the model may retry)."""
        listed = "\n".join(missing)
        return {
            "error": f"Invoking `{self.name}()` failed as the following mandatory input parameters are not present:\n"
            f"{listed}\nYou could retry calling this tool, but it is IMPORTANT for you to provide all the "
            "mandatory parameters."
        }

    async def check_require_confirmation(self, args: dict[str, Any], tool_context: ToolContext) -> bool:
        """``require_confirmation`` for this call: a callable is given the call's arguments (and the
        ToolContext if it asks for ``tool_context``) and must answer True for a confirmation to be asked."""
        decide = self.require_confirmation
        if not callable(decide):
            return bool(decide)
        params = inspect.signature(decide).parameters
        takes_any = any(p.kind == p.VAR_KEYWORD for p in params.values())
        call_args = {k: v for k, v in args.items() if (takes_any or k in params) and k != "tool_context"}
        if "tool_context" in params:
            call_args["tool_context"] = tool_context
        answer = decide(**call_args)
        if inspect.isawaitable(answer):
            answer = await answer
        return answer is True  # only an explicit True holds a call back, as ADK

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        call_args = {key: value for key, value in args.items() if key in self._accepts and key != "tool_context"}
        missing = [name for name in self._mandatory if name not in call_args]
        if missing:
            return self.missing_args_error(missing)
        for name, model in self._models.items():
            if isinstance(call_args.get(name), dict):
                call_args[name] = model.model_validate(call_args[name])
        if self._wants_context:
            call_args["tool_context"] = tool_context
        if self._is_async:
            return await self.func(**call_args)
        result = await run_off_loop(self.func, **call_args)
        if inspect.isawaitable(result):  # a sync wrapper returning a coroutine
            result = await result
        return result


def _pydantic_params(func) -> dict[str, type[pydantic.BaseModel]]:
    """Parameters annotated with a pydantic model: a dict argument is validated into it."""
    try:
        hints = typing.get_type_hints(func)
    except Exception:
        return {}
    return {
        name: hint
        for name, hint in hints.items()
        if isinstance(hint, type) and issubclass(hint, pydantic.BaseModel)
    }
