"""RunConfig: per-run settings (streaming, model-call budget)."""

from __future__ import annotations

import enum
import logging
import sys
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

# Named after ADK's path (runtime.agents.run_config, which is this very module): logging configured for
# that name, and a test patching ``runtime.agents.run_config.logger``, both reach the warnings below.
logger = logging.getLogger("runtime.agents.run_config")


class StreamingMode(enum.Enum):
    """How the model's answer is delivered: in one piece (NONE) or as partial chunks (SSE)."""

    NONE = None
    SSE = "sse"
    BIDI = "bidi"


class RunConfig(BaseModel):
    """Settings for one ``run_async`` call.

    ``max_llm_calls`` bounds model calls per run; 0 or less means no bound (with a warning), and
    ``sys.maxsize`` or more is refused, as in ADK.
    """

    model_config = ConfigDict(extra="forbid")

    streaming_mode: StreamingMode = StreamingMode.NONE
    max_llm_calls: int = 500
    custom_metadata: dict[str, Any] | None = None

    @field_validator("max_llm_calls", mode="after")
    @classmethod
    def validate_max_llm_calls(cls, value: int) -> int:
        """Refuse ``sys.maxsize`` and above; warn that 0 or less leaves the run unbounded."""
        # A validator (not __init__) so a RunConfig read back from a record or a request is checked too;
        # pydantic reports the ValueError as a ValidationError, which is a ValueError as well.
        if value >= sys.maxsize:
            raise ValueError(f"max_llm_calls should be less than {sys.maxsize}.")
        if value <= 0:
            logger.warning(
                "max_llm_calls is less than or equal to 0. This will result in no enforcement on total number "
                "of llm calls that will be made for a run. This may not be ideal, as this could result in a "
                "never ending communication between the model and the agent in certain cases."
            )
        return value
