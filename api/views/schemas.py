"""Request and response bodies of the HTTP API (camelCase on the wire, snake_case accepted too)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from google.genai import types
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidatorFunctionWrapHandler,
    WrapValidator,
)
from pydantic.alias_generators import to_camel

from runtime.errors import UsageError
from runtime.events import Event
from worker.records.double_texting import Strategy
from worker.webhooks.config import check_url


def _webhook_url(value: str) -> str:
    try:
        return check_url(value, "webhook")
    except UsageError as exc:  # a 422 naming the field, as every schema violation
        raise ValueError(str(exc)) from None


def _contain_errors(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    # google-genai's enum lookup raises AttributeError/TypeError on some bad values (null, numbers); turn
    # them into validation errors so the caller gets a 422 naming the field, never a 500.
    try:
        return handler(value)
    except ValidationError:
        raise
    except Exception as exc:
        raise ValueError(f"invalid value: {type(exc).__name__}: {exc}") from None


Content = Annotated[types.Content, WrapValidator(_contain_errors)]
"""A genai Content whose validation never raises anything but a validation error."""

SafeEvent = Annotated[Event, WrapValidator(_contain_errors)]
"""An Event whose validation never raises anything but a validation error."""


class WireModel(BaseModel):
    """Base of every body: camelCase aliases, snake_case accepted, unknown fields refused."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class CreateSessionRequest(WireModel):
    """ADK's POST .../sessions body: an optional id, initial state, and events to seed the history."""

    session_id: str | None = Field(default=None, min_length=1, max_length=256)
    state: dict[str, Any] | None = None
    events: list[SafeEvent] | None = None


class AgentRunRequest(BaseModel):
    """ADK's POST /run and /run_sse body."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    app_name: str = Field(min_length=1, max_length=256)
    user_id: str = Field(min_length=1, max_length=256)
    session_id: str = Field(min_length=1, max_length=256)
    new_message: Content | None = None
    """Optional with ``invocation_id``: that invocation is followed instead of starting one."""
    streaming: bool = False
    state_delta: dict[str, Any] | None = None
    invocation_id: str | None = Field(default=None, min_length=1, max_length=256)
    """The invocation a FunctionResponse message answers (or, with no message, the one to follow)."""
    multitask_strategy: Strategy = "enqueue"
    """What a new message does to the session's invocations in flight (worker.records.double_texting)."""


class UpdateSessionRequest(WireModel):
    """ADK's PATCH .../sessions/{sid} body: a state delta committed without running the agent."""

    state_delta: dict[str, Any]


Part = Annotated[types.Part, WrapValidator(_contain_errors)]


class SaveArtifactRequest(WireModel):
    """ADK's POST .../artifacts body: a new version of ``filename`` (``/`` allowed) with optional metadata."""

    filename: str = Field(min_length=1, max_length=1024)
    artifact: Part
    custom_metadata: dict[str, Any] | None = None


class RunConfigBody(WireModel):
    """The part of RunConfig a caller may set over HTTP."""

    streaming_mode: Literal["none", "sse", "NONE", "SSE"] | None = None
    max_llm_calls: int | None = Field(default=None, ge=1, le=10_000)


class EnqueueRequest(WireModel):
    """POST .../sessions/{sid}/invocations: start an invocation in the background."""

    new_message: Content
    state_delta: dict[str, Any] | None = None
    run_config: RunConfigBody | None = None
    park_timeout: float | None = Field(default=None, gt=0, le=366 * 24 * 3600)
    """Seconds each long-running call may wait for its answer once the invocation parks on it; after that it is
    answered with an expiry error (a confirmation as rejected). Default: the server's ``AGENTQ_PARK_TIMEOUT``."""
    webhook: Annotated[str, AfterValidator(_webhook_url)] | None = None
    """An http(s) URL POSTed a signed notification when the invocation parks, completes, fails, is cancelled or a
    pending call expires (worker.webhooks.deliverer). Default: the app's ``AGENTQ_WEBHOOKS`` entry, else none."""
    multitask_strategy: Strategy = "enqueue"
    """Double texting (worker.records.double_texting): with invocations queued, running or parked on the session,
    ``enqueue`` queues behind them, ``reject`` answers 409, ``interrupt`` cancels them (what they committed
    stays), ``rollback`` cancels them and rewinds the session to before them."""


class EnqueueResponse(WireModel):
    """202 answer to an enqueue: where to follow the invocation."""

    invocation_id: str
    status: str = "queued"
    events_url: str
    status_url: str


class FunctionResponseIn(WireModel):
    """One answer to a pending long-running call."""

    id: str = Field(min_length=1, max_length=256)
    name: str = Field(min_length=1, max_length=256)
    response: dict[str, Any]
    will_continue: bool | None = None


class FunctionResponsesRequest(WireModel):
    """POST /invocations/{id}/function-responses."""

    function_responses: list[FunctionResponseIn] = Field(min_length=1, max_length=100)


class RewindRequest(WireModel):
    """POST .../sessions/{sid}/rewind (the shape of google/adk-python PRs #6704 and #7178)."""

    rewind_before_invocation_id: str = Field(min_length=1, max_length=256)


class SessionCancelOut(WireModel):
    """POST .../sessions/{sid}:cancel: the invocations that were in flight and are now cancelled."""

    cancelled: list[str]


class CancelRequest(WireModel):
    """POST /invocations/{id}/cancel (the body is optional)."""

    reason: str = Field(default="cancelled over HTTP", max_length=1000)


