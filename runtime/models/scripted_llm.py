"""ScriptedLlm: a deterministic offline model for tests, benchmarks and the offline demo.

It answers from the conversation it is sent, never from hidden counters, so a worker that resumes an invocation
in another process gets the same answers as the worker that started it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable
from typing import Any

from google.genai import types
from pydantic import Field

from .base_llm import BaseLlm
from .llm_request import LlmRequest
from .llm_response import LlmResponse

Turn = Any
"""One scripted answer: str (text), types.FunctionCall, list of FunctionCalls, types.Content, LlmResponse,
or a callable(LlmRequest) returning any of those."""


def call(name: str, **args: Any) -> types.FunctionCall:
    """Shorthand for a scripted function call."""
    return types.FunctionCall(name=name, args=args)


class ScriptedLlm(BaseLlm):
    """Answers the N-th model call of a conversation with ``turns[N]``.

    N is the number of model turns already in the request's contents, so the script is a pure function of
    the conversation. Past the end of the script the model returns an error response saying so.
    With ``stream=True`` a text answer is sent as word chunks (``partial=True``) and then the full text.
    ``latency`` (seconds) simulates thinking time without using the CPU.
    """

    model: str = "scripted"
    turns: list[Turn] = Field(default_factory=list)
    responder: Callable[[LlmRequest], Turn] | None = None
    latency: float = 0.0
    chunk_words: int = 1

    def pick_turn(self, llm_request: LlmRequest) -> Turn:
        """The scripted answer for this request."""
        if self.responder is not None:
            return self.responder(llm_request)
        index = sum(1 for content in llm_request.contents if content.role == "model")
        if index >= len(self.turns):
            return LlmResponse(
                error_code="SCRIPT_EXHAUSTED",
                error_message=f"ScriptedLlm has {len(self.turns)} turns; model call #{index + 1} has none",
            )
        return self.turns[index]

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        if self.latency:
            await asyncio.sleep(self.latency)
        turn = self.pick_turn(llm_request)
        fresh = self.responder is not None  # a responder builds a new answer per call: no need to copy it
        if callable(turn) and not isinstance(turn, types.FunctionCall | LlmResponse):
            turn, fresh = turn(llm_request), True
        response = turn if fresh and isinstance(turn, LlmResponse) else to_llm_response(turn)
        text = response.content.parts[0].text if _is_plain_text(response) else None
        if stream and text:
            words = text.split(" ")
            for start in range(0, len(words), self.chunk_words):
                chunk = " ".join(words[start : start + self.chunk_words])
                if start + self.chunk_words < len(words):
                    chunk += " "
                yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=chunk)]), partial=True)
        yield response


def _is_plain_text(response: LlmResponse) -> bool:
    parts = response.content.parts if response.content and response.content.parts else []
    return len(parts) == 1 and parts[0].text is not None


def to_llm_response(turn: Turn) -> LlmResponse:
    """Normalise a scripted turn to an LlmResponse."""
    if isinstance(turn, LlmResponse):
        return turn.model_copy(deep=True)
    if isinstance(turn, str):
        return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=turn)]))
    if isinstance(turn, types.FunctionCall):
        turn = [turn]
    if isinstance(turn, list):
        parts = [
            types.Part(function_call=item.model_copy()) if isinstance(item, types.FunctionCall) else types.Part(text=item)
            for item in turn
        ]
        return LlmResponse(content=types.Content(role="model", parts=parts))
    if isinstance(turn, types.Content):
        return LlmResponse(content=turn.model_copy(deep=True))
    raise TypeError(f"ScriptedLlm cannot answer with {type(turn).__name__!r}")
