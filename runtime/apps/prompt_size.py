"""How big the model request is, and how much a summary would take off it (for events compaction).

Two measures, as the reference runtime takes them: the prompt's tokens (what the model last reported, else
the characters of the contents the agent would be sent, four to a token) decide when the token threshold is
reached; the JSON size of what each event puts in the request decides whether a summary is worth making.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from google.genai import types

from ..events import Event
from ..flows.compacted_history import Coverage, compaction_ranges

ContentsOf = Callable[[list[Event]], list[types.Content]]
"""What an agent would be sent for a history (``flows.contents.build_contents`` for one agent and branch)."""


def latest_compaction(events: list[Event]) -> Event | None:
    """The last compaction event (in history order) that no other one supersedes."""
    ranges = compaction_ranges(events)
    return events[ranges[-1][0]] if ranges else None


def latest_prompt_token_count(events: list[Event], agent_name: str, contents_of: ContentsOf) -> int | None:
    """The prompt size in tokens: the latest count a model reported for ``agent_name`` (any agent when it is
    ''), unless a summary came since (it replaced that prompt); else estimated from the contents."""
    for event in reversed(events):
        if event.actions.compaction is not None:
            break
        usage = event.usage_metadata
        if usage and usage.prompt_token_count is not None and (not agent_name or event.author == agent_name):
            return usage.prompt_token_count
    characters = sum(_characters(content) for content in contents_of(events))
    return characters // 4 if characters > 0 else None


def _characters(content: types.Content) -> int:
    """Characters of text, tool names, and tool arguments and responses as JSON."""
    total = 0
    for part in content.parts or []:
        if part.text:
            total += len(part.text)
        named = part.function_call or part.function_response
        if named is None:
            continue
        payload = part.function_call.args if part.function_call else part.function_response.response
        total += len(named.name or "") + (len(_json(payload)) if payload else 0)
    return total


def _json(value: Any) -> str:
    try:
        return json.dumps(value)
    except (TypeError, ValueError):  # a value json cannot write still has a size
        return str(value)


def is_range_worth_compacting(events: list[Event], to_compact: list[Event]) -> bool:
    """True when summarising ``to_compact`` can take more off the request than the last summary's size, the
    best guess of the size of the summary it would pay for (no summary yet: assume it helps)."""
    ranges = compaction_ranges(events)
    previous = _summary_size(events[ranges[-1][0]]) if ranges else 0
    return _chars_an_empty_summary_saves(events, ranges, to_compact) > previous


def _chars_an_empty_summary_saves(events: list[Event], ranges: list[tuple[int, float, float]],
                                  to_compact: list[Event]) -> int:
    """How much smaller the request (``flows.compacted_history.replace_compacted`` of ``events``) gets when
    a summary with no parts is added over ``to_compact``'s time range: the summaries it supersedes and the
    events it newly covers go, and it comes (nothing changes when a kept range contains it)."""
    start = min(event.timestamp for event in to_compact)
    end = max(event.timestamp for event in to_compact)
    if any((s < start and e >= end) or (s == start and e > end) for _, s, e in ranges):
        return 0
    superseded = sum(_summary_size(events[index]) for index, s, e in ranges if start <= s and e <= end)
    covers = Coverage([(s, e) for _, s, e in ranges]).covers
    covered = sum(_content_size(event.content) for event in events if event.actions.compaction is None
                  and start <= event.timestamp <= end and not covers(event.timestamp))
    return superseded + covered - _content_size(_EMPTY_SUMMARY)


_EMPTY_SUMMARY = types.Content(role="model", parts=[])


def _summary_size(compaction_event: Event) -> int:
    return _content_size(compaction_event.actions.compaction.compacted_content)


def _content_size(content: types.Content | None) -> int:
    """JSON characters ``content`` puts in a request."""
    return 0 if content is None else len(content.model_dump_json(exclude_none=True, fallback=str))
