"""Build a google-genai FunctionDeclaration from a Python function's signature."""

from __future__ import annotations

import enum
import inspect
import types as pytypes
import typing
from typing import Any

import pydantic
from google.genai import types

from ._callable_doc import callable_doc

# Parameters the framework fills in itself; the model never sees them.
HIDDEN_PARAMS = frozenset({"tool_context", "input_stream"})

_SIMPLE = {
    str: types.Type.STRING,
    int: types.Type.INTEGER,
    float: types.Type.NUMBER,
    bool: types.Type.BOOLEAN,
    list: types.Type.ARRAY,
    tuple: types.Type.ARRAY,
    set: types.Type.ARRAY,
    dict: types.Type.OBJECT,
}


def visible_params(func) -> list[inspect.Parameter]:
    """The parameters the model may pass: no tool_context, no *args, no **kwargs."""
    return [
        p
        for p in inspect.signature(func).parameters.values()
        if p.name not in HIDDEN_PARAMS and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]


def mandatory_params(func) -> list[str]:
    """The visible parameters without a default, in signature order."""
    return [p.name for p in visible_params(func) if p.default is inspect.Parameter.empty]


def schema_for(annotation: Any) -> types.Schema:
    """The Schema of one type hint (unknown hints become an unconstrained object)."""
    if annotation is inspect.Parameter.empty or annotation is Any:
        return types.Schema()
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (typing.Union, pytypes.UnionType):
        non_null = [a for a in args if a is not type(None)]
        schema = schema_for(non_null[0]) if len(non_null) == 1 else types.Schema(
            any_of=[schema_for(a) for a in non_null]
        )
        if len(non_null) < len(args):
            schema.nullable = True
        return schema
    if origin is typing.Literal:
        return types.Schema(type=types.Type.STRING, enum=[str(a) for a in args])
    if origin in (list, tuple, set, frozenset) or annotation in (list, tuple, set):
        schema = types.Schema(type=types.Type.ARRAY)
        if args:
            schema.items = schema_for(args[0])
        return schema
    if origin is dict or annotation is dict:
        return types.Schema(type=types.Type.OBJECT)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return types.Schema(type=types.Type.STRING, enum=[str(m.value) for m in annotation])
    if isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel):
        return _model_schema(annotation)
    if annotation in _SIMPLE:
        return types.Schema(type=_SIMPLE[annotation])
    return types.Schema(type=types.Type.OBJECT)


def _model_schema(model: type[pydantic.BaseModel]) -> types.Schema:
    properties = {name: schema_for(field.annotation) for name, field in model.model_fields.items()}
    required = [name for name, field in model.model_fields.items() if field.is_required()]
    return types.Schema(type=types.Type.OBJECT, properties=properties, required=required or None)


def build_declaration(func, *, name: str | None = None, description: str | None = None) -> types.FunctionDeclaration:
    """Name, docstring and parameter schema of ``func``; required = parameters without a default."""
    try:
        hints = typing.get_type_hints(func)
    except Exception:  # unresolvable forward references: fall back to the raw annotations
        hints = {}
    properties: dict[str, types.Schema] = {}
    required: list[str] = []
    for param in visible_params(func):
        schema = schema_for(hints.get(param.name, param.annotation))
        if param.default is inspect.Parameter.empty:
            required.append(param.name)
        elif _json_safe(param.default):
            schema.default = param.default
        properties[param.name] = schema
    doc = description if description is not None else callable_doc(func)
    parameters = (
        types.Schema(type=types.Type.OBJECT, properties=properties, required=required or None)
        if properties
        else None
    )
    return types.FunctionDeclaration(name=name or func.__name__, description=doc or None, parameters=parameters)


def _json_safe(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool | list | dict)
