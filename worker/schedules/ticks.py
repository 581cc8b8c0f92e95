"""When a schedule's ticks fall, and which overdue tick to fire under its missed-tick policy (pure logic).

Times are integer milliseconds since the epoch, the unit the due set and the fire script compare exactly.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from croniter import croniter

from worker.schedules.spec import ScheduleSpec, seconds_first

MAX_CATCH_UP_STEPS = 100_000
"""How many overdue ticks ``latest`` and ``skip`` step over at most in one go (a cron schedule off for years)."""


def next_tick(spec: ScheduleSpec, after_ms: int, anchor_ms: int) -> int | None:
    """The first tick strictly after ``after_ms`` and not before ``start_at`` (None: past ``end_at``).
    ``anchor_ms``: where an interval counts from when the spec has no ``start_at`` (the creation time)."""
    start_ms = _ms(spec.start_at) if spec.start_at is not None else anchor_ms
    floor = max(after_ms, start_ms - 1)
    if spec.interval_s is not None:
        step = round(spec.interval_s * 1000)
        tick = start_ms + ((floor - start_ms) // step + 1) * step if floor >= start_ms else start_ms
    else:
        zone = ZoneInfo(spec.timezone)
        base = dt.datetime.fromtimestamp(floor / 1000, zone)
        tick = round(croniter(spec.cron, base, second_at_beginning=seconds_first(spec.cron)).get_next(float) * 1000)
    if spec.end_at is not None and tick > _ms(spec.end_at):
        return None
    return tick


@dataclass(frozen=True, kw_only=True)
class Step:
    """What one fire does: the tick it runs (None: none), how many ticks it passes over, and the next tick."""

    fire: int | None
    missed: int
    next: int | None


def step(spec: ScheduleSpec, due_tick: int, now_ms: int, anchor_ms: int) -> Step:
    """The step for a schedule whose next tick ``due_tick`` is due at ``now_ms``, under ``spec.missed``.

    A tick is overtaken when the tick after it (plus the jitter allowance) is due as well."""
    slack = round(spec.jitter_s * 1000)
    following = next_tick(spec, due_tick, anchor_ms)
    if following is None or following + slack > now_ms or spec.missed == "all":
        return Step(fire=due_tick, missed=0, next=following)
    # Overtaken: walk to the newest tick that is due (each step of a cron reads the calendar, hence the bound).
    newest, passed = due_tick, 0
    while following is not None and following + slack <= now_ms and passed < MAX_CATCH_UP_STEPS:
        newest, following, passed = following, next_tick(spec, following, anchor_ms), passed + 1
    if spec.missed == "latest":
        return Step(fire=newest, missed=passed, next=following)
    return Step(fire=None, missed=passed + 1, next=following)


def _ms(seconds: float) -> int:
    return round(seconds * 1000)