class PendingCallOut(WireModel):
    """A long-running call waiting for its answer, with what a person answering it needs to see.

    ``kind`` says how to answer: ``confirmation`` with ``{"confirmed": true|false, "payload": ...}`` (the
    held call is ``originalCall``; ``hint`` and ``payload`` come from the tool), ``input`` with a value
    matching ``responseSchema`` (the question is ``question``, what it is about ``payload``), ``long_running``
    with the tool's result.
    """

    id: str
    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    kind: Literal["confirmation", "input", "long_running"] = "long_running"
    deadline: float | None = None
    original_call: dict[str, Any] | None = None
    hint: str | None = None
    payload: Any | None = None
    question: str | None = None
    response_schema: dict[str, Any] | None = None
    answer_schema: dict[str, Any] | None = None
    """A ``long_running`` call's declared answer shape (its tool's ``answer_schema``; checked by the server)."""
    payload_schema: dict[str, Any] | None = None
    """A ``confirmation``'s declared approval payload (its tool's ``confirmation_payload_schema``)."""
    quick_answers: list[dict[str, Any]] | None = None
    """A ``long_running`` call's one-click answers: ``[{"label", "response"}]`` (its tool's ``quick_answers``)."""
    approvals: list[str] = Field(default_factory=list)
    """The principals that approved this confirmation so far, while it waits for a quorum."""
    answerable: bool | None = None
    """False when the approval rules keep the caller from answering it (the /ui shows no buttons then)."""

    @classmethod
    def from_pending(cls, call: Any) -> PendingCallOut:
        """The public view of a worker.records.record.PendingCall."""
        details: dict[str, Any] = {}
        if call.kind == "confirmation":
            confirmation = call.args.get("toolConfirmation") or {}
            details = {"original_call": call.args.get("originalFunctionCall"),
                       "hint": confirmation.get("hint"), "payload": confirmation.get("payload"),
                       "payload_schema": (call.answer or {}).get("payloadSchema")}
        elif call.kind == "input":
            details = {"question": call.args.get("message"), "response_schema": call.args.get("response_schema"),
                       "payload": call.args.get("payload")}
        elif call.answer:
            details = {"answer_schema": call.answer.get("schema"), "quick_answers": call.answer.get("quickAnswers")}
        return cls(id=call.id, name=call.name, args=call.args, kind=call.kind, deadline=call.deadline, **details)


class InvocationErrorOut(WireModel):
    """Why an invocation failed or was cancelled."""

    type: str
    message: str


class InvocationOut(WireModel):
    """GET /invocations/{id}: where an invocation stands."""

    invocation_id: str
    app_name: str
    user_id: str
    session_id: str
    status: str
    pending_calls: list[PendingCallOut] = Field(default_factory=list)
    error: InvocationErrorOut | None = None
    cancel_reason: str | None = None
    attempts: int = 0
    created_at: float | None = None
    updated_at: float | None = None
    finished_at: float | None = None
    notice: str | None = None
    """Set on ``GET /invocations/{id}`` when a queued invocation has no alive worker to run it (says so)."""
    schedule_id: str | None = None
    """The schedule that enqueued it (a tick or a trigger); None for any other enqueue."""

    @classmethod
    def from_record(cls, record: Any) -> InvocationOut:
        """The public view of a worker.records.record.InvocationRecord (the request and stored answers left out)."""
        return cls(
            invocation_id=record.id,
            app_name=record.app_name,
            user_id=record.user_id,
            session_id=record.session_id,
            status=record.status,
            pending_calls=[PendingCallOut.from_pending(c).model_copy(
                update={"approvals": list(getattr(record, "approvals", {}).get(c.id, []))})
                for c in record.pending_calls],
            error=InvocationErrorOut(type=record.error.type, message=record.error.message) if record.error else None,
            cancel_reason=record.cancel_reason,
            attempts=record.attempts,
            created_at=record.created_at,
            updated_at=record.updated_at,
            finished_at=record.finished_at,
            schedule_id=getattr(record, "schedule_id", None),
        )


class InvocationList(WireModel):
    """GET /apps/{app}/users/{user}/invocations: a page; pass ``nextPageToken`` as ``pageToken`` for the next
    (null on the last page)."""

    invocations: list[InvocationOut]
    next_page_token: str | None = None


# --- schedules (api.routes.schedules) ---

from worker.schedules import Schedule, ScheduleSpec  # noqa: E402 (kept with the models that use them)


class ScheduleCreateRequest(ScheduleSpec):
    """POST .../schedules: a schedule's spec (``cron`` or ``intervalS``, ``timezone``, ``jitterS``, ``startAt``,
    ``endAt``, ``missed``, ``newMessage``, ``stateDelta``, ``sessionId``, ``runConfig``) and an optional id."""

    id: str | None = Field(default=None, min_length=1, max_length=128)


class ScheduleList(WireModel):
    """GET .../schedules: a page, oldest first; pass ``nextPageToken`` as ``pageToken`` (null on the last page)."""

    schedules: list[Schedule]
    next_page_token: str | None = None


class ScheduleRunOut(InvocationOut):
    """A run of a schedule: its invocation, with the schedule that enqueued it (``scheduleId``)."""

    @classmethod
    def from_record(cls, record: Any) -> ScheduleRunOut:
        """The public view of a run's record."""
        return cls(**InvocationOut.from_record(record).model_dump())


class ScheduleRuns(WireModel):
    """GET .../schedules/{id}/runs: its newest runs, newest first."""

    runs: list[ScheduleRunOut]
