"""RetryConfig: how often and how patiently a failed node is tried again."""

from __future__ import annotations

import random
from typing import Any

from pydantic import BaseModel, Field, field_validator

from .errors import WorkflowConfigurationError


class RetryConfig(BaseModel):
    """Retry a node that raised: up to ``max_attempts`` attempts in all (default 5), waiting ``initial_delay``
    seconds (default 1.0) times ``backoff_factor`` (default 2.0) per attempt, at most ``max_delay`` (default 60),
    with up to ``jitter`` (default 1.0) of that delay added at random. ``exceptions`` names the exception
    classes to retry (names or classes; None: any Exception).

    On agentq the count holds across workers: an attempt lost with a killed worker counts as an attempt."""

    max_attempts: int | None = Field(default=None)
    initial_delay: float | None = Field(default=None)
    max_delay: float | None = Field(default=None)
    backoff_factor: float | None = Field(default=None)
    jitter: float | None = Field(default=None)
    exceptions: list[str] | None = Field(default=None)

    @field_validator("exceptions", mode="before")
    @classmethod
    def _names(cls, value: Any) -> list[str] | None:
        if value is None:
            return None
        names = []
        for item in value:
            if isinstance(item, str):
                names.append(item)
            elif isinstance(item, type) and issubclass(item, BaseException):
                names.append(item.__name__)
            else:
                raise WorkflowConfigurationError(
                    "exceptions must contain exception class names (str) or exception classes, "
                    f"got {type(item).__name__}: {item!r}")
        return names

    @property
    def attempts(self) -> int:
        """Attempts in all, the first included (0 or 1: no retry)."""
        return 5 if self.max_attempts is None else max(self.max_attempts, 1)

    def retries(self, exc: BaseException) -> bool:
        """True when ``exc`` (or one of its classes' bases) is one this config retries."""
        if not isinstance(exc, Exception):
            return False
        if self.exceptions is None:
            return True
        return any(klass.__name__ in self.exceptions for klass in type(exc).__mro__)

    def delay(self, attempt: int) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based)."""
        initial = 1.0 if self.initial_delay is None else self.initial_delay
        factor = 2.0 if self.backoff_factor is None else self.backoff_factor
        ceiling = 60.0 if self.max_delay is None else self.max_delay
        base = min(initial * factor ** (attempt - 1), ceiling)
        jitter = 1.0 if self.jitter is None else self.jitter
        return base + random.uniform(0, base * jitter) if jitter > 0 else base
