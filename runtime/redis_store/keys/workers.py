"""Keys of workers: who announced itself, and who beat recently."""

from __future__ import annotations

from ._naming import PREFIX


def workers() -> str:
    """Hash: worker name -> JSON {pid, apps, started_at}; written when a worker is ready to consume."""
    return f"{PREFIX}workers"


def workers_alive() -> str:
    """Sorted set: worker name scored by its last liveness beat (ms); fresh beats mean the worker is alive."""
    return f"{PREFIX}workers_alive"
