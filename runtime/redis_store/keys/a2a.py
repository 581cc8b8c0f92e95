"""Keys of the A2A tasks an API process serves (``api.a2a``): the task as the A2A SDK last saved it."""

from __future__ import annotations

from ._naming import PREFIX, _part, app_tag


def a2a_task(app_name: str, task_id: str) -> str:
    """String: one A2A task (the SDK's Task message, serialized), under the app's tag; it expires with the
    invocation it tracks (the task id is the invocation id)."""
    return f"{PREFIX}{app_tag(app_name)}:a2a:{_part(task_id)}"


def a2a_tasks(app_name: str) -> str:
    """Sorted set: an app's A2A task ids by when they were last saved (ms), for ListTasks."""
    return f"{PREFIX}{app_tag(app_name)}:a2a_tasks"
