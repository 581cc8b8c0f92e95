"""The data layout version of a store: which shape of keys and records the code that wrote it expects.

Every agentq process reads it at start (``worker.records.migrate.require_layout``): a store at a newer layout than the
code is refused, naming both (the code would not know the newer shapes); an older one is migrated forward first
(``agentq migrate``, or at first start under a lock unless ``AGENTQ_MIGRATE_AT_START=off``).
"""

from __future__ import annotations

from runtime.errors import UsageError

from .keys._naming import PREFIX

LAYOUT_VERSION = 2
"""The layout this code writes and reads."""

LAYOUTS = {
    0: "no layout version (release 45cf2ca and before): records expire by TTL once final, no status counts, "
       "no app-wide parked index",
    1: "records counted once in the status counts ('counted' marker), parked ones in the app-wide parked index, "
       "final records removed by retention (the sweeper's due set) instead of a TTL",
    2: "status counts kept as flows (one monotonic field per scope and transition, the deployment's counts "
       "the sum of its apps') instead of one counter per status and scope",
}
"""What each layout is, for the migration's report and the refusals."""


def layout_key() -> str:
    """Hash: ``version`` (absent: 0), ``migrated_at``, ``migrated_by``, and ``cursor`` while a migration to the
    next version is under way (where a resumed one goes on from)."""
    return f"{PREFIX}layout"


def migration_lock() -> str:
    """String with a TTL: the owner of the migration running now (renewed as it goes)."""
    return f"{PREFIX}layout:migrating"


class LayoutError(UsageError):
    """The store's layout does not fit this code (newer than it, or older and not migrated)."""


def too_new(stored: int) -> LayoutError:
    """The refusal of a process whose code is older than the store."""
    return LayoutError(
        f"the store's data layout is version {stored}, newer than this code's {LAYOUT_VERSION}: it was "
        f"migrated by a later release; run that release (or later) instead")


def read_version(raw: object) -> int:
    """The version in a ``layout_key`` reply (None: 0)."""
    if raw is None:
        return 0
    try:
        return int(raw)
    except (TypeError, ValueError):
        raise LayoutError(f"the store's {layout_key()!r} has version {raw!r}, not a number") from None
