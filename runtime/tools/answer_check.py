"""Checking an answer against the shape its call declared (issue 18 items 6 and 10).

- an ``adk_request_input`` call (``request_input`` tool, workflow ``RequestInput``): its ``response_schema`` arg;
- a plain long-running call whose tool declared ``answer_schema`` (``LongRunningFunctionTool``): the schema the
  pending call carries in ``answer``;
- an ``adk_request_confirmation`` call whose tool declared ``confirmation_payload_schema`` (``FunctionTool``):
  the approval's ``payload`` (``check_confirmation_payload``).

An object schema is checked against the response itself; any other schema against ``response["result"]`` (how
a single value is answered: ``{"result": value}``). A mismatch raises AnswerSchemaError (a UsageError: 400 over
HTTP) naming the field. ``worker.records.answer_check`` applies it in ``InvocationStore.respond`` before anything is
stored, so every channel (HTTP function-responses, /run_sse answers, the Python client, the CLI) is refused the
same way.

The checker is jsonschema's (the whole draft the schema names, 2020-12 by default, ``format`` included, local
``$ref`` such as pydantic's ``#/$defs/...``); its best-matching error is told in the answer forms' words, naming
the field (``_describe``).
"""

from __future__ import annotations

import json
from typing import Any

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import SchemaError, ValidationError, best_match
from referencing.exceptions import Unresolvable

from ..errors import UsageError


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
    """The place ``value`` breaks ``schema`` worst (jsonschema's ``best_match``): (field path, what is wrong), or
    None when it matches. The whole draft the schema names (2020-12 when it names none), ``format`` included;
    a schema that is not valid JSON Schema, or a ``$ref`` that cannot be followed, checks nothing (never a false
    refusal)."""
    if schema is False:
        return path, "is not allowed"
    if not isinstance(schema, dict):
        return None
    if schema is not root and isinstance(root, dict) and "$defs" in root and "$defs" not in schema:
        schema = {**schema, "$defs": root["$defs"]}  # a sub-schema's local $refs point into the root's $defs
    validator_class = validators.validator_for(schema, default=Draft202012Validator)
    try:
        validator_class.check_schema(schema)
        error = best_match(validator_class(schema, format_checker=validator_class.FORMAT_CHECKER)
                           .iter_errors(value))
    except (SchemaError, Unresolvable):
        return None
    if error is None:
        return None
    return _describe(error, path)


def _describe(error: ValidationError, root: str) -> tuple[str, str]:
    """(field path, words) for one jsonschema error, in the words the answer forms show."""
    path = root
    for part in error.absolute_path:
        path = f"{path}[{part}]" if isinstance(part, int) else _join(path, str(part))
    kind, bound, value = error.validator, error.validator_value, error.instance
    if kind == "required":
        missing = next((name for name in bound if isinstance(value, dict) and name not in value), "?")
        return _join(path, missing), "is required"
    if kind == "additionalProperties":
        allowed = list((error.schema.get("properties") or {}) if isinstance(error.schema, dict) else [])
        extra = next((name for name in value if name not in allowed), "?") if isinstance(value, dict) else "?"
        return _join(path, extra), "is not a field of this answer (allowed: " + ", ".join(allowed) + ")"
    if kind == "type":
        names = [t.lower() for t in (bound if isinstance(bound, list) else [bound]) if isinstance(t, str)]
        return path, f"must be {' or '.join(_a(name) for name in names)}, got {_show(value)}"
    words = {
        "const": lambda: f"must be {_show(bound)}, got {_show(value)}",
        "enum": lambda: f"must be one of {', '.join(_show(o) for o in bound)}, got {_show(value)}",
        "minLength": lambda: f"must be at least {bound} characters long",
        "maxLength": lambda: f"must be at most {bound} characters long",
        "pattern": lambda: f"must match the pattern {bound}",
        "minItems": lambda: f"must have at least {bound} items",
        "maxItems": lambda: f"must have at most {bound} items",
        "minimum": lambda: f"must be at least {bound}, got {_show(value)}",
        "maximum": lambda: f"must be at most {bound}, got {_show(value)}",
        "exclusiveMinimum": lambda: f"must be more than {bound}, got {_show(value)}",
        "exclusiveMaximum": lambda: f"must be less than {bound}, got {_show(value)}",
        "format": lambda: f"must be a valid {bound}, got {_show(value)}",
        "False": lambda: "is not allowed",
    }.get(str(kind))
    return path, words() if words else f"breaks {kind}: {error.message}"  # jsonschema's words, the keyword named


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


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _a(name: str) -> str:
    return {"integer": "an integer", "object": "an object", "array": "an array", "null": "null"}.get(name, f"a {name}")


def _show(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:57] + "..."
