"""The App's configuration objects: resumability and events compaction (``google.adk.apps._configs``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..errors import UsageError
from .base_events_summarizer import BaseEventsSummarizer
from .compaction import compact_for_token_threshold

if TYPE_CHECKING:
    from ..agents.base_agent import BaseAgent
    from ..events import Event
    from ..sessions import BaseSessionService, Session
    from .prompt_size import ContentsOf


class ResumabilityConfig(BaseModel):
    """Whether the app's invocations checkpoint their progress and pause on long-running calls.

    Resumable runs commit ``agent_state`` / ``end_of_agent`` events (workflow progress, finished agents), and a
    pending long-running call pauses the whole invocation. The worker always runs apps resumable.
    """

    is_resumable: bool = False


class EventsCompactionConfig(BaseModel):
    """When to summarise a session's older events, so the model is sent a bounded conversation.

    Two triggers, each a pair set together (at least one pair):

    - sliding window (``compaction_interval``, ``overlap_size``): after every ``compaction_interval`` new
      invocations, the events of those invocations and of the ``overlap_size`` invocations before them are
      summarised into one compaction event. Summaries that only overlap all stay in the request.
    - token threshold (``token_threshold``, ``event_retention_size``): before each model call and after each
      invocation, once the latest prompt (as the model reported it, else estimated at 4 characters a token)
      reaches ``token_threshold`` tokens, everything but the last ``event_retention_size`` events is summarised,
      the previous summary included, so the new summary replaces it. This keeps the request bounded.

    ``summarizer`` defaults to an ``LlmEventSummarizer`` on the model of the agent that first needs it.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    summarizer: BaseEventsSummarizer | None = None
    compaction_interval: int | None = Field(default=None, gt=0)
    """New invocations that trigger a sliding-window summary."""
    overlap_size: int | None = Field(default=None, ge=0)
    """Invocations before the new ones that the summary covers again, for continuity."""
    token_threshold: int | None = Field(default=None, gt=0)
    """Prompt size (tokens) at which a token-threshold summary is made."""
    event_retention_size: int | None = Field(default=None, ge=0)
    """Latest events a token-threshold summary leaves as they are."""

    @model_validator(mode="after")
    def _check_triggers(self) -> EventsCompactionConfig:
        if (self.token_threshold is None) != (self.event_retention_size is None):
            raise UsageError("token_threshold and event_retention_size must be set together.")
        if (self.compaction_interval is None) != (self.overlap_size is None):
            raise UsageError("compaction_interval and overlap_size must be set together.")
        if self.token_threshold is None and self.compaction_interval is None:
            raise UsageError("At least one compaction trigger must be configured: the token-threshold pair "
                             "(token_threshold, event_retention_size) or the sliding-window pair "
                             "(compaction_interval, overlap_size).")
        return self

    def has_token_threshold(self) -> bool:
        """True when the token-threshold pair is set."""
        return self.token_threshold is not None and self.event_retention_size is not None

    def has_sliding_window(self) -> bool:
        """True when the sliding-window pair is set."""
        return self.compaction_interval is not None and self.overlap_size is not None

    async def compact_before_model_call(self, *, session: Session, session_service: BaseSessionService,
                                        agent: BaseAgent, contents_of: ContentsOf) -> Event | None:
        """The token-threshold trigger before ``agent``'s model call (``compaction.compact_for_token_threshold``);
        the committed summary, if one was made.

        A method, so the flows reach the compaction through the config the context hands them: the apps sit
        above the agents (an App holds one), and the flows below them."""
        return await compact_for_token_threshold(self, session=session, session_service=session_service,
                                                 agent=agent, agent_name=agent.name, contents_of=contents_of)
