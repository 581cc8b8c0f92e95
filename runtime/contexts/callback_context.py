"""CallbackContext: what agent and model callbacks may read and change."""

from __future__ import annotations

from typing import TYPE_CHECKING

from google.genai import types

from ..errors import UsageError
from ..events import EventActions
from ..events.event_actions import empty_actions
from ..events.ui_widget import UiWidget
from ..sessions.state import State
from .readonly_context import ReadonlyContext

if TYPE_CHECKING:
    from .invocation_context import InvocationContext


class CallbackContext(ReadonlyContext):
    """State writes and artifact saves made here land in ``actions`` and are committed with the next event."""

    def __init__(self, invocation_context: InvocationContext, *, event_actions: EventActions | None = None):
        super().__init__(invocation_context)
        self._event_actions = event_actions if event_actions is not None else empty_actions()
        self._state = State(invocation_context.session.state, self._event_actions.state_delta)

    @property
    def state(self) -> State:  # type: ignore[override]
        """The merged state; writes are recorded as a delta to commit."""
        return self._state

    @property
    def actions(self) -> EventActions:
        """The actions the next event of this context will carry."""
        return self._event_actions

    def _artifact_service(self):
        service = self._invocation_context.artifact_service
        if service is None:
            raise UsageError("Artifact service is not initialized: pass artifact_service= to the Runner")
        return service

    def _artifact_scope(self) -> dict[str, str]:
        session = self._invocation_context.session
        return {"app_name": session.app_name, "user_id": session.user_id, "session_id": session.id}

    async def save_artifact(self, filename: str, artifact: types.Part) -> int:
        """Save a new version of ``filename``; the version is recorded in ``actions.artifact_delta``."""
        version = await self._artifact_service().save_artifact(
            **self._artifact_scope(), filename=filename, artifact=artifact
        )
        self._event_actions.artifact_delta[filename] = version
        return version

    async def load_artifact(self, filename: str, version: int | None = None) -> types.Part | None:
        """The given version of ``filename`` (latest when None), or None."""
        return await self._artifact_service().load_artifact(
            **self._artifact_scope(), filename=filename, version=version
        )

    async def list_artifacts(self) -> list[str]:
        """The artifact filenames visible to this session."""
        return await self._artifact_service().list_artifact_keys(**self._artifact_scope())

    def render_ui_widget(self, ui_widget: UiWidget) -> None:
        """Ask the UI to render ``ui_widget`` beside the next event (``actions.render_ui_widgets``).

        Raises ValueError when a widget with the same id is already there, as ADK does.
        """
        widgets = self._event_actions.render_ui_widgets
        if widgets is None:
            widgets = self._event_actions.render_ui_widgets = []
        if any(widget.id == ui_widget.id for widget in widgets):
            raise ValueError(f"UI widget with ID '{ui_widget.id}' already exists in the current event actions.")
        widgets.append(ui_widget)
