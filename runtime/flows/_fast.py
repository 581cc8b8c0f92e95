"""Cheap constructors for the objects the hot path makes for every event.

Validating pydantic models the framework itself builds from already-typed values is pure cost (and
``model_construct`` is slower still on google-genai's many-field types); copying a prototype is fastest.
"""

from __future__ import annotations

import os
import time
from typing import Any, TypeVar

from google.genai import types
from pydantic import BaseModel

from ..events import Event, EventActions, NodeInfo
from ..events.event_actions import empty_actions

_M = TypeVar("_M", bound=BaseModel)
_new = object.__new__
_set = object.__setattr__

_EVENT = Event(author="prototype")
_PART = types.Part()
_RESPONSE = types.FunctionResponse()
_NODE_INFO = NodeInfo()


def replace(model: _M, update: dict[str, Any] | None = None) -> _M:
    """``model.model_copy(update=update)`` (shallow) without the generic ``copy.copy`` calls it makes.

    Only for models without extra or private attributes (all the framework's and google-genai's); any other
    model goes through ``model_copy``. ``update`` must be well typed, as for ``model_copy``.
    """
    if model.__pydantic_extra__ is not None or model.__pydantic_private__ is not None:
        return model.model_copy(update=update)
    new = _new(type(model))
    values = model.__dict__.copy()
    fields_set = set(model.__pydantic_fields_set__)
    if update:
        values.update(update)
        fields_set.update(update)
    _set(new, "__dict__", values)
    _set(new, "__pydantic_extra__", None)
    _set(new, "__pydantic_fields_set__", fields_set)
    _set(new, "__pydantic_private__", None)
    return new


def event(*, actions: EventActions | None = None, **fields: Any) -> Event:
    """A new Event with a fresh id, timestamp and (unless given) actions; ``fields`` must be well typed."""
    fields.setdefault("id", os.urandom(8).hex())
    fields.setdefault("timestamp", time.time())
    fields["actions"] = actions if actions is not None else empty_actions()
    return replace(_EVENT, fields)


_SHARED_NODE_INFOS: dict[str, NodeInfo] = {}
_SHARED_NODE_INFOS_MAX = 4096


def node_info(path: str) -> NodeInfo:
    """The NodeInfo naming only ``path``, shared by every event of that path (every agent event carries one).

    Shared, so never changed in place: code that gives an event other node info replaces the event's
    ``node_info`` with a copy. One per path rather than one per event keeps an event's cost, and the objects
    the garbage collector walks in a long-lived session, where they were before events carried node paths.
    """
    shared = _SHARED_NODE_INFOS.get(path)
    if shared is None:
        if len(_SHARED_NODE_INFOS) >= _SHARED_NODE_INFOS_MAX:  # paths carry run and call ids: do not grow forever
            _SHARED_NODE_INFOS.clear()
        shared = _SHARED_NODE_INFOS[path] = replace(_NODE_INFO, {"path": path})
    return shared


def function_response_part(call_id: str | None, name: str | None, response: dict[str, Any]) -> types.Part:
    """A Part carrying one FunctionResponse."""
    answer = replace(_RESPONSE, {"id": call_id, "name": name, "response": response})
    return replace(_PART, {"function_response": answer})


def content(role: str, parts: list[types.Part]) -> types.Content:
    """A Content (two fields: construct is cheap here)."""
    return types.Content.model_construct(role=role, parts=parts)
