"""ADK's AppInfo for ``GET /apps/{app}/app-info``: the root agent and every LlmAgent below it, with its tools.

An app given as ``agentq api --app module:attr`` is described when the API starts; any other app is described by
the workers that run it (``worker.fleet.app_catalog``, read through ``api.served_apps``), so the API never imports
its code. Either way the API never runs an agent: it only reads names, descriptions, string instructions and
tool declarations.
"""

from __future__ import annotations

from typing import Any

from worker.fleet.app_catalog import describe_app

__all__ = ["describe_app", "name_only"]


def name_only(app_name: str) -> dict[str, Any]:
    """The AppInfo of an app the API was given by name only (no agent tree to describe)."""
    return {"name": app_name, "language": "python", "isComputerUse": False}
