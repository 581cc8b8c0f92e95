"""App: a named root agent, the unit a worker or the API loads by import path (``module:attr``)."""

from __future__ import annotations

import importlib
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..agents.base_agent import BaseAgent
from ..errors import AppNotFoundError, UsageError
from ..plugins.base_plugin import BasePlugin
from ._configs import EventsCompactionConfig, ResumabilityConfig

__all__ = ["App", "EventsCompactionConfig", "ResumabilityConfig", "load_app"]

# ADK App fields agentq does not implement yet: refused by name rather than accepted and ignored.
UNSUPPORTED_ADK_FIELDS = ("context_cache_config",)


class App(BaseModel):
    """An application: its name (the sessions' app_name), its root agent, the plugins every Runner of it
    (in-process or in a worker) applies to all its agents, model and tool calls, and when its sessions'
    older events are summarised (``events_compaction_config``, see ``runtime.apps.compaction``).

    A field ADK's App has and agentq does not support yet (``context_cache_config``) raises UsageError naming
    it, as does any other unknown field.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    name: str
    root_agent: BaseAgent
    description: str = ""
    plugins: list[BasePlugin] = Field(default_factory=list)
    events_compaction_config: EventsCompactionConfig | None = None
    resumability_config: ResumabilityConfig | None = None

    def __init__(self, **data: Any):
        # Checked before validation so the error names the field plainly instead of pydantic's "extra inputs".
        for key in data:
            if key in UNSUPPORTED_ADK_FIELDS:
                raise UsageError(f"App field {key!r} is not supported by agentq yet; remove it from App(...)")
            if key not in type(self).model_fields:
                raise UsageError(f"App has no field {key!r} (its fields: {', '.join(type(self).model_fields)})")
        super().__init__(**data)

    @field_validator("name")
    @classmethod
    def _check_name(cls, name: str) -> str:
        if not name or "/" in name or not name.strip():
            raise UsageError(f"app name {name!r} must be non-empty and contain no '/'")
        return name


def load_app(path: str) -> App:
    """Import ``module:attr`` and return it as an App (a bare agent becomes ``App(name=agent.name, ...)``)."""
    module_name, _, attr = path.partition(":")
    if not module_name:
        raise UsageError(f"app path {path!r} must look like 'package.module:attribute'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise AppNotFoundError(f"cannot import module {module_name!r} for app {path!r}: {exc}") from exc
    target = getattr(module, attr or "app", None)
    if target is None and not attr:
        target = getattr(module, "root_agent", None)
    if target is None:
        raise AppNotFoundError(f"module {module_name!r} has no attribute {attr or 'app'!r} (app path {path!r})")
    if isinstance(target, App):
        return target
    if isinstance(target, BaseAgent):
        return App(name=target.name, root_agent=target)
    raise UsageError(f"{path!r} is a {type(target).__name__}, not an App or an agent")
