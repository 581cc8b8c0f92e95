"""The doors: one function per state change a caller can cause, the one place its guards are applied.

Every entry point (the HTTP routes, ``/run`` and ``/run_sse``, A2A, the CLI as ``cli:<os user>``) translates its
wire format and calls a door with the caller (``api.access.auth.Caller``), the guards (``Guards``: the served apps,
approval rules, rate limits, webhook SSRF rule) and the AgentqClient. Each door applies, in one fixed order:
scope (a record outside the caller's grant or the served apps is the same not-found as an unknown id), roles
(by action, not by URL), approval rules (separation of duties, quorum), answer checks, rate limits, then its one
store call, which records the real principal and client address in the audit trail. ``tests/api/test_doors_layer.py``
fails when an adapter reaches a state-changing client method without going through a door.
"""

from api.doors.answer import AnswerOutcome, answer, confirm
from api.doors.cancel import cancel, cancel_session
from api.doors.enqueue import enqueue
from api.doors.guards import (
    Guards,
    actor_of,
    check_scope,
    cli_caller,
    enqueued_by,
    require_role,
    visible_record,
)
from api.doors.schedules import (
    create_schedule,
    delete_schedule,
    pause_schedule,
    resume_schedule,
    trigger_schedule,
    update_schedule,
)
from api.doors.sessions import delete_session, rewind
from api.doors.webhooks import redeliver

__all__ = [
    "AnswerOutcome", "Guards", "actor_of", "answer", "cancel", "cancel_session", "check_scope", "cli_caller",
    "confirm", "create_schedule", "delete_schedule", "delete_session", "enqueue", "enqueued_by", "pause_schedule",
    "redeliver", "require_role", "resume_schedule", "rewind", "trigger_schedule", "update_schedule",
    "visible_record",
]
