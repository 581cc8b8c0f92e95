"""HistoryCache: parsed session histories kept between invocations, within a byte budget.

Parsing one stored event costs about 0.2 ms (pydantic, plus google-genai's own field checks), so a process
that read and parsed a session's whole history for every invocation paid more for each invocation than for
the one before. A process that runs many invocations of the same sessions (a worker) keeps each session's
parsed events here, with the version they are the history of, and reads only what was appended since.

The cache is a hint, never the truth: every read sends what it holds (version, number of events, digest of
the last one) and the read script answers with the events after them only when they are still the start of
the stored history, else with the whole history (``redis_store.scripts.READ_SESSION_SINCE``). State is
always read afresh. Entries go, least recently used first, once the estimated size passes the budget.
"""

from __future__ import annotations

import hashlib
from array import array
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from .._lent import LentList, only_holder

EVENT_OVERHEAD_BYTES = 5 * 1024
"""Estimated memory of one parsed event beyond its JSON. Measured with tracemalloc: an event of the tool round
trip (about 400 JSON bytes) takes about 4.7 KB parsed plus 1 KB in the model contents built from it; a text
event of 10 KB or 100 KB takes its JSON length plus 3.4 KB."""


def digest(raw_json: str) -> str:
    """The SHA1 (hex) of an event's stored JSON, as the read script computes it to recognise the event."""
    return hashlib.sha1(raw_json.encode()).hexdigest()


def estimated_bytes(raw_json: str) -> int:
    """What one parsed event is charged against the budget (a quarter more than its JSON, plus the overhead)."""
    return EVENT_OVERHEAD_BYTES + len(raw_json) * 5 // 4


@dataclass(eq=False, kw_only=True)
class CachedHistory:
    """One session's parsed events, as stored at ``version``."""

    key: tuple[str, str, str]
    events: LentList
    """Lent to the sessions read from it (no copy of a long history per read): their writers append to it."""
    count: int
    """How many of ``events`` the cache vouches for (read, or seen committed); more are a writer's appends
    that were not committed."""
    version: int
    digest: str
    """SHA1 of the last vouched event's stored JSON ('' with no events)."""
    nbytes: int
    derived: dict[Any, Any] = field(default_factory=dict)
    """What the Runner builds from these events and reuses while they last (model contents per agent and
    branch, see ``BaseSessionService.history_scratch``)."""

    def intact(self, count: int) -> bool:
        """True when the first ``count`` events are still those vouched for (only appends happened since)."""
        return not self.events.changed and len(self.events) >= count

    def free(self) -> bool:
        """True when no session holds the list any more: it may be lent again, and grow unseen."""
        return only_holder(self, "events")


class HistoryCache:
    """Parsed histories by (app, user, session id), least recently used evicted first past ``max_bytes``.

    A session is kept from its second read on (``admit``): most sessions a worker reads are never read by it
    again (one invocation each, or the next one lands on another worker), and keeping those would only fill
    the budget. It also keeps a burst of short sessions from leaving their objects all over the heap: CPython
    cannot give memory back while a few long-lived objects sit among the freed ones.
    """

    def __init__(self, max_bytes: int, doorkeeper_slots: int = 1 << 16):
        self.max_bytes = max_bytes
        self.nbytes = 0
        self._entries: OrderedDict[tuple[str, str, str], CachedHistory] = OrderedDict()
        # Hashes of sessions read once, direct-mapped: a fixed array, so remembering costs no allocation.
        self._seen = array("q", bytes(8 * doorkeeper_slots))
        self._mask = doorkeeper_slots - 1

    def admit(self, key: tuple[str, str, str]) -> bool:
        """True when ``key`` was read before (or is cached); otherwise notes it and says False. Another session
        may take its slot meanwhile: it is then admitted one read later."""
        if key in self._entries:
            return True
        seen = hash(key) or 1
        slot = seen & self._mask
        if self._seen[slot] == seen:
            return True
        self._seen[slot] = seen
        return False

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: tuple[str, str, str]) -> CachedHistory | None:
        """The entry for a session (now the most recently used), or None."""
        entry = self._entries.get(key)
        if entry is not None:
            self._entries.move_to_end(key)
        return entry

    def current(self, entry: CachedHistory) -> bool:
        """True while ``entry`` is in the cache (not evicted, not replaced)."""
        return self._entries.get(entry.key) is entry

    def put(self, key: tuple[str, str, str], events: LentList, version: int, last_digest: str,
            nbytes: int) -> CachedHistory:
        """Start a session's entry over with ``events``, all vouched for (readers of the old entry keep theirs)."""
        self.discard(key)
        entry = self._entries[key] = CachedHistory(key=key, events=events, count=len(events), version=version,
                                                   digest=last_digest, nbytes=nbytes)
        self._grew(nbytes)
        return entry

    def vouch(self, entry: CachedHistory, version: int, last_digest: str, nbytes: int) -> None:
        """Vouch for every event now in ``entry.events`` (the caller appended those stored after the vouched
        ones), which take the history to ``version``; nothing when ``entry`` is no longer cached."""
        if not self.current(entry):
            return
        entry.count = len(entry.events)
        entry.version = version
        entry.digest = last_digest
        entry.nbytes += nbytes
        self._grew(nbytes)

    def discard(self, key: tuple[str, str, str]) -> None:
        """Forget a session (deleted, or its copy found wrong)."""
        entry = self._entries.pop(key, None)
        if entry is not None:
            self.nbytes -= entry.nbytes

    def _grew(self, nbytes: int) -> None:
        self.nbytes += nbytes
        while self.nbytes > self.max_bytes and self._entries:
            _, evicted = self._entries.popitem(last=False)
            self.nbytes -= evicted.nbytes
