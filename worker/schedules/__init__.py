"""Schedules: cron expressions and intervals that enqueue invocations of an app, stored in Redis.

This package owns what a schedule is (``spec``: cron or interval, timezone, jitter, start/end, the missed-tick
policy, the message and session), when its ticks fall (``ticks``, on croniter), how schedules are stored and
changed (``store``: the hash per schedule, the user's index, the due set), the single Redis step that fires a
tick and enqueues its invocation (``firing``, on ``lua/schedules/fire.lua``), the clock loop any number of schedulers run
(``clock``), and the client's view (``client``). A run is an ordinary invocation whose record names its
``schedule_id``.
"""

from __future__ import annotations

from worker.schedules.client import ScheduleClient
from worker.schedules.clock import Scheduler
from worker.schedules.spec import MissedPolicy, ScheduleSpec
from worker.schedules.store import ScheduleNotFoundError
from worker.schedules.view import Schedule

__all__ = ["MissedPolicy", "Schedule", "ScheduleClient", "ScheduleNotFoundError", "ScheduleSpec", "Scheduler"]
