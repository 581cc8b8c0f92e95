"""InvocationRecord <-> Redis hash: scalars raw, structured fields JSON, pending calls and responses as own fields.

Pending calls live in ``p:<call_id>`` fields and accepted responses in ``r:<seq>`` fields so the Lua scripts can
validate and answer one call without decoding and re-encoding the whole record.
"""

from __future__ import annotations

import json
from typing import Any

from worker.records.inputs import split_state_delta, split_traceparents
from worker.records.record import InvocationRecord, PendingCall

_JSON_FIELDS = ("new_message", "state_delta", "run_config", "error")
_FLOAT_FIELDS = ("time_limit", "park_timeout", "created_at", "updated_at", "finished_at")
_STR_FIELDS = ("id", "app_name", "user_id", "session_id", "status", "cancel_reason", "worker", "first_entry",
               "webhook", "enqueued_by", "schedule_id", "traceparent", "run_span")


def dumps(value: Any) -> str:
    """Compact JSON."""
    return json.dumps(value, separators=(",", ":"))


def encode_fields(values: dict[str, Any]) -> list[str]:
    """A flat field/value list for HSET of record fields (None values are left out)."""
    flat: list[str] = []
    for name, value in values.items():
        if value is None:
            continue
        if name in _JSON_FIELDS:
            value = dumps(value)
        flat += [name, str(value)]
    return flat


def encode_record(record: InvocationRecord) -> list[str]:
    """The flat HSET arguments that store a new record."""
    wire = record.model_dump(mode="json", exclude_none=True)
    values = {name: wire.get(name) for name in (*_STR_FIELDS, *_JSON_FIELDS, *_FLOAT_FIELDS)}
    values["attempts"] = record.attempts
    return encode_fields(values)


def decode_record(fields: dict[str, str]) -> InvocationRecord:
    """A record from its hash (as returned by HGETALL with decoded responses)."""
    values: dict[str, Any] = {}
    pending: list[tuple[int, dict]] = []
    responses: list[tuple[str, dict]] = []
    for name, raw in fields.items():
        if name.startswith("p:"):
            call = json.loads(raw)
            pending.append((call.pop("seq", 0), call))
        elif name.startswith("r:"):
            responses.append((name, json.loads(raw)))
        elif name in _JSON_FIELDS:
            values[name] = json.loads(raw)
        elif name in _FLOAT_FIELDS:
            values[name] = float(raw)
        elif name == "attempts":
            values[name] = int(raw)
        elif name.startswith("a:"):  # approvals so far of a confirmation waiting for a quorum (add_approval)
            values.setdefault("approvals", {})[name[2:]] = json.loads(raw)
        elif name == "audit":  # appended by the scripts only (worker.audit), never written from a record
            values[name] = json.loads(raw)
        elif name in _STR_FIELDS:
            values[name] = raw
    values["pending_calls"] = [PendingCall(**call) for _, call in sorted(pending, key=lambda item: item[0])]
    values["responses"], delta = split_state_delta([response for _, response in sorted(responses)])
    if delta:
        values["response_state_delta"] = delta
    values["responses"], traces = split_traceparents(values["responses"])
    if traces:
        values["answer_traceparents"] = traces
    return InvocationRecord.model_validate(values)


def response_field_names(fields: dict[str, str]) -> list[str]:
    """The ``r:<seq>`` field names of the responses waiting on a record, oldest first."""
    return sorted(name for name in fields if name.startswith("r:"))


def pending_json(call: PendingCall, seq: int) -> str:
    """A pending call as stored in its ``p:<id>`` field (``seq`` keeps call order)."""
    return dumps({**call.model_dump(mode="json", exclude_none=True), "seq": seq})
