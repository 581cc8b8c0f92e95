"""Checking an answer against the shape its call declared (issue 18 items 6 and 10).

- an ``adk_request_input`` call (``request_input`` tool, workflow ``RequestInput``): its ``response_schema`` arg;
- a plain long-running call whose tool declared ``answer_schema`` (``LongRunningFunctionTool``): the schema the
  pending call carries in ``answer``;
- an ``adk_request_confirmation`` call whose tool declared ``confirmation_payload_schema`` (``FunctionTool``):
  the approval's ``payload`` (``check_confirmation_payload``).

An object schema is checked against the response itself; any other schema against ``response["result"]`` (how
a single value is answered: ``{"result": value}``). A mismatch raises AnswerSchemaError (a UsageError: 400 over
HTTP) naming the field. ``worker.answer_check`` applies it in ``InvocationStore.respond`` before anything is
stored, so every channel (HTTP function-responses, /run_sse answers, the Python client, the CLI) is refused the
same way.

The checker covers the JSON Schema keywords answer forms use: type, enum, const, properties, required,
additionalProperties, items, min/maxItems, min/maxLength, pattern, minimum/maximum (and exclusive ones), anyOf,
oneOf, allOf and local ``$ref`` (``#/$defs/...``, what pydantic writes for nested models and enums). Other
keywords (format, ...) are not checked.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..errors import UsageError

_TYPES: dict[str, Any] = {
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool))
    or (isinstance(v, float) and v.is_integer()),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "null": lambda v: v is None,
}


class AnswerSchemaError(UsageError):
    """An answer does not match the shape its call declared (400, naming the field)."""

    def __init__(self, message: str, *, field: str) -> None:
        super().__init__(message)
        self.field = field


def answer_schema(call_name: str, args: dict[str, Any], answer: dict[str, Any] | None) -> dict[str, Any] | None:
    """The JSON Schema an answer to this pending call must match (None: any answer)."""
    from ..events.request_input import REQUEST_INPUT_FUNCTION_CALL_NAME

    if call_name == REQUEST_INPUT_FUNCTION_CALL_NAME:
        schema = args.get("response_schema", args.get("responseSchema"))
        return schema if isinstance(schema, dict) and schema else None
    schema = (answer or {}).get("schema")
    return schema if isinstance(schema, dict) and schema else None


def check_answer(call_id: str, call_name: str, schema: dict[str, Any] | None, response: Any) -> None:
    """Raise AnswerSchemaError when ``response`` does not match ``schema`` (nothing to check when None)."""
    if not schema:
        return
    if _is_object_schema(schema, schema):
        value, root = response, ""
    else:
        value, root = (response.get("result") if isinstance(response, dict) else response), "result"
        if isinstance(response, dict) and "result" not in response:
            raise AnswerSchemaError(
                f"the answer to {call_name} call {call_id!r} is refused: field 'result' is required "
                f"(a single value is answered as {{\"result\": value}}, matching {json.dumps(schema)})",
                field="result")
    problem = first_problem(schema, value, root, schema)
    if problem is not None:
        field, message = problem
        raise AnswerSchemaError(
            f"the answer to {call_name} call {call_id!r} is refused: field {field or '(the answer)'!r} {message}",
            field=field)


def check_confirmation_payload(call_id: str, schema: dict[str, Any] | None, response: Any) -> None:
    """Raise AnswerSchemaError when a confirmation answer's payload does not match the tool's declared
    ``confirmation_payload_schema``: an approval must carry a matching payload, a rejection may carry none."""
    if not schema or not isinstance(response, dict):
        return
    from ..events.tool_confirmation import ToolConfirmation

    try:
        answer = ToolConfirmation.from_response_dict(response)
    except ValueError:
        return  # not a confirmation answer at all: refused elsewhere, naming the expected shape
    if not answer.confirmed and answer.payload is None:
        return
    if answer.payload is None:
        raise AnswerSchemaError(f"the approval of confirmation {call_id!r} is refused: field 'payload' is required "
                                f"(matching {json.dumps(schema)})", field="payload")
    problem = first_problem(schema, answer.payload, "payload", schema)
    if problem is not None:
        field, message = problem
        raise AnswerSchemaError(f"the answer to confirmation {call_id!r} is refused: field {field!r} {message}",
                                field=field)


def first_problem(schema: Any, value: Any, path: str, root: dict) -> tuple[str, str] | None:
    """The first place ``value`` breaks ``schema``: (field path, what is wrong), or None when it matches."""
    if schema is False:
        return path, "is not allowed"
    if not isinstance(schema, dict):
        return None
    if "$ref" in schema:
        target = _resolve(schema["$ref"], root)
        if target is None:
            return None  # a reference we cannot follow is not checked (never a false refusal)
        problem = first_problem(target, value, path, root)
        if problem is not None:
            return problem
    expected = schema.get("type")
    if expected is not None:
        names = [t.lower() for t in (expected if isinstance(expected, list) else [expected]) if isinstance(t, str)]
        if names and not any(_TYPES.get(name, lambda v: True)(value) for name in names):
            return path, f"must be {' or '.join(_a(name) for name in names)}, got {_show(value)}"
    if "const" in schema and not _same(value, schema["const"]):
        return path, f"must be {_show(schema['const'])}, got {_show(value)}"
    if isinstance(schema.get("enum"), list) and not any(_same(value, option) for option in schema["enum"]):
        return path, f"must be one of {', '.join(_show(o) for o in schema['enum'])}, got {_show(value)}"
    for keyword in ("anyOf", "oneOf"):
        options = schema.get(keyword)
        if isinstance(options, list) and options:
            problems = [first_problem(option, value, path, root) for option in options]
            if all(p is not None for p in problems):
                # the most specific complaint: one about a field inside the value, else the first
                return max(problems, key=lambda p: len(p[0]))  # type: ignore[arg-type,return-value]
    for option in schema.get("allOf") or []:
        problem = first_problem(option, value, path, root)
        if problem is not None:
            return problem
    if isinstance(value, dict):
        return _object_problem(schema, value, path, root)
    if isinstance(value, list):
        return _array_problem(schema, value, path, root)
    if isinstance(value, str):
        if isinstance(schema.get("minLength"), int) and len(value) < schema["minLength"]:
            return path, f"must be at least {schema['minLength']} characters long"
        if isinstance(schema.get("maxLength"), int) and len(value) > schema["maxLength"]:
            return path, f"must be at most {schema['maxLength']} characters long"
        if isinstance(schema.get("pattern"), str):
            try:
                if re.search(schema["pattern"], value) is None:
                    return path, f"must match the pattern {schema['pattern']}"
            except re.error:
                pass
    if isinstance(value, int | float) and not isinstance(value, bool):
        return _number_problem(schema, value, path)
    return None


def _object_problem(schema: dict, value: dict, path: str, root: dict) -> tuple[str, str] | None:
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    for name in schema.get("required") or []:
        if name not in value:
            return _join(path, name), "is required"
    for name, item in value.items():
        if name in properties:
            problem = first_problem(properties[name], item, _join(path, name), root)
            if problem is not None:
                return problem
            continue
        extra = schema.get("additionalProperties", True)
        if extra is False:
            return _join(path, name), "is not a field of this answer (allowed: " + ", ".join(properties) + ")"
        if isinstance(extra, dict):
            problem = first_problem(extra, item, _join(path, name), root)
            if problem is not None:
                return problem
    return None


def _array_problem(schema: dict, value: list, path: str, root: dict) -> tuple[str, str] | None:
    if isinstance(schema.get("minItems"), int) and len(value) < schema["minItems"]:
        return path, f"must have at least {schema['minItems']} items"
    if isinstance(schema.get("maxItems"), int) and len(value) > schema["maxItems"]:
        return path, f"must have at most {schema['maxItems']} items"
    if isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            problem = first_problem(schema["items"], item, f"{path}[{index}]", root)
            if problem is not None:
                return problem
    return None


def _number_problem(schema: dict, value: float, path: str) -> tuple[str, str] | None:
    bounds = (("minimum", lambda b: value >= b, "at least"), ("maximum", lambda b: value <= b, "at most"),
              ("exclusiveMinimum", lambda b: value > b, "more than"),
              ("exclusiveMaximum", lambda b: value < b, "less than"))
    for keyword, holds, words in bounds:
        bound = schema.get(keyword)
        if isinstance(bound, int | float) and not isinstance(bound, bool) and not holds(bound):
            return path, f"must be {words} {bound}, got {_show(value)}"
    return None


def _is_object_schema(schema: dict, root: dict) -> bool:
    if "$ref" in schema:
        target = _resolve(schema["$ref"], root)
        return isinstance(target, dict) and _is_object_schema(target, root)
    kind = schema.get("type")
    return kind == "object" or (isinstance(kind, str) and kind.lower() == "object") or (
        kind is None and isinstance(schema.get("properties"), dict))


def _resolve(ref: Any, root: dict) -> Any:
    if not isinstance(ref, str) or not ref.startswith("#/"):
        return None
    node: Any = root
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _same(a: Any, b: Any) -> bool:
    """JSON equality: True is not 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return a == b


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _a(name: str) -> str:
    return {"integer": "an integer", "object": "an object", "array": "an array", "null": "null"}.get(name, f"a {name}")


def _show(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:57] + "..."
