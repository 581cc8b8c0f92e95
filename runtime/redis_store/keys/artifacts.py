"""Keys of artifacts: each file's versions and each scope's list of file names."""

from __future__ import annotations

from ._naming import PREFIX, _part, user_tag


def artifact_versions(app_name: str, user_id: str, scope: str, filename: str) -> str:
    """List: the versions of one artifact (scope is a session id, or 'user' for ``user:`` files)."""
    return f"{PREFIX}{user_tag(app_name, user_id)}:a:{_part(scope)}:{_part(filename)}"


def artifact_index(app_name: str, user_id: str, scope: str) -> str:
    """Set: artifact filenames in one scope (outside ``:a:``, so no filename, not even "index", can reach it)."""
    return f"{PREFIX}{user_tag(app_name, user_id)}:a-index:{_part(scope)}"
