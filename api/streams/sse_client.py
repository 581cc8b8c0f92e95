"""A minimal SSE reader over httpx, for the demo, the e2e tests and the benchmark."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx


@dataclass(frozen=True, kw_only=True)
class SseFrame:
    """One server-sent event: ``id``, ``event`` (``message`` when absent) and the decoded JSON ``data``."""

    id: str | None
    event: str
    data: Any


async def read_frames(response: httpx.Response) -> AsyncIterator[SseFrame]:
    """Parse an open streaming response into frames; comment lines (keepalives) are skipped."""
    entry_id: str | None = None
    event = "message"
    data: list[str] = []
    async for line in response.aiter_lines():
        if line == "":
            if data:
                yield SseFrame(id=entry_id, event=event, data=json.loads("\n".join(data)))
            entry_id, event, data = None, "message", []
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "id":
            entry_id = value
        elif field == "event":
            event = value
        elif field == "data":
            data.append(value)
    if data:
        yield SseFrame(id=entry_id, event=event, data=json.loads("\n".join(data)))


def describe(frame: SseFrame) -> str:
    """One human line for a frame: who said what, which tool was called or answered, or the new status."""
    data = frame.data
    if frame.event == "status":
        return f"-- status: {data.get('status')}"
    if frame.event == "error" or "error" in data and "author" not in data:
        return f"-- error: {data.get('detail') or data.get('error')}"
    author = data.get("author", "?")
    pieces = []
    for part in (data.get("content") or {}).get("parts") or []:
        if "text" in part:
            pieces.append(part["text"].strip())
        elif "functionCall" in part:
            call = part["functionCall"]
            pieces.append(f"calls {call.get('name')}({json.dumps(call.get('args', {}))})")
        elif "functionResponse" in part:
            answer = part["functionResponse"]
            pieces.append(f"{answer.get('name')} -> {json.dumps(answer.get('response', {}))}")
    if data.get("errorCode"):
        pieces.append(f"error {data['errorCode']}: {data.get('errorMessage')}")
    actions = data.get("actions") or {}
    if actions.get("stateDelta"):
        pieces.append(f"state {json.dumps(actions['stateDelta'])}")
    if actions.get("transferToAgent"):
        pieces.append(f"transfers to {actions['transferToAgent']}")
    if not pieces and actions.get("endOfAgent"):
        pieces.append("(done)")
    marker = " (partial)" if data.get("partial") else ""
    return f"[{author}]{marker} " + " | ".join(pieces)
