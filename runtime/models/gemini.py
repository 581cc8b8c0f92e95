"""Gemini: the BaseLlm that calls Google's Gemini models (Gemini API or Vertex AI) through google-genai."""

from __future__ import annotations

import asyncio
import importlib
import os
from collections.abc import AsyncGenerator

from google import genai
from google.auth.exceptions import DefaultCredentialsError
from google.genai import errors, types
from pydantic import Field, PrivateAttr

from ..errors import ModelNotConfiguredError, RetryableModelError
from .base_llm import BaseLlm
from .client_cache import PerLoopCache
from .llm_request import LlmRequest
from .llm_response import LlmResponse
from .stream_aggregator import StreamAggregator

BASE_URL_ENV = "AGENTQ_GEMINI_BASE_URL"
"""Environment variable that points every Gemini instance without ``base_url`` at another endpoint."""

RETRYABLE_STATUS_CODES = frozenset({408, 429, 500, 502, 503, 504})
"""HTTP codes that mean "try again later": they raise RetryableModelError instead of making an error event."""

_NO_CLIENT_RETRIES = types.HttpRetryOptions(attempts=1)
# The client must not hide a 429 behind its own backoff (newer google-genai versions may retry by default).
_NO_AFC = types.AutomaticFunctionCallingConfig(disable=True)
# The agent runs the tools; the client must only report the calls.


def _transport_errors() -> tuple[type[Exception], ...]:
    """Connection failures and timeouts of whichever HTTP library google-genai uses (httpx, or its fork httpx2)."""
    found = []
    for name in ("httpx", "httpx2"):
        try:
            found.append(importlib.import_module(name).TransportError)
        except ImportError:
            continue
    return tuple(found)


_TRANSPORT_ERRORS = _transport_errors()
_EMPTY_CONVERSATION_TURN = "Follow the system instruction."
_CONTINUE_TURN = "Continue with the task; stop or summarise when nothing is left to do."


class Gemini(BaseLlm):
    """Gemini models via ``google.genai.Client``, non-streaming and streaming.

    Credentials come from the environment the way google-genai reads them (``GOOGLE_API_KEY`` /
    ``GEMINI_API_KEY``, or ``GOOGLE_GENAI_USE_VERTEXAI`` with ``GOOGLE_CLOUD_PROJECT`` and
    ``GOOGLE_CLOUD_LOCATION``). Rate limits and overload (429, 5xx) raise ``RetryableModelError``; other API
    errors become an LlmResponse with ``error_code``/``error_message``, which the agent turns into an error event.
    """

    model: str = "gemini-2.5-flash"
    base_url: str | None = None
    """Endpoint override (a proxy, or a local fake in tests); else ``$AGENTQ_GEMINI_BASE_URL``, else Google's."""
    api_key: str | None = Field(default=None, repr=False, exclude=True)
    """API key; None lets google-genai read the environment."""
    http_options: types.HttpOptions | None = None
    """More client options (headers, timeout, async_client_args, ...); without ``retry_options`` the client makes
    a single attempt, because the worker retries RetryableModelError with its own backoff."""

    _clients: PerLoopCache[genai.Client] = PrivateAttr(default_factory=PerLoopCache)

    @classmethod
    def supported_models(cls) -> list[str]:
        return [
            r"gemini-.*",
            r"projects/.+/locations/.+/endpoints/.+",
            r"projects/.+/locations/.+/publishers/google/models/gemini.+",
        ]

    @property
    def api_client(self) -> genai.Client:
        """The google-genai client of the running event loop, created on first use.

        One client per loop: httpx connection pools belong to the loop that opened them, and a worker may run
        several loops (one per thread) sharing this instance through an agent.
        """
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        client = self._clients.get(loop)
        if client is None:
            client = self._clients.put(loop, self._make_client())
        return client

    def _make_client(self) -> genai.Client:
        options = self.http_options.model_copy() if self.http_options else types.HttpOptions()
        options.base_url = self.base_url or options.base_url or os.environ.get(BASE_URL_ENV) or None
        options.retry_options = options.retry_options or _NO_CLIENT_RETRIES
        try:
            return genai.Client(api_key=self.api_key, http_options=options)
        except ValueError as exc:
            raise ModelNotConfiguredError(
                f"cannot create a Gemini client for model {self.model!r}: {exc} (set GOOGLE_API_KEY, or "
                "GOOGLE_GENAI_USE_VERTEXAI=1 with GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION)"
            ) from exc

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        model = llm_request.model or self.model
        contents = _ensure_user_turn(llm_request.contents)
        update: dict = {"automatic_function_calling": _NO_AFC}
        if llm_request.config.labels and not self.api_client.vertexai:
            update["labels"] = None  # labels are a Vertex AI feature; the Gemini API (API key) does not take them
        config = llm_request.config.model_copy(update=update)
        models = self.api_client.aio.models
        try:
            if not stream:
                response = await models.generate_content(model=model, contents=contents, config=config)
                yield LlmResponse.create(response)
                return
            aggregator = StreamAggregator()
            async for chunk in await models.generate_content_stream(model=model, contents=contents, config=config):
                partial = aggregator.add(chunk)
                if partial is not None:
                    yield partial
            yield aggregator.close()
        except errors.APIError as exc:
            yield _error_response(model, exc)
        except DefaultCredentialsError as exc:  # Vertex AI looks for credentials only when it first sends
            raise ModelNotConfiguredError(f"no Google Cloud credentials for Gemini model {model!r}: {exc}") from exc
        except _TRANSPORT_ERRORS as exc:
            raise RetryableModelError(
                f"Gemini model {model!r} unreachable: {type(exc).__name__}: {exc}", code="UNAVAILABLE"
            ) from exc


def _error_response(model: str, exc: errors.APIError) -> LlmResponse:
    """An error answer for a client error; raises RetryableModelError for a transient one."""
    message = exc.message or str(exc)
    if exc.code in RETRYABLE_STATUS_CODES:
        raise RetryableModelError(
            f"Gemini model {model!r} answered {exc.code} {exc.status}: {message}", code=str(exc.code)
        ) from exc
    return LlmResponse(error_code=str(exc.code) if exc.code else (exc.status or "UNKNOWN_ERROR"),
                       error_message=message)


def _ensure_user_turn(contents: list[types.Content]) -> list[types.Content]:
    """The contents to send: Gemini refuses an empty conversation and expects the user to speak last."""
    if not contents:
        return [types.Content(role="user", parts=[types.Part(text=_EMPTY_CONVERSATION_TURN)])]
    if contents[-1].role != "user":
        return [*contents, types.Content(role="user", parts=[types.Part(text=_CONTINUE_TURN)])]
    return contents

