"""Loading the apps a worker serves by import path (``module:attr``), from flags or ``AGENTQ_APPS``."""

from __future__ import annotations

from runtime.errors import UsageError


def parse_specs(values: list[str] | str | None) -> list[str]:
    """``module:attr`` specs from repeated flags and/or comma-separated strings."""
    if values is None:
        return []
    if isinstance(values, str):
        values = [values]
    return [spec.strip() for value in values for spec in value.split(",") if spec.strip()]


def load_apps(specs: list[str]) -> dict:
    """The apps by name. Raises UsageError on a bad spec or two apps with one name."""
    from runtime.apps import load_app

    apps: dict = {}
    for spec in specs:
        app = load_app(spec)
        if app.name in apps:
            raise UsageError(f"two apps are named {app.name!r} (from {spec!r})")
        apps[app.name] = app
    if not apps:
        raise UsageError("no apps to serve: pass --app module:attr or set AGENTQ_APPS")
    return apps
