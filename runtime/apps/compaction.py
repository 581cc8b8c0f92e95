"""Events compaction: summarise a session's older events so the model is sent a bounded conversation.

As ADK 2.x does it, configured by ``App(events_compaction_config=EventsCompactionConfig(...))``:

- after each invocation (the Runner calls ``compact_after_invocation``): the token-threshold trigger first;
  when it made no summary, the sliding window;
- before each model call of an LlmAgent (``flows.llm_flow`` calls ``compact_for_token_threshold`` through
  ``EventsCompactionConfig.compact_before_model_call``): the token-threshold trigger, measured for that
  agent and branch.

A summary is an Event (author ``user``, its own invocation id) whose ``actions.compaction`` holds the range
and the summarised content. It is committed through the session service like any event, so it is stored,
on the session's stream, and survives a crash; the summarised events stay in the history, and the model is
shown the summary instead of them (``flows.compacted_history``). A summarizer that fails leaves the history
as it is: the invocation does not fail for it.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ..agents.llm_agent import LlmAgent
from ..errors import UsageError
from ..events import Event, new_event_id
from ..flows.contents_cache import cached_contents
from .base_events_summarizer import BaseEventsSummarizer
from .compaction_ranges import longest_self_contained_prefix, safe_split_index
from .invocation_spans import InvocationSpans
from .llm_event_summarizer import LlmEventSummarizer
from .prompt_size import ContentsOf, is_range_worth_compacting, latest_compaction, latest_prompt_token_count

if TYPE_CHECKING:
    from ..agents.base_agent import BaseAgent
    from ..sessions import BaseSessionService, Session
    from ._configs import EventsCompactionConfig

log = logging.getLogger(__name__)


async def compact_after_invocation(config: EventsCompactionConfig, *, session: Session,
                                   session_service: BaseSessionService, agent: BaseAgent,
                                   scratch: dict) -> Event | None:
    """Summarise after an invocation when a trigger says so; the committed summary, if one was made.

    ``agent`` is the root agent (its model summarises when the config names no summarizer); ``scratch`` is
    where what is derived from the history is kept between calls (``InvocationRun.contents``).
    """
    if not session.events:
        return None
    if config.has_token_threshold():
        # the whole history's contents, in no agent's view, estimate the prompt when no model reported it
        contents_of = cached_contents(scratch, "", None).build
        summary = await compact_for_token_threshold(config, session=session, session_service=session_service,
                                                    agent=agent, agent_name="", contents_of=contents_of)
        if summary is not None:
            return summary
    if not config.has_sliding_window():
        return None
    to_compact = _sliding_window(session.events, config.compaction_interval, config.overlap_size,
                                 InvocationSpans.of(scratch))
    return await _summarize_and_commit(config, session, session_service, agent, to_compact)


async def compact_for_token_threshold(config: EventsCompactionConfig, *, session: Session,
                                      session_service: BaseSessionService, agent: BaseAgent, agent_name: str,
                                      contents_of: ContentsOf) -> Event | None:
    """Once the prompt of ``agent_name`` (any agent: '') reaches the threshold, summarise all but the last
    ``event_retention_size`` events, the previous summary included; the committed summary, if one was made.
    Before a model call, ``agent`` is the calling agent and ``contents_of`` builds what it is shown."""
    events = session.events
    tokens = latest_prompt_token_count(events, agent_name, contents_of)
    if tokens is None or tokens < config.token_threshold:
        return None
    to_compact = _token_threshold_range(events, config.event_retention_size)
    return await _summarize_and_commit(config, session, session_service, agent, to_compact)


def _token_threshold_range(events: list[Event], retention: int) -> list[Event]:
    """The events since the latest summary but the last ``retention`` (never splitting a call from its
    answer), led by that summary as a model turn so the new summary supersedes it."""
    previous = latest_compaction(events)
    since = previous.actions.compaction.end_timestamp if previous is not None else 0.0
    candidates = [e for e in events if e.actions.compaction is None and e.timestamp > since]
    if len(candidates) <= retention:
        return []
    to_compact = candidates if retention == 0 else candidates[:safe_split_index(candidates, retention)]
    to_compact = longest_self_contained_prefix(to_compact, all_events=events)
    if not to_compact or previous is None:
        return to_compact
    compaction = previous.actions.compaction
    seed = Event(timestamp=compaction.start_timestamp, author="model", content=compaction.compacted_content,
                 branch=previous.branch, invocation_id=new_event_id())
    return [seed, *to_compact]


def _sliding_window(events: list[Event], interval: int, overlap: int, spans: InvocationSpans) -> list[Event]:
    """Once ``interval`` invocations ended after the last summary, the events from ``overlap`` invocations
    before the first of them to the last of them (no earlier summaries; never ending inside a call)."""
    spans.update(events)
    new = spans.ended_since_last_summary()
    if len(new) < interval:
        return []
    invocations = list(spans.latest)
    first = invocations[max(0, invocations.index(new[0]) - overlap)]
    window = [e for e in events[spans.first[first]:spans.last[new[-1]] + 1] if e.actions.compaction is None]
    return longest_self_contained_prefix(window, all_events=events)


async def _summarize_and_commit(config: EventsCompactionConfig, session: Session,
                                session_service: BaseSessionService, agent: BaseAgent,
                                to_compact: list[Event]) -> Event | None:
    """Summarise ``to_compact`` and commit the summary, unless it cannot make the request smaller."""
    if not to_compact or not is_range_worth_compacting(session.events, to_compact):
        return None
    summarizer = ensure_summarizer(config, agent)
    try:
        summary = await summarizer.maybe_summarize_events(events=to_compact)
    except Exception:  # the full history still serves: a failed summary must not end the turn
        log.warning("session %s: event compaction failed; continuing with the uncompacted history",
                    session.id, exc_info=True)
        return None
    if summary is None:
        return None
    await session_service.append_event(session, summary)
    log.debug("session %s: %d events compacted", session.id, len(to_compact))
    return summary


def ensure_summarizer(config: EventsCompactionConfig, agent: BaseAgent) -> BaseEventsSummarizer:
    """The config's summarizer; when it has none, an LlmEventSummarizer on ``agent``'s model, kept in the
    config from then on. UsageError when ``agent`` is not an LlmAgent."""
    if config.summarizer is None:
        if not isinstance(agent, LlmAgent):
            raise UsageError(f"events compaction needs a summarizer: agent {agent.name!r} is not an LlmAgent, so "
                             "it has no model to summarise with; set EventsCompactionConfig(summarizer=...)")
        config.summarizer = LlmEventSummarizer(llm=agent.canonical_model)
    return config.summarizer
