"""StreamAggregator: turn streamed GenerateContentResponse chunks into partial LlmResponses and one final one."""

from __future__ import annotations

from google.genai import types

from .llm_response import LlmResponse


class StreamAggregator:
    """Collects the chunks of one streamed model answer.

    ``add(chunk)`` returns the chunk's text as a partial LlmResponse (or None when the chunk carries no text);
    ``close()`` returns the single non-partial answer: consecutive text merged, every other part (function
    calls included) kept in arrival order, finish reason and usage from the last chunk that had them. The final
    answer goes through ``LlmResponse.create``, so a streamed and a non-streamed answer map errors the same way.
    """

    def __init__(self) -> None:
        self._parts: list[types.Part] = []
        self._saw_chunk = False
        self._saw_candidate = False
        self._candidate_fields: dict[str, object] = {}
        self._usage: types.GenerateContentResponseUsageMetadata | None = None
        self._prompt_feedback: types.GenerateContentResponsePromptFeedback | None = None

    def add(self, chunk: types.GenerateContentResponse) -> LlmResponse | None:
        """Absorb one chunk; return its text as a partial response, if it has any."""
        self._saw_chunk = True
        if chunk.usage_metadata is not None:
            self._usage = chunk.usage_metadata
        if chunk.prompt_feedback is not None:
            self._prompt_feedback = chunk.prompt_feedback
        if not chunk.candidates:
            return None
        candidate = chunk.candidates[0]
        self._saw_candidate = True
        for field in ("finish_reason", "finish_message", "grounding_metadata", "citation_metadata"):
            value = getattr(candidate, field)
            if value is not None:
                self._candidate_fields[field] = value
        parts = candidate.content.parts if candidate.content and candidate.content.parts else []
        texts = [part.model_copy() for part in parts if part.text and part.function_call is None]
        for part in parts:
            self._merge(part)
        if not texts:
            return None
        return LlmResponse(content=types.Content(role="model", parts=texts), partial=True)

    def _merge(self, part: types.Part) -> None:
        last = self._parts[-1] if self._parts else None
        if part.text is not None and last is not None and last.text is not None and (
            bool(last.thought) == bool(part.thought)
        ):
            last.text += part.text
            # Gemini may sign any text chunk; the signature must travel back with the merged part.
            if part.thought_signature and not last.thought_signature:
                last.thought_signature = part.thought_signature
            return
        if part.text == "" and not part.thought_signature:
            return
        self._parts.append(part.model_copy(deep=True))

    def close(self) -> LlmResponse:
        """The aggregated final (non-partial) answer."""
        if not self._saw_chunk:
            return LlmResponse(error_code="UNKNOWN_ERROR", error_message="the model stream ended without a chunk",
                               partial=False)
        candidates = None
        if self._saw_candidate:
            content = types.Content(role="model", parts=self._parts) if self._parts else None
            candidates = [types.Candidate(content=content, **self._candidate_fields)]
        aggregate = types.GenerateContentResponse(
            candidates=candidates, prompt_feedback=self._prompt_feedback, usage_metadata=self._usage
        )
        final = LlmResponse.create(aggregate)
        final.partial = False
        return final
