"""A page of invocations across (app, user) pairs: ``agentq list`` and ``GET /invocations`` (every failed
invocation of the apps and users the caller may see, say).

Pairs are walked in the order given, each user's invocations newest first (``worker.records.listing``); the page token
holds the pair's index and the position inside it, so a listing followed token by token returns each
invocation present throughout exactly once. Filtering by a status other than ``parked`` scans (see
``worker.records.listing.SCAN_BUDGET``): a page may come back short with a token; follow tokens until there is none.
"""

from __future__ import annotations

from typing import Any

from worker.records.listing import Page, check_page_size, decode_token, encode_token
from worker.records.record import InvocationRecord


async def invocations_across(client: Any, pairs: list[tuple[str, str]], *, status: str | None = None,
                             page_size: int = 100, page_token: str | None = None) -> Page[InvocationRecord]:
    """Up to ``page_size`` invocations of ``pairs`` (of ``status`` when given); ``client`` is an AgentqClient."""
    check_page_size(page_size)
    index, inner = (0, None)
    if page_token:
        position, inner = decode_token(page_token, "x")
        index = int(position)
    found: list[InvocationRecord] = []
    while index < len(pairs) and len(found) < page_size:
        app, user = pairs[index]
        page = await client.invocations_page(app, user, status, page_size=page_size - len(found),
                                             page_token=inner)
        found += page.items
        if page.next_page_token is not None:
            return Page(items=found, next_page_token=encode_token("x", index, page.next_page_token))
        index, inner = index + 1, None
    return Page(items=found, next_page_token=encode_token("x", index, None) if index < len(pairs) else None)
