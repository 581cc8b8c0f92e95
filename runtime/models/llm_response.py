"""LlmResponse: one (possibly partial) answer from a model."""

from __future__ import annotations

from typing import Any

from google.genai import types
from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class LlmResponse(BaseModel):
    """A model's answer; an Event copies these fields."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    content: types.Content | None = None
    grounding_metadata: types.GroundingMetadata | None = None
    partial: bool | None = None
    turn_complete: bool | None = None
    finish_reason: types.FinishReason | None = None
    error_code: str | None = None
    error_message: str | None = None
    interrupted: bool | None = None
    custom_metadata: dict[str, Any] | None = None
    usage_metadata: types.GenerateContentResponseUsageMetadata | None = None
    avg_logprobs: float | None = None
    citation_metadata: types.CitationMetadata | None = None

    @staticmethod
    def create(response: types.GenerateContentResponse) -> LlmResponse:
        """Translate a google-genai response (its first candidate) into an LlmResponse."""
        usage = response.usage_metadata
        if response.candidates:
            candidate = response.candidates[0]
            if candidate.content and candidate.content.parts:
                return LlmResponse(
                    content=candidate.content,
                    grounding_metadata=candidate.grounding_metadata,
                    usage_metadata=usage,
                    finish_reason=candidate.finish_reason,
                    citation_metadata=candidate.citation_metadata,
                    avg_logprobs=candidate.avg_logprobs,
                )
            return LlmResponse(
                error_code=str(candidate.finish_reason.value if candidate.finish_reason else "UNKNOWN_ERROR"),
                error_message=candidate.finish_message or "the model returned no content",
                finish_reason=candidate.finish_reason,
                usage_metadata=usage,
            )
        if response.prompt_feedback:
            feedback = response.prompt_feedback
            return LlmResponse(
                error_code=str(feedback.block_reason.value if feedback.block_reason else "BLOCKED"),
                error_message=feedback.block_reason_message or "the prompt was blocked",
                usage_metadata=usage,
            )
        return LlmResponse(error_code="UNKNOWN_ERROR", error_message="the model returned no candidates",
                           usage_metadata=usage)
