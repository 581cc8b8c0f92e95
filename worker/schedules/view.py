"""Schedule: a schedule as read back (its spec and where it stands), the shape the client, API and CLI show."""

from __future__ import annotations

import json

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

from worker.schedules.spec import ScheduleSpec


class Schedule(BaseModel):
    """One schedule of an app's user: what and when (``spec``), and its state."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    id: str
    app_name: str
    user_id: str
    spec: ScheduleSpec
    paused: bool = False
    next_run_at: float | None = None
    """Unix time of the next tick (before jitter); None while paused or once ended."""
    ended: bool = False
    """True once ``end_at`` has passed its last tick: nothing fires any more."""
    runs: int = 0
    """Runs enqueued so far (ticks and triggers)."""
    missed: int = 0
    """Ticks passed over without a run under the missed-tick policy."""
    last_run_at: float | None = None
    last_invocation_id: str | None = None
    last_error: str | None = None
    """Why the last tick enqueued nothing (its session was deleted); cleared by the next run."""
    skipped: int = 0
    """Ticks skipped because the enqueue rate limits of the app's user refused their run (``worker.queues.rate_limits``)."""
    last_skip_reason: str | None = None
    """The refusal that skipped the last of those ticks, naming the limit."""
    last_skip_at: float | None = None
    created_at: float
    revision: int
    created_by: str | None = None
    """The principal that made the schedule: who its ticks' runs are enqueued by (the approval rules hold its
    runs to the same separation of duties as the runs it enqueues by hand); None for the local operator's client."""

    def to_json_dict(self) -> dict:
        """The wire form: camelCase keys, the spec's too."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)

    @classmethod
    def from_fields(cls, app: str, user: str, schedule_id: str, fields: dict[str, str]) -> Schedule:
        """From the schedule's hash."""
        next_tick = fields.get("next_tick", "")
        paused = fields.get("paused") == "1"
        last_tick = fields.get("last_tick")
        last_skip = fields.get("last_skip_ms")
        return cls(
            id=schedule_id, app_name=app, user_id=user, spec=ScheduleSpec.model_validate(json.loads(fields["spec"])),
            paused=paused, next_run_at=int(next_tick) / 1000 if next_tick and not paused else None,
            ended=not next_tick, runs=int(fields.get("runs", 0)), missed=int(fields.get("missed", 0)),
            last_run_at=int(last_tick) / 1000 if last_tick else None,
            last_invocation_id=fields.get("last_invocation"), last_error=fields.get("last_error"),
            skipped=int(fields.get("skipped", 0)), last_skip_reason=fields.get("last_skip_reason"),
            last_skip_at=int(last_skip) / 1000 if last_skip else None,
            created_at=int(fields["created_ms"]) / 1000, revision=int(fields["rev"]),
            created_by=fields.get("created_by") or None)
