"""Request body limits: a pure ASGI middleware reads every request body before anything parses it.

It refuses a body that is too large (413), one whose JSON nests too deep (400) and one the client takes too
long to send (408), each with a JSON body naming the limit, so no route, model or store ever sees them.
"""

from __future__ import annotations

import asyncio
import json
import re
from itertools import accumulate

from starlette.types import ASGIApp, Message, Receive, Scope, Send

MAX_JSON_DEPTH = 64
"""The deepest nesting of objects and arrays any request body may have.

pydantic's JSON parser gives up at about 200 levels and its serializer at about 255; what a body carries is
stored a few levels deeper than it was sent (an event wraps ``stateDelta`` in ``actions``, a record wraps a
message). Refusing more than 64 levels at the door keeps everything accepted readable back, with room to spare.
"""

DEFAULT_BODY_TIMEOUT_S = 30.0
"""How long a client may take to send a whole request body, counted from the end of its headers."""

# A JSON string (escapes included): its brackets are text, not nesting.
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_A_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")
_NESTING_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


def json_depth(raw: bytes) -> int:
    """How deep the objects and arrays of JSON text ``raw`` nest (0 for a scalar); brackets in strings do not count."""
    brackets = _STRING.sub(b"", raw).translate(None, _NOT_A_BRACKET)
    return max(accumulate(_NESTING_STEP[b] for b in brackets), default=0)


def nests_deeper_than(raw: bytes, limit: int) -> bool:
    """True when ``raw`` nests deeper than ``limit``; a body with few brackets is let through without a scan."""
    if raw.count(b"{") + raw.count(b"[") <= limit:  # an upper bound on the depth, counted at C speed
        return False
    return json_depth(raw) > limit


class BodyLimits:
    """Read each request body (within ``read_timeout_s``) and check its size and JSON depth, then replay it.

    A declared Content-Length over ``max_bytes`` is refused before a byte of the body is read; a chunked body
    is refused as soon as it passes the limit. Requests without a body pass straight through, so streaming
    routes keep their own ``receive``.
    """

    def __init__(self, app: ASGIApp, *, max_bytes: int, max_depth: int = MAX_JSON_DEPTH,
                 read_timeout_s: float = DEFAULT_BODY_TIMEOUT_S):
        self.app = app
        self.max_bytes = max_bytes
        self.max_depth = max_depth
        self.read_timeout_s = read_timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not _has_body(scope):
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.max_bytes:
            await self._refuse(send, 413, "PayloadTooLargeError",
                               f"request body of {declared} bytes exceeds the limit of {self.max_bytes} bytes")
            return
        try:
            async with asyncio.timeout(self.read_timeout_s):
                messages, size = await self._read(receive)
        except TimeoutError:
            await self._refuse(send, 408, "RequestTimeoutError",
                               f"the request body did not arrive within {self.read_timeout_s:g} seconds")
            return
        if size > self.max_bytes:
            await self._refuse(send, 413, "PayloadTooLargeError",
                               f"request body of {size} bytes exceeds the limit of {self.max_bytes} bytes")
            return
        body = b"".join(message.get("body", b"") for message in messages)
        if nests_deeper_than(body, self.max_depth):
            await self._refuse(send, 400, "JsonTooDeepError",
                               f"the request body nests JSON {json_depth(body)} levels deep; "
                               f"the limit is {self.max_depth} levels", close=False)
            return
        await self.app(scope, _replay(messages, receive), send)

    async def _read(self, receive: Receive) -> tuple[list[Message], int]:
        """The body's messages and size; stops early once the size passes the limit."""
        messages: list[Message] = []
        size = 0
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                return messages, size  # the client left: the app sees the disconnect as it would have
            size += len(message.get("body", b""))
            if size > self.max_bytes or not message.get("more_body", False):
                return messages, size

    @staticmethod
    async def _refuse(send: Send, status: int, error: str, detail: str, *, close: bool = True) -> None:
        # ``close``: the body was not read to its end, so the connection cannot carry another request.
        body = json.dumps({"error": error, "detail": detail}).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        if close:
            headers.append((b"connection", b"close"))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def _has_body(scope: Scope) -> bool:
    for name, value in scope.get("headers", []):
        if name == b"transfer-encoding" or (name == b"content-length" and value.strip() not in (b"", b"0")):
            return True
    return False


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def _replay(messages: list[Message], receive: Receive) -> Receive:
    pending = list(messages)

    async def replay() -> Message:
        return pending.pop(0) if pending else await receive()

    return replay
