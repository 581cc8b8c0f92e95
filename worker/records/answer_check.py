"""The server checks what it is sent (issue 18 items 6 and 10): each answer against the shape its pending call
declared, in ``InvocationStore.respond`` before anything is stored, so every answer channel (HTTP
function-responses, /run_sse answers, the Python client, the CLI) is refused the same way: a 400 naming the
field, nothing changed. The checker itself is ``runtime.tools.answer_check``.

Also where a plain long-running call's declared shape comes from: ``answer_shapes`` finds each
``LongRunningFunctionTool``'s ``answer_shape`` (and each tool's ``confirmation_payload_schema``) in an agent tree,
and the executor stores what applies to each pending call on it (``shape_for``).
"""

from __future__ import annotations

import json
import weakref
from typing import Any

from runtime.auth.requests import REQUEST_CREDENTIAL_FUNCTION_CALL_NAME, refuse_credentials_in_answer
from runtime.events.tool_confirmation import REQUEST_CONFIRMATION_FUNCTION_CALL_NAME
from runtime.tools.answer_check import (
    AnswerSchemaError,
    answer_schema,
    check_answer,
    check_confirmation_payload,
)

__all__ = ["AnswerSchemaError", "answer_shapes", "check_against_pending", "shape_for"]

_SHAPES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


async def check_against_pending(store: Any, record_key: str, responses: list[Any],
                                 pending: list[Any] | None = None) -> None:
    """Check each final answer (not a ``will_continue`` update) against its pending call: from ``pending`` when
    the caller holds the record already (the API read it to apply the approval rules), else from the record as
    stored (one HMGET). A call that is not pending is left to the respond script, which refuses it (409); a
    call's declared shape never changes, so a record read a moment earlier gives the same answer."""
    final = [response for response in responses if not response.will_continue]
    if not final:
        return
    if pending is not None:
        held = {call.id: {"name": call.name, "args": call.args, "answer": call.answer} for call in pending}
        calls = [held.get(response.id) for response in final]
    else:
        stored = await store.mux.execute_command("HMGET", record_key, *(f"p:{response.id}" for response in final))
        calls = [None if raw is None else json.loads(raw) for raw in stored]
    for response, call in zip(final, calls, strict=True):
        if call is None:
            continue
        name = call.get("name") or ""
        if name == REQUEST_CREDENTIAL_FUNCTION_CALL_NAME:  # tokens stay out of the record and the history
            refuse_credentials_in_answer(response.id, response.response)
            continue
        if name == REQUEST_CONFIRMATION_FUNCTION_CALL_NAME:
            check_confirmation_payload(response.id, (call.get("answer") or {}).get("payloadSchema"),
                                       response.response)
            continue
        check_answer(response.id, name, answer_schema(name, call.get("args") or {}, call.get("answer")),
                     response.response)


def shape_for(shapes: dict[str, dict[str, Any]], call: Any) -> dict[str, Any] | None:
    """What a pending call carries as ``answer``: a long-running tool's ``schema``/``quickAnswers``, or for a
    confirmation the held tool's ``payloadSchema``; None when nothing was declared."""
    if call.name == REQUEST_CONFIRMATION_FUNCTION_CALL_NAME:
        original = (call.args or {}).get("originalFunctionCall") or {}
        schema = (shapes.get(original.get("name") or "") or {}).get("payloadSchema")
        return {"payloadSchema": schema} if schema else None
    shape = shapes.get(call.name or "") or {}
    return {key: shape[key] for key in ("schema", "quickAnswers") if key in shape} or None


def answer_shapes(agent: Any) -> dict[str, dict[str, Any]]:
    """Tool name -> declared answer shape, for every long-running tool with one in ``agent``'s tree (cached per
    agent object: the tree does not change while it is served)."""
    try:
        return _SHAPES[agent]
    except (KeyError, TypeError):
        pass
    shapes: dict[str, dict[str, Any]] = {}
    seen: set[int] = set()

    def walk(node: Any) -> None:
        if node is None or id(node) in seen:
            return
        seen.add(id(node))
        for tool in getattr(node, "tools", None) or []:
            shape = dict(getattr(tool, "answer_shape", None) or {})
            payload_schema = getattr(tool, "confirmation_payload_schema", None)
            if isinstance(payload_schema, dict):
                shape["payloadSchema"] = payload_schema
            if shape:
                shapes.setdefault(tool.name, shape)
            walk(getattr(tool, "agent", None))  # an AgentTool's agent
        for child in getattr(node, "sub_agents", None) or []:
            walk(child)

    walk(agent)
    try:
        _SHAPES[agent] = shapes
    except TypeError:
        pass
    return shapes
