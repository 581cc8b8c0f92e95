"""InvocationRecord: the durable truth about one invocation, stored in Redis; Celery messages carry only its id."""

from __future__ import annotations

import time
from typing import Any, Literal

from google.genai import types
from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from runtime.events.tool_confirmation import REQUEST_CONFIRMATION_FUNCTION_CALL_NAME
from runtime.statuses import SETTLED, InvocationStatus
from runtime.tools.request_input_tool import REQUEST_INPUT_FUNCTION_CALL_NAME
from worker.records.audit import AuditEntry


class _Wire(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    def to_json_dict(self) -> dict[str, Any]:
        """The wire form: camelCase keys."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


PendingKind = Literal["confirmation", "input", "long_running"]
"""What a pending call waits for: a yes/no on another tool call, an answer to a question, or any result."""


class PendingCall(_Wire):
    """A long-running function call the invocation is parked on.

    The call itself is the one source of truth: what a person is asked (its kind, a confirmation's hint and
    original call, an input request's question and schema) is read from its name and arguments.
    """

    id: str
    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    deadline: float | None = None
    """Unix time after which the call is answered with an expiry error (None: waits forever); an expired
    confirmation is answered as rejected."""
    answer: dict[str, Any] | None = None
    """A plain long-running call's declared answer shape (``{"schema", "quickAnswers"}`` from its
    LongRunningFunctionTool, worker.records.answer_check): the form /ui shows, and what the server checks answers against."""

    @property
    def kind(self) -> PendingKind:
        """``confirmation`` (adk_request_confirmation), ``input`` (adk_request_input) or ``long_running``."""
        if self.name == REQUEST_CONFIRMATION_FUNCTION_CALL_NAME:
            return "confirmation"
        if self.name == REQUEST_INPUT_FUNCTION_CALL_NAME:
            return "input"
        return "long_running"


class InvocationError(_Wire):
    """Why an invocation failed or was cancelled."""

    type: str
    message: str


def pending_summary(record: InvocationRecord) -> str:
    """Where ``record`` stands for someone answering it: its status and the ids of the calls it waits for."""
    if record.status != "parked":
        after = "; answers are taken once it parks" if record.status in ("queued", "running") else ""
        return f"it is {record.status} and waits for no answer{after}"
    return f"it is parked, waiting for {[call.id for call in record.pending_calls]!r}"


class InvocationRecord(_Wire):
    """One invocation: what was asked, where it stands, what it waits for, and how it ended."""

    id: str
    app_name: str
    user_id: str
    session_id: str
    status: InvocationStatus = "queued"
    new_message: types.Content | None = None
    state_delta: dict[str, Any] | None = None
    run_config: dict[str, Any] | None = None
    pending_calls: list[PendingCall] = Field(default_factory=list)
    responses: list[types.FunctionResponse] = Field(default_factory=list)
    """Function responses accepted for this invocation and not yet handed to the runner."""
    response_state_delta: dict[str, Any] | None = None
    """The ``state_delta`` sent with those responses (``/run_sse``'s body), merged in the order sent: committed
    with the response event, as ADK's runner commits a message's state delta (stored inside the responses'
    ``r:<seq>`` fields, see worker.records.inputs.STATE_DELTA_KEY)."""
    attempts: int = 0
    """How many times a worker took the session lease to run this invocation."""
    time_limit: float | None = None
    """Wall-clock seconds a single run may take before it fails with InvocationTimeoutError."""
    park_timeout: float | None = None
    """Seconds a pending long-running call may wait for its response before it is answered with an expiry error."""
    webhook: str | None = None
    """The URL notified when it parks, completes, fails, is cancelled or a pending call expires (worker.webhooks.deliverer)."""
    error: InvocationError | None = None
    cancel_reason: str | None = None
    enqueued_by: str | None = None
    """The principal that enqueued it (None: a backend through the client, or loopback with auth off); the
    approval rules keep it from answering its own confirmations (api.access.approval_policy)."""
    schedule_id: str | None = None
    """The schedule that enqueued it (worker.schedules); None for an invocation enqueued otherwise."""
    approvals: dict[str, list[str]] = Field(default_factory=dict)
    """Confirmation call id -> the principals that approved it so far, while it waits for a quorum."""
    audit: list[AuditEntry] = Field(default_factory=list)
    """Who answered, cancelled or redelivered, when and from where, oldest first (worker.records.audit; written only by
    the scripts that make those changes)."""
    traceparent: str | None = None
    """The W3C trace context it was enqueued under (a caller's ``traceparent``, or the API's request span): its
    runs' spans are children of it, so one trace follows it across parks and workers (docs/observability.md)."""
    run_span: str | None = None
    """The ``traceparent`` of the span of its last run that settled while traced: the run that resumes it after a
    park links to it."""
    answer_traceparents: list[str] | None = None
    """The trace contexts its waiting responses were sent under (stored inside them, worker.records.inputs)."""
    worker: str | None = None
    first_entry: str | None = None
    """The stream entry id of its first status entry: where `events()` starts reading."""
    created_at: float = Field(default_factory=time.time)
    updated_at: float = Field(default_factory=time.time)
    finished_at: float | None = None

    @property
    def settled(self) -> bool:
        """True when the invocation is not queued or running (its event stream has ended for now)."""
        return self.status in SETTLED


def only_confirmation(record: InvocationRecord) -> PendingCall:
    """The one confirmation ``record`` waits for; UsageError naming them when there are none or several, or its
    status when it is not parked."""
    from runtime.errors import UsageError

    confirmations = [call for call in record.pending_calls if call.kind == "confirmation"]
    if record.status != "parked":  # "waits for 0 confirmations" would hide the reason: it waits for nothing
        raise UsageError(f"invocation {record.id!r} is {record.status}: it waits for no confirmation")
    if len(confirmations) != 1:
        ids = [call.id for call in confirmations]
        others = [call.id for call in record.pending_calls if call.kind != "confirmation"]
        also = f" (it waits for other calls: {others!r}; answer those with respond)" if others else ""
        raise UsageError(f"invocation {record.id!r} waits for {len(ids)} confirmations {ids!r}; name the call "
                         f"id{also}")
    return confirmations[0]
