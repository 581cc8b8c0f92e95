"""ContentsCache: ``build_contents`` for one agent and branch, converting only the events added since the last call.

A model step used to rebuild the request's contents from the whole session history (filtering, retelling
other agents' words, stripping client call ids: a copy per event with a client-made call id), so a long
invocation paid for its history again at every step. The history is append-only; the cache keeps what it
built from the events it has seen and converts only the new ones. It starts over when the history is
anything but an extension of what it saw (checked event by event), and builds afresh from the live events
when a rewind comes (it takes back events already shown; see ``events.rewinds``). The Runner keeps these
caches where the session service says (``BaseSessionService.history_scratch``): for one invocation, or, with
a service that caches parsed histories, across the session's invocations.

The answers-next-to-their-calls rearrangement is global, but history almost always already has that shape
(each answer right after the event whose calls it answers); the cache tracks whether it still does and only
then skips the rearrangement, which leaves such a history unchanged. Otherwise it rearranges, as
``build_contents`` does. The result is always exactly what ``build_contents`` returns.
"""

from __future__ import annotations

from google.genai import types

from .._lent import LentList, only_holder
from ..events import Event
from ..events.rewinds import is_rewind, live_events
from .compacted_history import is_compaction
from .compacted_view import CompactedView
from .contents import arrange, kept_events, retold, strip_client_ids


class ContentsCache:
    """The contents ``agent_name`` on ``branch`` is shown, kept up to date as the history grows."""

    def __init__(self, agent_name: str, branch: str | None):
        self._agent_name = agent_name
        self._branch = branch
        self._lent_length: int | None = None  # the length of the contents lent to the last request, if lent
        self._reset()

    def _reset(self) -> None:
        self._seen: list[Event] = []  # the history events converted so far, by identity
        self._shown: list[Event] = []  # those the agent is shown, retold
        self._contents: list[types.Content] = []  # the content sent for each shown event
        self._call_index: dict[str | None, int] = {}  # call id -> index of the shown event making the call
        self._in_order = True  # every answer follows its call: arranging would change nothing
        self._view: CompactedView | None = None  # set while the history holds a summary for this agent

    def build(self, events: list[Event]) -> list[types.Content]:
        """``build_contents(events, agent_name, branch)``, in a list the caller may read and append to (and
        keep: the cache then uses another one)."""
        self._take_back()
        if not self._extends(events):
            self._reset()
        start = len(self._seen)
        if any(map(is_rewind, events[start:])):  # it takes back events shown already: start from the live ones
            self._rebuild(events)
        elif self._view is not None or any(map(is_compaction, events[start:])):
            self._extend_compacted(events, start)
        else:
            for event in events[start:]:
                self._seen.append(event)
                self._add(event)
        if self._in_order:
            return self._lend()
        sent = {id(shown): content for shown, content in zip(self._shown, self._contents, strict=True)}
        return [_content_of(event, sent) for event in arrange(self._shown)]

    def _lend(self) -> LentList:
        # The request gets the cache's own list, not a copy (see runtime._lent): in a long session a copy per
        # model call cost more than everything else the call does.
        if not isinstance(self._contents, LentList):
            self._contents = LentList(self._contents)
        self._lent_length = len(self._contents)
        return self._contents

    def _take_back(self) -> None:
        """Make the list lent to the last request the cache's own again, as it was lent."""
        length = self._lent_length
        if length is None:
            return
        self._lent_length = None
        free = only_holder(self, "_contents")  # (before a local name holds it too)
        lent = self._contents
        if lent.changed:  # its borrower edited it in place: convert the shown events again
            self._contents = [strip_client_ids(shown.content) for shown in self._shown]
        elif free:
            lent.truncate(length)  # what the borrower appended (a model adding a turn)
        else:  # a request still holds it: leave it to that one
            self._contents = LentList(lent)
            self._contents.truncate(length)

    def _extends(self, events: list[Event]) -> bool:
        # List equality compares element by element in C, and an element identical to the one seen is equal
        # without a look inside: a nanosecond or so per event, which matters once the cache lives as long as
        # the session's cached history. An equal event that is not the same object (a history parsed afresh)
        # shows the agent the same contents, so it may count as seen too. The lists must be as long for that:
        # the new events are put at the end of the seen ones for the comparison rather than the history
        # sliced, as a slice would write to every event's reference count (a cache miss each in a long one).
        seen, count = self._seen, len(self._seen)
        if len(events) < count:
            return False
        seen += events[count:]
        same = events == seen
        del seen[count:]
        return same

    def _extend_compacted(self, events: list[Event], start: int) -> None:
        """Add the new events to a view with summaries in it, or build it afresh when the view cannot take
        them in (see ``CompactedView``)."""
        view = self._view
        for event in events[start:]:
            if is_compaction(event):
                if not kept_events([event], self._agent_name, self._branch):
                    self._seen.append(event)  # another branch's summary
                    continue
                if view is None or not view.add_compaction(event):
                    self._rebuild(events)
                    return
                self._seen.append(event)
                self._show_again(view.shown)
                continue
            shown = retold(event, self._agent_name, self._branch)
            placed = False if shown is None else None if view is None else view.place(event)
            if placed is None:
                self._rebuild(events)
                return
            self._seen.append(event)
            if placed:
                self._add(shown, retold_already=True)

    def _rebuild(self, events: list[Event]) -> None:
        self._reset()
        self._seen = list(events)
        view = CompactedView(kept_events(live_events(events), self._agent_name, self._branch), self._agent_name)
        # with no summary for this agent and branch the plain path serves, until a summary comes
        self._view = view if view.compacted else None
        self._show_again(view.shown)

    def _show_again(self, shown: list[Event]) -> None:
        """Convert the shown events from scratch (a summary removed some)."""
        self._shown, self._contents, self._call_index, self._in_order = [], [], {}, True
        for event in shown:
            self._add(event)

    def _add(self, event: Event, retold_already: bool = False) -> None:
        shown = event if retold_already else retold(event, self._agent_name, self._branch)
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


def cached_contents(caches: dict, agent_name: str, branch: str | None) -> ContentsCache:
    """The cache of ``agent_name`` on ``branch`` among ``caches`` (``InvocationRun.contents``), made on first use."""
    cache = caches.get((agent_name, branch))
    if cache is None:
        cache = caches[agent_name, branch] = ContentsCache(agent_name, branch)
    return cache


def _content_of(event: Event, sent: dict[int, types.Content]) -> types.Content:
    """The content already made for a shown event; a merged answer event is new and converted here."""
    content = sent.get(id(event))
    return strip_client_ids(event.content) if content is None else content
