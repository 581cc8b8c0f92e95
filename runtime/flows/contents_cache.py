"""ContentsCache: ``build_contents`` for one agent and branch, converting only the events added since the last call.

A model step used to rebuild the request's contents from the whole session history (filtering, retelling
other agents' words, stripping client call ids: a copy per event with a client-made call id), so a long
invocation paid for its history again at every step. The history is append-only while an invocation runs;
the cache keeps what it built from the events it has seen and converts only the new ones. It starts over
when the history is anything but an extension of what it saw (checked by identity, event by event).

The answers-next-to-their-calls rearrangement is global, but history almost always already has that shape
(each answer right after the event whose calls it answers); the cache tracks whether it still does and only
then skips the rearrangement, which leaves such a history unchanged. Otherwise it rearranges, as
``build_contents`` does. The result is always exactly what ``build_contents`` returns.
"""

from __future__ import annotations

import operator

from google.genai import types

from ..events import Event
from .contents import arrange, retold, strip_client_ids


class ContentsCache:
    """The contents ``agent_name`` on ``branch`` is shown, kept up to date as the history grows."""

    def __init__(self, agent_name: str, branch: str | None):
        self._agent_name = agent_name
        self._branch = branch
        self._reset()

    def _reset(self) -> None:
        self._seen: list[Event] = []  # the history events converted so far, by identity
        self._shown: list[Event] = []  # those the agent is shown, retold
        self._contents: list[types.Content] = []  # the content sent for each shown event
        self._call_index: dict[str | None, int] = {}  # call id -> index of the shown event making the call
        self._in_order = True  # every answer follows its call: arranging would change nothing

    def build(self, events: list[Event]) -> list[types.Content]:
        """``build_contents(events, agent_name, branch)``; a new list on every call."""
        if not self._extends(events):
            self._reset()
        for event in events[len(self._seen):]:
            self._seen.append(event)
            self._add(event)
        if self._in_order:
            return list(self._contents)
        sent = {id(shown): content for shown, content in zip(self._shown, self._contents, strict=True)}
        return [_content_of(event, sent) for event in arrange(self._shown)]

    def _extends(self, events: list[Event]) -> bool:
        return len(events) >= len(self._seen) and all(map(operator.is_, self._seen, events))

    def _add(self, event: Event) -> None:
        shown = retold(event, self._agent_name, self._branch)
        if shown is None:
            return
        self._shown.append(shown)
        self._contents.append(strip_client_ids(shown.content))
        if self._in_order:
            self._in_order = self._keeps_order(shown, len(self._shown) - 1)

    def _keeps_order(self, shown: Event, index: int) -> bool:
        """False once the shown events stop being a sequence that ``arrange`` leaves as it is: an answer
        must come right after the (answer-less) event making its calls, answer nothing else, and be the only
        answer to them; call ids must be unique."""
        calls = shown.get_function_calls()
        responses = shown.get_function_responses()
        if responses:
            if calls or index == 0 or self._shown[index - 1].get_function_responses():
                return False
            return all(self._call_index.get(response.id, -1) == index - 1 for response in responses)
        for call in calls:
            if call.id in self._call_index:
                return False
            self._call_index[call.id] = index
        return True


def _content_of(event: Event, sent: dict[int, types.Content]) -> types.Content:
    """The content already made for a shown event; a merged answer event is new and converted here."""
    content = sent.get(id(event))
    return strip_client_ids(event.content) if content is None else content
