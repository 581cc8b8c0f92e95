"""EventStreamResponse: a lean text/event-stream ASGI response with keepalives and disconnect detection.

Starlette's StreamingResponse (on an ASGI 2.3 server such as uvicorn) runs the body in a child task of an anyio
task group, and the old keepalive wrapper pumped frames through a queue from one more task: each frame crossed
two task switches before reaching the socket. Here the response task itself reads the frames and sends each one
as soon as it exists; one side task waits for the client to leave (and writes the keepalive comments meanwhile).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping

from starlette.background import BackgroundTask
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from api.streams.sse import KEEPALIVE, SSE_HEADERS


class EventStreamResponse(Response):
    """Stream ``frames`` (SSE frames as bytes); a comment line whenever none was sent for ``keepalive_s``.

    Ends when ``frames`` ends. When the client leaves, the frame source is cancelled where it waits (a
    blocking stream read is abandoned at once, not when its block times out). An exception from ``frames``
    propagates (the server closes the connection), as with StreamingResponse.
    """

    media_type = "text/event-stream"

    def __init__(self, frames: AsyncIterator[bytes], *, keepalive_s: float,
                 headers: Mapping[str, str] | None = None) -> None:
        self.frames = frames
        self.keepalive_s = keepalive_s
        self.status_code = 200
        self.background: BackgroundTask | None = None
        self.init_headers({**SSE_HEADERS, **(headers or {})})
        self._client_left = False
        self._last_sent = 0.0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        loop = asyncio.get_running_loop()
        await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
        self._last_sent = loop.time()
        streaming = asyncio.current_task()
        watcher = asyncio.create_task(self._watch(receive, send, streaming))
        try:
            async for data in self.frames:
                await send({"type": "http.response.body", "body": data, "more_body": True})
                self._last_sent = loop.time()
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except asyncio.CancelledError:
            if not self._client_left:
                raise
            streaming.uncancel()  # our own cancellation (the client left): the request ends normally
        finally:
            watcher.cancel()
            await _close(self.frames)
        if self.background is not None:
            await self.background()

    async def _watch(self, receive: Receive, send: Send, streaming: asyncio.Task) -> None:
        """Cancel the stream once the client has left."""
        try:
            await self._until_disconnect(receive, send)
        except OSError:  # the connection is gone: a server may raise this instead of reporting a disconnect
            pass
        self._client_left = True
        streaming.cancel()

    async def _until_disconnect(self, receive: Receive, send: Send) -> None:
        """Return when the client has left; meanwhile write a keepalive whenever nothing went out for a while."""
        loop = asyncio.get_running_loop()
        while True:
            try:
                # Cancelling a pending receive() is harmless (unlike cancelling an async generator's anext).
                async with asyncio.timeout_at(self._last_sent + self.keepalive_s):
                    if (await receive())["type"] == "http.disconnect":
                        return
            except TimeoutError:
                if loop.time() >= self._last_sent + self.keepalive_s:
                    self._last_sent = loop.time()
                    await send({"type": "http.response.body", "body": KEEPALIVE, "more_body": True})


async def _close(frames: AsyncIterator[bytes]) -> None:
    # A source left suspended at a yield (the send failed) is closed now rather than by the garbage collector.
    aclose = getattr(frames, "aclose", None)
    if aclose is not None:
        await aclose()
