"""The docstring a tool built from a callable is described by, for any kind of callable (as ADK 2.13 picks it)."""

from __future__ import annotations

import dataclasses
import functools
import inspect
from typing import Any

# Docstrings Python supplies when the author wrote none; they describe nothing about the tool.
_INHERITED_CALL_DOC = inspect.getdoc(type.__call__)
_PARTIAL_CLASS_DOC = inspect.getdoc(functools.partial)


def callable_doc(func: Any) -> str:
    """The cleaned docstring of ``func``, or '' when it has none.

    A function's own docstring; a callable object's class docstring, else its ``__call__``'s; a
    ``functools.partial`` the docstring of what it wraps. The signature a dataclass writes as its docstring
    and the stock ``__call__`` docstring count as none.
    """
    if isinstance(func, functools.partial):
        return callable_doc(func.func) if _own_doc(func) in ("", _PARTIAL_CLASS_DOC) else _own_doc(func)
    doc = _own_doc(func)
    if _is_dataclass_signature(func, doc):
        doc = ""
    if not doc and not inspect.isroutine(func) and not isinstance(func, type):
        call = getattr(func, "__call__", None)  # noqa: B004 - a callable object's method, not callable()
        doc = _own_doc(call) if call is not None else ""
    return "" if doc == _INHERITED_CALL_DOC else doc


def _own_doc(obj: Any) -> str:
    # a class's docstring is its own: a subclass without one is not described by its base's
    if isinstance(obj, type):
        return inspect.cleandoc(obj.__doc__) if isinstance(obj.__doc__, str) else ""
    return inspect.getdoc(obj) or ""


def _is_dataclass_signature(func: Any, doc: str) -> bool:
    """True when ``doc`` is the ``Name(field: type, ...)`` text @dataclass gives a class without a docstring."""
    if isinstance(func, type) or not dataclasses.is_dataclass(func):
        return False
    cls = type(func)
    try:
        signature = str(inspect.signature(cls)).replace(" -> None", "")
    except (TypeError, ValueError):
        signature = ""
    return doc == inspect.cleandoc(cls.__name__ + signature)
