"""ConnectionLimits: how long and how much the HTTP server waits for from a client before giving up on it.

uvicorn bounds only the idle time between requests (``timeout_keep_alive``); its httptools protocol holds a
client that sends its headers slowly open for ever and accepts headers of any size. ``guarded_protocol`` is
that protocol with both bounded: a request whose headers take longer than ``header_timeout_s`` (from its first
byte, or from the connection for its first request) gets 408 and the connection is closed; headers larger than
``max_header_bytes`` get 431. The body's own deadline is the ASGI layer's (``api.access.limits.BodyLimits``), where
a JSON answer can still be given.
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass
from typing import Any

from runtime.errors import UsageError


@dataclass(frozen=True, kw_only=True)
class ConnectionLimits:
    """Limits on slow or oversized clients (``AGENTQ_HEADER_TIMEOUT`` ... ``AGENTQ_KEEPALIVE_TIMEOUT``)."""

    header_timeout_s: float = 10.0
    """The request line and headers must arrive within this of the request's first byte."""

    body_timeout_s: float = 30.0
    """The whole body must arrive within this of the headers (408 otherwise)."""

    max_header_bytes: int = 65_536
    """Larger request lines plus headers get 431."""

    keep_alive_s: float = 5.0
    """An idle keep-alive connection is closed after this long."""

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> ConnectionLimits:
        """The limits from ``AGENTQ_HEADER_TIMEOUT``, ``AGENTQ_BODY_TIMEOUT`` (seconds), ``AGENTQ_MAX_HEADER_BYTES``
        and ``AGENTQ_KEEPALIVE_TIMEOUT`` (seconds); unset ones keep their defaults."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for variable, name, kind in _VARIABLES:
            raw = env.get(variable, "").strip()
            if not raw:
                continue
            try:
                value = kind(raw)
            except ValueError:
                value = 0
            if value <= 0:
                raise UsageError(f"{variable} must be a number above 0, got {raw!r}")
            values[name] = value
        return cls(**values)

    def uvicorn_options(self) -> dict[str, Any]:
        """Keyword arguments for ``uvicorn.Config`` that apply these limits (``http`` included)."""
        return {"http": guarded_protocol(self), "timeout_keep_alive": self.keep_alive_s,
                "h11_max_incomplete_event_size": self.max_header_bytes}


_VARIABLES = [
    ("AGENTQ_HEADER_TIMEOUT", "header_timeout_s", float),
    ("AGENTQ_BODY_TIMEOUT", "body_timeout_s", float),
    ("AGENTQ_MAX_HEADER_BYTES", "max_header_bytes", int),
    ("AGENTQ_KEEPALIVE_TIMEOUT", "keep_alive_s", float),
]


def guarded_protocol(limits: ConnectionLimits) -> type[asyncio.Protocol] | str:
    """uvicorn's httptools protocol with ``limits`` on header time and size (h11 when httptools is missing:
    it bounds header size itself through ``h11_max_incomplete_event_size``)."""
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:  # pragma: no cover - httptools is a dependency
        return "h11"

    class GuardedHttpToolsProtocol(HttpToolsProtocol):
        """Bounds how long and how large a request's headers may be."""

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._awaiting_headers = True
            self._began = False  # a byte of the current request has arrived
            self._given_up = False
            self._header_bytes = 0
            self._header_timer: asyncio.TimerHandle | None = None
            self._start_header_timer()

        def connection_lost(self, exc: Exception | None) -> None:
            self._stop_header_timer()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if self._given_up:
                return  # lingering after a refusal: what the client still sends is read and dropped
            if self._awaiting_headers:
                self._header_bytes += len(data)
            super().data_received(data)
            if self._awaiting_headers and self._header_bytes > limits.max_header_bytes:
                self._give_up(431, f"the request headers exceed the limit of {limits.max_header_bytes} bytes")

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._awaiting_headers = True
            self._began = True
            self._header_bytes = 0
            self._start_header_timer()

        def on_headers_complete(self) -> None:
            self._awaiting_headers = self._began = False
            self._stop_header_timer()
            super().on_headers_complete()

        def _start_header_timer(self) -> None:
            if self._header_timer is None:
                self._header_timer = self.loop.call_later(limits.header_timeout_s, self._headers_too_slow)

        def _stop_header_timer(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _headers_too_slow(self) -> None:
            self._header_timer = None
            if self._awaiting_headers and not self._began:
                self.transport.close()  # a connection that never sent a request: nobody to answer
            elif self._awaiting_headers:
                self._give_up(408, f"the request headers did not arrive within {limits.header_timeout_s:g} seconds")

        def _give_up(self, status: int, detail: str) -> None:
            """Answer ``status`` (unless a response is under way) and close the connection.

            The close lingers: closing a socket with unread bytes makes the kernel reset the connection, which
            can destroy the answer before the client reads it. So the answer is sent with a FIN, and whatever
            the client still sends is read and dropped until it closes, or for at most ``LINGER_S``.
            """
            self._stop_header_timer()
            self._awaiting_headers = False
            self._given_up = True
            if self.transport.is_closing():
                return
            if self.cycle is not None and not self.cycle.response_complete:
                self.transport.close()
                return
            self.transport.write(_raw_response(status, detail))
            if not self.transport.can_write_eof():
                self.transport.close()
                return
            self.transport.write_eof()
            self.loop.call_later(LINGER_S, self.transport.close)

    return GuardedHttpToolsProtocol


LINGER_S = 2.0
"""How long a refused connection keeps reading (and dropping) what its client still sends."""

_REASONS = {408: b"Request Timeout", 431: b"Request Header Fields Too Large"}


def _raw_response(status: int, detail: str) -> bytes:
    error = "RequestTimeoutError" if status == 408 else "HeadersTooLargeError"
    body = json.dumps({"error": error, "detail": detail}).encode()
    head = (b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\nconnection: close\r\n\r\n"
            % (status, _REASONS[status], len(body)))
    return head + body
