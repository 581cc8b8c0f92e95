"""ScheduleSpec: what a schedule runs and when, checked when it is made so a bad one is never stored."""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import croniter
from pydantic import BaseModel, ConfigDict, model_validator
from pydantic.alias_generators import to_camel

from runtime.errors import UsageError

MissedPolicy = Literal["latest", "all", "skip"]
"""What happens to ticks the clock reached late, after the following tick was due too (no scheduler ran, or
the schedule's runs came faster than the schedulers could fire them):

- ``latest`` (default): one run for the newest overdue tick; the older ones are counted as missed;
- ``all``: a run for every overdue tick, oldest first;
- ``skip``: no run for overdue ticks; the schedule waits for its next tick in the future.

A tick that is late but not yet overtaken by the next one always runs."""

MIN_INTERVAL_S = 1.0
"""The shortest interval: ticks are fired with millisecond times, and schedulers poll a few times a second."""

CRON_SECONDS_FIELDS = 6
"""A cron expression of six fields has seconds first (``*/5 * * * * *``: every 5 seconds), as Quartz and Spring."""


class ScheduleSpec(BaseModel):
    """When to run (``cron`` or ``interval_s``, in ``timezone``, between ``start_at`` and ``end_at``, each
    tick delayed by up to ``jitter_s``) and what (``new_message`` into ``session_id``, or a new session each run)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    cron: str | None = None
    """Five fields (minute hour day month weekday) or six with seconds first; parsed by croniter."""
    interval_s: float | None = None
    """Seconds between ticks (at least MIN_INTERVAL_S), counted from ``start_at`` (else from creation)."""
    timezone: str = "UTC"
    """The IANA zone cron fields are read in (``Europe/Paris``); DST gaps and repeats as croniter handles them."""
    jitter_s: float = 0.0
    """Each run is delayed by a random 0..jitter_s seconds (spreads many schedules on one tick)."""
    start_at: float | None = None
    """Unix time of the first possible tick (None: from creation)."""
    end_at: float | None = None
    """Unix time after which no tick fires; the schedule then stays, ended, with its runs."""
    missed: MissedPolicy = "latest"
    new_message: Any
    """The user message of each run: text, or a Content as JSON."""
    state_delta: dict[str, Any] | None = None
    session_id: str | None = None
    """Every run in this session (made when the schedule is); None: a new session per run."""
    run_config: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _check(self) -> ScheduleSpec:
        if (self.cron is None) == (self.interval_s is None):
            raise ValueError("give exactly one of cron and intervalS")
        try:
            ZoneInfo(self.timezone)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown timezone {self.timezone!r} (an IANA name such as 'Europe/Paris')") from None
        if self.cron is not None and not croniter.is_valid(self.cron, second_at_beginning=seconds_first(self.cron)):
            raise ValueError(f"bad cron expression {self.cron!r} (five fields, or six with seconds first)")
        if self.interval_s is not None and not self.interval_s >= MIN_INTERVAL_S:
            raise ValueError(f"intervalS {self.interval_s!r} is below the minimum of {MIN_INTERVAL_S} s")
        if not 0 <= self.jitter_s <= 3600:
            raise ValueError(f"jitterS {self.jitter_s!r} must be between 0 and 3600 seconds")
        if self.start_at is not None and self.end_at is not None and self.end_at <= self.start_at:
            raise ValueError(f"endAt {_iso(self.end_at)} is not after startAt {_iso(self.start_at)}")
        if self.session_id is not None and not 0 < len(self.session_id) <= 256:
            raise ValueError("sessionId must be 1 to 256 characters")
        return self

    @classmethod
    def parse(cls, value: ScheduleSpec | dict[str, Any]) -> ScheduleSpec:
        """A spec from a dict (camelCase or snake_case keys); UsageError naming what is wrong."""
        if isinstance(value, ScheduleSpec):
            return value
        try:
            return cls.model_validate(value)
        except ValueError as exc:
            raise UsageError(f"bad schedule: {_first_error(exc)}") from None

    def changed(self, changes: dict[str, Any]) -> ScheduleSpec:
        """This spec with ``changes`` applied (a PATCH), checked as a whole."""
        current = self.model_dump(by_alias=True, exclude_none=True)
        fields = {name: (field.alias or name) for name, field in type(self).model_fields.items()}
        for key, value in changes.items():
            alias = fields.get(key, key)  # snake_case keys as their camelCase alias
            current.pop(alias, None)
            if value is not None:
                current[alias] = value
        return self.parse(current)


def seconds_first(cron: str) -> bool:
    """Whether ``cron`` has a seconds field (six fields, seconds first)."""
    return len(cron.split()) == CRON_SECONDS_FIELDS


def _iso(when: float) -> str:
    return dt.datetime.fromtimestamp(when, dt.UTC).isoformat()


def _first_error(exc: ValueError) -> str:
    errors = getattr(exc, "errors", None)
    if errors is None:
        return str(exc)
    first = errors()[0]
    where = ".".join(str(part) for part in first.get("loc", ()))
    message = first.get("msg", "invalid").removeprefix("Value error, ")
    return f"{where}: {message}" if where else message
