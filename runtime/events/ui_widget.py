"""UiWidget: a rich component (an MCP App, say) a UI shows beside an event, as ADK 2.13 describes one."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel


class UiWidget(BaseModel):
    """What a UI needs to render one widget; carried in ``EventActions.render_ui_widgets``.

    agentq only carries widgets from the tool to the event (and so to the stream and the API); rendering them
    is the UI's business.
    """

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    id: str
    """Unique among the widgets of one event."""

    provider: str
    """Which renderer the UI uses; ``'mcp'`` is an MCP App shown in an iframe."""

    payload: dict[str, Any] = Field(default_factory=dict)
    """What that renderer needs, as the provider defines it (for ``'mcp'``: resource_uri, tool, tool_args)."""
