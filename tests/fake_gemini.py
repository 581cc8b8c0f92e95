"""FakeGemini: a local HTTP server speaking the Gemini REST wire format, so tests drive the real google-genai client.

Usage::

    with FakeGemini() as fake:
        fake.add(text_response("hello"), error_reply(429))
        llm = Gemini(base_url=fake.base_url, api_key="test-key")
        ...
        fake.requests[0].body["tools"]  # what the client sent, as JSON

It serves ``POST /{version}/models/{model}:generateContent`` (one JSON body) and
``POST /{version}/models/{model}:streamGenerateContent?alt=sse`` (``data: {json}\\r\\n\\r\\n`` frames).
Each request takes the next scripted reply; with the queue empty it asks ``responder``, and without one it answers
400 so a missing script fails loudly instead of hanging. Processes that cannot share the object (a worker) reach
the same server over HTTP: set ``AGENTQ_GEMINI_BASE_URL=fake.base_url`` and any ``GOOGLE_API_KEY``.
"""

from __future__ import annotations

import json
import re
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

STATUS_NAMES = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
                429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}

_PATH = re.compile(r"^/(?P<version>[^/]+)/(?P<resource>.+):(?P<method>generateContent|streamGenerateContent)$")


@dataclass(kw_only=True)
class RecordedRequest:
    """One request the fake received."""

    path: str
    model: str
    stream: bool
    body: dict[str, Any]
    headers: dict[str, str]


@dataclass(kw_only=True)
class Reply:
    """What the fake answers to one request: an HTTP error, one response body, or SSE chunks."""

    status: int = 200
    body: dict[str, Any] | None = None
    chunks: list[dict[str, Any]] | None = None


Scripted = dict[str, Any] | Reply | Callable[[RecordedRequest], "dict[str, Any] | Reply"]
"""A scripted answer: a GenerateContentResponse JSON dict, a Reply, or a callable computing one per request."""


def response(parts: list[dict[str, Any]], *, finish_reason: str | None = "STOP",
             usage: tuple[int, int] | None = (10, 5)) -> dict[str, Any]:
    """A GenerateContentResponse JSON with one candidate holding ``parts``; usage is (prompt, candidates) tokens."""
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish_reason is not None:
        candidate["finishReason"] = finish_reason
    body: dict[str, Any] = {"candidates": [candidate], "modelVersion": "fake-gemini"}
    if usage is not None:
        body["usageMetadata"] = {"promptTokenCount": usage[0], "candidatesTokenCount": usage[1],
                                 "totalTokenCount": usage[0] + usage[1]}
    return body


def text_response(text: str, **kwargs: Any) -> dict[str, Any]:
    """A response whose answer is ``text``."""
    return response([{"text": text}], **kwargs)


def function_call_response(*calls: tuple[str, dict[str, Any]], **kwargs: Any) -> dict[str, Any]:
    """A response calling functions, each given as (name, args); like the real API, the calls carry no id."""
    return response([{"functionCall": {"name": name, "args": args}} for name, args in calls], **kwargs)


def error_body(code: int, message: str | None = None, status: str | None = None) -> dict[str, Any]:
    """Google's JSON error body."""
    return {"error": {"code": code, "message": message or f"fake error {code}",
                      "status": status or STATUS_NAMES.get(code, "UNKNOWN")}}


def error_reply(code: int, message: str | None = None, status: str | None = None) -> Reply:
    """An HTTP error answer with Google's JSON error body."""
    return Reply(status=code, body=error_body(code, message, status))


def stream_reply(*chunks: dict[str, Any]) -> Reply:
    """An SSE answer sending each chunk (a response JSON, or an error_body for a mid-stream error) as a frame."""
    return Reply(chunks=list(chunks))


def conversation_responder(turns: list[Any]) -> Callable[[RecordedRequest], dict[str, Any] | Reply]:
    """A responder answering the N-th model turn of a conversation with ``turns[N]`` (N = model turns in the request).

    Like ScriptedLlm it depends only on the conversation sent, so a resumed invocation in another process gets the
    same answers. A turn is a str (text), a (name, args) tuple (function call), a list of those, a response dict
    or a Reply. Past the end of the script it answers 400.
    """

    def respond(request: RecordedRequest) -> dict[str, Any] | Reply:
        index = sum(1 for content in request.body.get("contents", []) if content.get("role") == "model")
        if index >= len(turns):
            return error_reply(400, f"conversation_responder has {len(turns)} turns; model turn #{index + 1} has none")
        turn = turns[index]
        if isinstance(turn, dict | Reply):
            return turn
        items = turn if isinstance(turn, list) else [turn]
        return response([{"text": item} if isinstance(item, str) else {"functionCall": {"name": item[0], "args": item[1]}}
                         for item in items])

    return respond


class FakeGemini:
    """A threaded local Gemini REST server with a queue of scripted replies and a log of the requests."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.requests: list[RecordedRequest] = []
        self.responder: Callable[[RecordedRequest], dict[str, Any] | Reply] | None = None
        self._queue: deque[Scripted] = deque()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer((host, 0), _handler_class(self))
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """The URL to pass as ``Gemini(base_url=...)`` or ``AGENTQ_GEMINI_BASE_URL``."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def add(self, *replies: Scripted) -> None:
        """Queue answers for the next requests, in order."""
        with self._lock:
            self._queue.extend(replies)

    @property
    def pending(self) -> int:
        """How many scripted replies are still unused."""
        with self._lock:
            return len(self._queue)

    def start(self) -> FakeGemini:
        """Serve in a daemon thread."""
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), name="fake-gemini",
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeGemini:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _answer(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            scripted: Scripted | None = self._queue.popleft() if self._queue else self.responder
            number = len(self.requests)
        if scripted is None:
            return error_reply(400, f"FakeGemini has no scripted reply for request #{number}", "FAILED_PRECONDITION")
        if callable(scripted):
            scripted = scripted(request)
        return scripted if isinstance(scripted, Reply) else Reply(body=scripted)


def _handler_class(fake: FakeGemini) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            path, _, query = self.path.partition("?")
            match = _PATH.match(path)
            if match is None:
                self._send_json(404, error_body(404, f"FakeGemini does not serve {path!r}"))
                return
            length = int(self.headers.get("Content-Length") or 0)
            stream = match["method"] == "streamGenerateContent"
            request = RecordedRequest(
                path=self.path, model=match["resource"].rsplit("/", 1)[-1], stream=stream,
                body=json.loads(self.rfile.read(length) or b"{}"), headers={k.lower(): v for k, v in self.headers.items()},
            )
            reply = fake._answer(request)
            if reply.status != 200:
                self._send_json(reply.status, reply.body or error_body(reply.status))
            elif stream and "alt=sse" in query:
                self._send_sse(reply.chunks if reply.chunks is not None else [reply.body or {}])
            elif reply.chunks is not None:
                # Without alt=sse the real API answers one JSON array of the chunks.
                self._send_json(200, reply.chunks)
            else:
                self._send_json(200, [reply.body] if stream else reply.body)

        def _send_json(self, status: int, payload: Any) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=UTF-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _send_sse(self, chunks: list[dict[str, Any]]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            for chunk in chunks:
                self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\r\n\r\n")
                self.wfile.flush()

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (http.server's signature)
            pass

    return Handler
