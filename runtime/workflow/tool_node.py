"""ToolNode: a tool (a BaseTool, e.g. a FunctionTool) as a workflow node; its input is the call's arguments.

On a durable runner the call goes through the tool journal under an id derived from the node path, so a tool
node that finished is never run again, even when its worker died before the output was committed; one that
started and never finished is in doubt: re-run only if the tool is declared idempotent.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from typing import Any

from google.genai import types
from pydantic import BaseModel, ConfigDict, Field

from ..contexts.tool_context import ToolContext
from ..events import Event
from ..tools.base_tool import BaseTool
from ..tools.tool_journal import in_doubt_error
from .base_node import BaseNode

TOOL_CALL_ID_PREFIX = "wf_tool:"


class ToolNode(BaseNode):
    """Runs ``tool`` with ``node_input`` as its arguments (a dict; a lone value fills the tool's only or only
    required parameter; required parameters missing from the input come from state)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    tool: BaseTool = Field(...)

    def __init__(self, *, tool: BaseTool, name: str | None = None, **data: Any):
        data.setdefault("rerun_on_resume", True)
        super().__init__(tool=tool, name=name or tool.name, **data)

    async def _run_impl(self, *, ctx: Any, node_input: Any) -> AsyncGenerator[Any, None]:
        args = self._arguments(ctx, node_input)
        invocation = ctx.invocation_context
        call_id = TOOL_CALL_ID_PREFIX + ctx.node_path
        tool_context = ToolContext(invocation, function_call_id=call_id, event_actions=ctx.actions)
        journal = invocation.tool_journal
        if journal is None:
            response = await self.tool.run_async(args=args, tool_context=tool_context)
        else:
            previous = await journal.begin(invocation.invocation_id, call_id, self.tool.name)
            if previous is not None and previous.status == "completed":
                response = previous.response.get("result", previous.response)
            elif previous is not None and not self.tool.idempotent:
                response = in_doubt_error(self.tool.name)
            else:
                response = await self.tool.run_async(args=args, tool_context=tool_context)
                await journal.complete(invocation.invocation_id, call_id, {"result": response})
        yield Event(output=response) if response is not None else Event()

    def _arguments(self, ctx: Any, node_input: Any) -> dict[str, Any]:
        args = node_input
        if isinstance(args, types.Content):
            args = "".join(part.text or "" for part in args.parts or [])
        if isinstance(args, BaseModel):
            args = args.model_dump()
        elif isinstance(args, str):
            args = args.strip() or None
            if args is not None:
                try:
                    parsed = json.loads(args)
                except json.JSONDecodeError:
                    parsed = None
                if isinstance(parsed, dict):
                    args = parsed
        declaration = self.tool._get_declaration()
        schema = declaration.parameters if declaration is not None else None
        names = list((schema.properties or {}) if schema is not None else ())
        required = list((schema.required or []) if schema is not None else ())
        if args is None:
            args = {}
        elif isinstance(args, dict):
            args = dict(args)
        elif len(names) == 1:
            args = {names[0]: args}
        elif len(required) == 1:
            args = {required[0]: args}
        else:
            raise TypeError(f"The input to ToolNode must be a dictionary of tool arguments or None, but got "
                            f"{type(args)}.")
        for name in required:
            if name not in args and name in ctx.state:
                args[name] = ctx.state[name]
        return args
