"""What is compared of a session: its events as JSON without what differs run to run, and its state.

Imported by both sides (``adk_reference.py`` in bench/.adk-venv, and the matrix under agentq), so it imports
neither library. Left out: event ids, timestamps and invocation ids (agentq resumes the same invocation where
google-adk starts a new one per message), and empty or null fields; a generated call id (``adk-<uuid>``) becomes
``adk-<n>`` by order of appearance, so the same call is the same id on both sides.
"""

from __future__ import annotations

import re
from typing import Any

_CALL_ID = re.compile(r"^adk-[0-9a-f-]{36}$")
DROPPED = ("timestamp", "invocationId")


def normalise(value: Any, ids: dict[str, str] | None = None) -> Any:
    """``value`` (an event, or a list of them, as by-alias JSON) without ids, timestamps and empty fields."""
    ids = {} if ids is None else ids
    if isinstance(value, str) and _CALL_ID.match(value):
        return ids.setdefault(value, f"adk-{len(ids) + 1}")
    if isinstance(value, dict):
        result = {}
        for key, item in value.items():
            key = normalise(key, ids) if isinstance(key, str) else key
            if key in DROPPED or (key == "id" and isinstance(item, str)):
                continue
            item = normalise(item, ids)
            if item in ({}, [], None):
                continue
            result[key] = item
        return result
    if isinstance(value, list):
        return [normalise(item, ids) for item in value]
    return value


def is_bookkeeping(event: dict) -> bool:
    """An event agentq's durable runner adds to a workflow and google-adk does not commit without resumability:
    a node attempt marker or a bare completion event (tests/workflow_parity shows these are the only ones)."""
    if "agentq:node_attempt" in event.get("actions", {}).get("agentState", {}):
        return True
    info = event.get("nodeInfo", {})
    return bool(info.get("outputFor")) and "output" not in event and "content" not in event and not event.get("actions")


ANSWERED_BY = "agentq:answered_by"
"""Custom metadata agentq puts on a person's answer: who answered it (its audit trail), absent from google-adk."""


def without_agentq_marks(event: dict) -> dict:
    """The event without what agentq adds on purpose (``agentq:answered_by``) and without a ``nodeInfo`` that
    holds only a path.

    The path is left out because agentq sets none on an agent's events (google-adk 2.13 writes ``weather@1``,
    ``desk@1/billing@1``, and ``""`` on user messages) and no branch of issue 24 changes that: compared, it would
    fail every cell but the workflow's for that one gap and hide the differences the cells are there to show;
    the matrix's ``paths`` check compares the paths alone. Workflow node events keep their paths (they carry
    ``outputFor`` too)."""
    event = dict(event)
    metadata = {k: v for k, v in (event.get("customMetadata") or {}).items() if k != ANSWERED_BY}
    event.pop("customMetadata", None)
    if metadata:
        event["customMetadata"] = metadata
    if set(event.get("nodeInfo") or {}) <= {"path"}:
        event.pop("nodeInfo", None)
    return event


def session_view(events: list[dict], state: dict) -> dict:
    """The compared view of a session: its normalised events (bookkeeping aside), its state, and each event's
    ``nodeInfo.path`` (compared on their own: see ``without_agentq_marks``)."""
    ids: dict[str, str] = {}
    kept = [event for event in (normalise(event, ids) for event in events) if not is_bookkeeping(event)]
    return {"events": [without_agentq_marks(event) for event in kept], "state": state,
            "paths": [event.get("nodeInfo", {}).get("path") for event in kept]}
