"""Reading settings from environment variables: which are set, durations, and per-app ``app=value`` lists.

Shared by the settings read at a process edge (``RetentionPolicy``, ``WebhookSettings``); every mistake is a
UsageError that names the variable, so a deployment with a typo refuses to start instead of running on a default.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Mapping
from typing import TypeVar

from runtime.errors import UsageError

T = TypeVar("T")

DAY_S = 24 * 3600.0
_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": DAY_S}
_DURATION = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([smhd]?)\s*", re.IGNORECASE)
_OFF = ("off", "none", "never")


def set_variables(env_names: Mapping[str, str], environ: Mapping[str, str] | None) -> Iterator[tuple[str, str, str]]:
    """``(field, variable, raw value)`` for each of ``env_names`` (field -> variable) set to something non-blank
    in ``environ`` (the process environment when None); unset ones are left to the field's default."""
    env = os.environ if environ is None else environ
    for name, variable in env_names.items():
        raw = env.get(variable)
        if raw is not None and raw.strip():
            yield name, variable, raw


def duration(variable: str, raw: str, *, optional: bool) -> float | None:
    """Seconds from ``90``, ``0.5``, ``30s``, ``15m``, ``12h`` or ``7d``; ``off`` gives None where ``optional``."""
    if optional and raw.strip().lower() in _OFF:
        return None
    match = _DURATION.fullmatch(raw)
    if match is None:
        off = ", or off" if optional else ""
        raise UsageError(f"{variable} must be a duration such as 90 (seconds), 30s, 15m, 12h or 7d{off}; "
                         f"got {raw!r}")
    seconds = float(match.group(1)) * _UNITS[match.group(2).lower()]
    if seconds <= 0:
        raise UsageError(f"{variable} must be a duration above 0 seconds, got {raw!r}")
    return seconds


def per_app(variable: str, raw: str, read_value: Callable[[str, str], T], *, example: str) -> dict[str, T]:
    """``app=value`` pairs separated by commas, each value read by ``read_value(where, text)`` (``where`` names
    the variable and the app for its errors); ``example`` shows the expected form, e.g. ``app=url``."""
    values: dict[str, T] = {}
    for pair in raw.split(","):
        if not pair.strip():
            continue
        app, equals, value = pair.partition("=")
        app = app.strip()
        if not equals or not app:
            raise UsageError(f"{variable} must be app=value pairs separated by commas, such as {example}; "
                             f"got {pair.strip()!r}")
        if app in values:
            raise UsageError(f"{variable} names app {app!r} twice")
        values[app] = read_value(f"{variable} entry for app {app!r}", value.strip())
    return values
