"""Session: one conversation's events and state."""

from __future__ import annotations

import time
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from ..events import Event


class Session(BaseModel):
    """A conversation between one user and one app: its committed events and merged state.

    ``state`` merges app-, user- and session-scoped keys (app/user keys keep their prefix).
    ``version`` counts committed events; stores use it to refuse writers holding a stale copy.
    """

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    id: str
    app_name: str
    user_id: str
    state: dict[str, Any] = Field(default_factory=dict)
    events: list[Event] = Field(default_factory=list)
    last_update_time: float = Field(default_factory=time.time)
    version: int = 0


class GetSessionConfig(BaseModel):
    """Which events ``get_session`` returns: the most recent N, and/or those after a timestamp."""

    num_recent_events: int | None = None
    after_timestamp: float | None = None


class ListSessionsResponse(BaseModel):
    """The sessions of an app (and user), without their events."""

    sessions: list[Session] = Field(default_factory=list)


def filter_events(events: list[Event], config: GetSessionConfig | None) -> list[Event]:
    """Apply a GetSessionConfig to a chronological list of events."""
    if config is None:
        return list(events)
    selected = events
    if config.after_timestamp is not None:
        selected = [e for e in selected if e.timestamp >= config.after_timestamp]
    if config.num_recent_events:  # 0 and None both mean "no limit", as in ADK
        selected = selected[-config.num_recent_events :]
    return list(selected)
