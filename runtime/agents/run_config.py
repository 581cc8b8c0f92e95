"""RunConfig: per-run settings (streaming, model-call budget)."""

from __future__ import annotations

import enum
from typing import Any

from pydantic import BaseModel, ConfigDict


class StreamingMode(enum.Enum):
    """How the model's answer is delivered: in one piece (NONE) or as partial chunks (SSE)."""

    NONE = None
    SSE = "sse"
    BIDI = "bidi"


class RunConfig(BaseModel):
    """Settings for one ``run_async`` call.

    ``max_llm_calls`` bounds model calls per run; 0 or less means no bound.
    """

    model_config = ConfigDict(extra="forbid")

    streaming_mode: StreamingMode = StreamingMode.NONE
    max_llm_calls: int = 500
    custom_metadata: dict[str, Any] | None = None
