"""Rewinding a session to before one of its invocations (``Runner.rewind_async``), as ADK 2.13 does it.

Nothing stored is deleted or edited: the rewind appends one event, author ``user`` under an invocation id of
its own, whose ``actions`` carry ``rewind_before_invocation_id`` plus the state and artifact changes that put
things back. Committing it goes through the session service like any event, so the Redis service applies it
in its one-round-trip commit, and the history stays append-only for every cache built on it. How later reads
leave the rewound events out is ``events.rewinds``.

What is put back, and what is not (both as ADK 2.13 behaves, observed side by side in
``bench/adk_side/rewind_scenario.py``):

- Session-scoped state becomes what the events before the invocation made it. A key they never set is set
  to None (not removed: a None value is how a delta says "gone", and services keep it as a None value). That
  includes keys given to ``create_session``, which no event records.
- ``app:`` and ``user:`` state are shared with other sessions and are left as they are.
- A session artifact gets a new version: a copy of the version it had before the invocation, or, if it did
  not exist then, a marker that loads as absent (``artifacts.rewind_tombstone``). ``user:`` artifacts are
  shared and are left as they are. Without an artifact service nothing is restored.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from google.genai import types

from ..artifacts.rewind_tombstone import rewind_tombstone
from ..errors import InvocationNotFoundError
from ..events import Event, EventActions
from ..ids import new_invocation_id
from .state import State

if TYPE_CHECKING:
    from ..artifacts import BaseArtifactService
    from .base_session_service import BaseSessionService
    from .session import Session

log = logging.getLogger(__name__)

_SHARED_OR_PASSING = (State.APP_PREFIX, State.USER_PREFIX, State.TEMP_PREFIX)
_USER_ARTIFACT_PREFIX = "user:"


async def rewind_session(
    *,
    session_service: BaseSessionService,
    session: Session,
    rewind_before_invocation_id: str,
    artifact_service: BaseArtifactService | None,
    app_name: str,
) -> Event:
    """Commit the event that rewinds ``session`` (read with its whole history) to before the invocation.

    Raises InvocationNotFoundError when no event of the session belongs to that invocation. The invocation is
    looked up in the whole history, rewound events included, so an invocation already rewound can be
    rewound to again.
    """
    start = _first_event_of(session.events, rewind_before_invocation_id)
    if start is None:
        raise InvocationNotFoundError(f"Invocation ID not found: {rewind_before_invocation_id}")
    state_delta = state_delta_undoing(session, start)
    artifact_delta = {}
    if artifact_service is not None:
        artifact_delta = await restore_artifacts(session, start, artifact_service, app_name)
    event = Event(
        invocation_id=new_invocation_id(),
        author="user",
        actions=EventActions(rewind_before_invocation_id=rewind_before_invocation_id, state_delta=state_delta,
                             artifact_delta=artifact_delta),
    )
    log.info("session %s: rewinding to before invocation %s", session.id, rewind_before_invocation_id)
    await session_service.append_event(session, event)
    return event


def _first_event_of(events: list[Event], invocation_id: str) -> int | None:
    return next((index for index, event in enumerate(events) if event.invocation_id == invocation_id), None)


def state_delta_undoing(session: Session, start: int) -> dict[str, Any]:
    """The state delta that makes ``session``'s session-scoped state what ``events[:start]`` made it."""
    then: dict[str, Any] = {}
    for event in session.events[:start]:
        for key, value in event.actions.state_delta.items():
            if key.startswith(_SHARED_OR_PASSING):
                continue
            if value is None:
                then.pop(key, None)
            else:
                then[key] = value
    now = session.state
    delta = {key: value for key, value in then.items() if key not in now or now[key] != value}
    for key in now:
        if key not in then and not key.startswith(_SHARED_OR_PASSING):
            delta[key] = None
    return delta


async def restore_artifacts(session: Session, start: int, artifact_service: BaseArtifactService,
                            app_name: str) -> dict[str, int]:
    """Save, for each session artifact changed since ``events[start]``, the version that puts it back; the
    artifact delta recording those saves."""
    then = _artifact_versions(session.events[:start])
    now = _artifact_versions(session.events)
    delta: dict[str, int] = {}
    for filename, version in now.items():
        if filename.startswith(_USER_ARTIFACT_PREFIX) or then.get(filename) == version:
            continue
        part = await _artifact_as_it_was(session, filename, then.get(filename), artifact_service, app_name)
        delta[filename] = await artifact_service.save_artifact(
            app_name=app_name, user_id=session.user_id, session_id=session.id, filename=filename, artifact=part,
        )
    return delta


def _artifact_versions(events: list[Event]) -> dict[str, int]:
    """Filename -> the version the events last recorded for it, in the order the names first appear."""
    versions: dict[str, int] = {}
    for event in events:
        versions.update(event.actions.artifact_delta)
    return versions


async def _artifact_as_it_was(session: Session, filename: str, version: int | None,
                              artifact_service: BaseArtifactService, app_name: str) -> types.Part:
    if version is None:  # it did not exist yet
        return rewind_tombstone()
    part = await artifact_service.load_artifact(app_name=app_name, user_id=session.user_id, session_id=session.id,
                                                filename=filename, version=version)
    if part is None:
        log.warning("session %s: artifact %r version %d is gone; the rewind marks the artifact absent",
                    session.id, filename, version)
        return rewind_tombstone()
    return part
