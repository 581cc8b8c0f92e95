"""RetentionPolicy: how long what invocations and sessions leave in Redis is kept.

Every agentq process reads it once at its edge (``RetentionPolicy.from_env``) and must be given the same
values: the API and clients stamp each new record with ``settled_s`` (so whichever process settles it applies
the same retention) and with the default park timeout; workers trim streams by age and length, and their
sweepers delete idle sessions. Nonsense (a negative or zero duration, a malformed one) is refused at start
with a UsageError naming the setting.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from runtime.errors import UsageError
from worker.config.env_values import DAY_S, duration, per_app, set_variables

DEFAULT_SETTLED_S = 7 * DAY_S
DEFAULT_STREAM_MAXLEN = 10_000

ENV_NAMES = {
    "settled_s": "AGENTQ_RETENTION_SETTLED",
    "stream_max_age_s": "AGENTQ_RETENTION_STREAM_AGE",
    "stream_maxlen": "AGENTQ_RETENTION_STREAM_LENGTH",
    "session_idle_s": "AGENTQ_RETENTION_SESSION_IDLE",
    "park_timeout_s": "AGENTQ_PARK_TIMEOUT",
    "park_timeout_by_app": "AGENTQ_PARK_TIMEOUT_BY_APP",
}
"""The environment variable behind each field (named in every refusal)."""

@dataclass(frozen=True, kw_only=True)
class RetentionPolicy:
    """Retention and expiry settings (seconds; None turns an optional one off)."""

    settled_s: float = DEFAULT_SETTLED_S
    """A completed, failed or cancelled invocation's record, tool journal, settled stream, index entry and
    listing entries are removed this long after it settled. Parked invocations are never removed by it."""
    stream_max_age_s: float | None = DEFAULT_SETTLED_S
    """Session stream entries older than this are trimmed on the next write (never those an invocation that
    is not final still needs)."""
    stream_maxlen: int = DEFAULT_STREAM_MAXLEN
    """Session streams are trimmed to about this many entries (with the same floor)."""
    session_idle_s: float | None = None
    """Sessions with nothing committed or enqueued for this long are deleted, like DELETE session (their
    parked invocations cancelled); off by default."""
    park_timeout_s: float | None = None
    """Default deadline of a parked long-running call, for invocations enqueued without one; after it the
    call is answered with an expiry error (a confirmation as rejected). None: calls wait forever."""
    park_timeout_by_app: dict[str, float | None] = field(default_factory=dict)
    """Per-app defaults that take the place of ``park_timeout_s`` for that app's invocations (None: forever);
    from ``AGENTQ_PARK_TIMEOUT_BY_APP=transfers=1h,claims=off``."""

    def park_timeout_for(self, app: str) -> float | None:
        """The default deadline of ``app``'s parked calls: its own one, else the deployment's."""
        return self.park_timeout_by_app.get(app, self.park_timeout_s)

    def __post_init__(self) -> None:
        for app, seconds in self.park_timeout_by_app.items():
            if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, int | float)
                                        or not seconds > 0):
                raise UsageError(f"{ENV_NAMES['park_timeout_by_app']}: {app!r} must have a duration above 0 "
                                 f"seconds (or off), got {seconds!r}")
        for item in fields(self):
            if item.name == "park_timeout_by_app":
                continue
            value = getattr(self, item.name)
            optional = item.name not in ("settled_s", "stream_maxlen")
            if value is None and optional:
                continue
            if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
                what = "an integer above 0" if item.name == "stream_maxlen" else "a duration above 0 seconds"
                off = " (or off)" if optional else ""
                raise UsageError(f"{ENV_NAMES[item.name]} ({item.name}) must be {what}{off}, got {value!r}")
        if not isinstance(self.stream_maxlen, int):
            raise UsageError(f"{ENV_NAMES['stream_maxlen']} (stream_maxlen) must be an integer, "
                             f"got {self.stream_maxlen!r}")

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> RetentionPolicy:
        """The policy from ``AGENTQ_RETENTION_*`` / ``AGENTQ_PARK_TIMEOUT`` (unset ones keep their defaults).

        Durations are seconds (``90``, ``0.5``) or a number with a unit: ``30s``, ``15m``, ``12h``, ``7d``;
        ``off`` turns an optional one off.
        """
        values: dict = {}
        for name, variable, raw in set_variables(ENV_NAMES, environ):
            if name == "stream_maxlen":
                values[name] = _integer(variable, raw)
            elif name == "park_timeout_by_app":
                values[name] = per_app(variable, raw, _optional_duration, example="transfers=1h,claims=off")
            else:
                values[name] = duration(variable, raw, optional=name not in ("settled_s",))
        return cls(**values)


def _optional_duration(where: str, raw: str) -> float | None:
    return duration(where, raw, optional=True)


def _integer(variable: str, raw: str) -> int:
    try:
        value = int(raw.strip())
    except ValueError:
        raise UsageError(f"{variable} must be an integer above 0, got {raw!r}") from None
    if value <= 0:
        raise UsageError(f"{variable} must be an integer above 0, got {raw!r}")
    return value
