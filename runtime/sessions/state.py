"""State: a dict view that records every change as a delta to commit."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from ..errors import InvalidStateValueError


class State:
    """A mapping over the current state that also records writes in ``delta``.

    Reads see the value written most recently; writes land in both the live value (so later code in the
    same invocation sees them at once) and the pending delta (what the next event will commit).
    """

    APP_PREFIX = "app:"
    USER_PREFIX = "user:"
    TEMP_PREFIX = "temp:"

    __slots__ = ("_value", "_delta")

    def __init__(self, value: dict[str, Any], delta: dict[str, Any]):
        self._value = value
        self._delta = delta

    def __getitem__(self, key: str) -> Any:
        if key in self._delta:
            return self._delta[key]
        return self._value[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self._value[key] = value
        self._delta[key] = value

    def __contains__(self, key: object) -> bool:
        return key in self._delta or key in self._value

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_dict())

    def __len__(self) -> int:
        return len(self.to_dict())

    def __repr__(self) -> str:
        return f"State({self.to_dict()!r})"

    def get(self, key: str, default: Any = None) -> Any:
        """The value of ``key``, or ``default`` when absent."""
        if key in self._delta:
            return self._delta[key]
        return self._value.get(key, default)

    def setdefault(self, key: str, default: Any = None) -> Any:
        """The value of ``key``; sets and returns ``default`` when absent."""
        if key not in self:
            self[key] = default
        return self[key]

    def update(self, other: Mapping[str, Any]) -> None:
        """Set every key of ``other``."""
        for key, value in other.items():
            self[key] = value

    def keys(self):
        return self.to_dict().keys()

    def items(self):
        return self.to_dict().items()

    def values(self):
        return self.to_dict().values()

    def has_delta(self) -> bool:
        """True when there are writes not yet committed."""
        return bool(self._delta)

    @property
    def delta(self) -> dict[str, Any]:
        """The pending writes (live dict: committing an event clears what it carried)."""
        return self._delta

    def to_dict(self) -> dict[str, Any]:
        """Current value with pending writes applied."""
        merged = dict(self._value)
        merged.update(self._delta)
        return merged


def scope_of(key: str) -> str:
    """The storage scope of a state key: 'app', 'user', 'temp' or 'session'."""
    if key.startswith(State.APP_PREFIX):
        return "app"
    if key.startswith(State.USER_PREFIX):
        return "user"
    if key.startswith(State.TEMP_PREFIX):
        return "temp"
    return "session"


def split_by_scope(delta: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Split a state delta into {'app': ..., 'user': ..., 'session': ...}, keys kept whole; temp dropped."""
    scopes: dict[str, dict[str, Any]] = {"app": {}, "user": {}, "session": {}}
    for key, value in delta.items():
        scope = scope_of(key)
        if scope != "temp":
            scopes[scope][key] = value
    return scopes


def check_serialisable(delta: Mapping[str, Any]) -> None:
    """Raise InvalidStateValueError naming the first key whose value JSON cannot encode."""
    for key, value in delta.items():
        if key.startswith(State.TEMP_PREFIX):
            continue  # temp: values never leave the process, so anything goes
        try:
            json.dumps(value)
        except (TypeError, ValueError) as exc:
            raise InvalidStateValueError(
                f"state value for key {key!r} is not JSON-serialisable ({type(value).__name__}): {exc}"
            ) from None
