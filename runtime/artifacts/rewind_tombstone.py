"""The version a rewind saves over an artifact that did not exist before the rewound invocation.

Versions are never deleted (a rewind keeps the history of what happened), so "gone again" is a new version
holding a marker that every artifact service loads as absent. The marker is ADK 2.13's, an empty
``application/octet-stream`` blob, so artifacts rewound by either runtime read the same; the price is that an
artifact saved with exactly that content loads as absent too.
"""

from __future__ import annotations

from google.genai import types

_MIME_TYPE = "application/octet-stream"


def rewind_tombstone() -> types.Part:
    """A new marker part (the caller may keep or change it)."""
    return types.Part(inline_data=types.Blob(mime_type=_MIME_TYPE, data=b""))


_MARKER = rewind_tombstone()  # compared against, never handed out


def is_rewind_tombstone(artifact: types.Part) -> bool:
    """True when ``artifact`` is the marker: it loads as absent."""
    return artifact.inline_data is not None and artifact == _MARKER
