"""LlmEventSummarizer: the default summarizer of events compaction, a model asked to summarise (``google.adk.apps``)."""

from __future__ import annotations

from contextlib import aclosing

from google.genai import types

from ..events import Event, EventActions, new_event_id
from ..events.event_actions import EventCompaction
from ..models.base_llm import BaseLlm
from ..models.llm_request import LlmRequest
from .base_events_summarizer import BaseEventsSummarizer

REQUEST_CREDENTIAL_FUNCTION_CALL_NAME = "adk_request_credential"
"""The call by which a tool asks the client for credentials: its payload is a secret, never summarised."""

MAX_TOOL_CONTENT_CHARS = 2000
"""How much of each tool call's arguments and each tool response is quoted, so a summary of a tool-heavy
range does not grow the context it exists to shrink."""


class LlmEventSummarizer(BaseEventsSummarizer):
    """Sends the events, written out one line per text, thought, tool call and tool response, to ``llm`` inside
    ``prompt_template`` (its ``{conversation_history}`` placeholder), and makes the model's answer the summary.
    """

    DEFAULT_PROMPT_TEMPLATE = (
        "Below is a conversation between a user and an AI agent; it may begin with a summary of an earlier "
        "part of it. Write a summary that takes its place. State the language the user writes in first "
        '(for example "Conversation Language: English"). Then restate what the user asked for, the '
        "decisions taken and the facts learned so far, and what is still open. Name every tool the agent "
        "called, exactly as it is named. Keep the rest short.\n\n{conversation_history}"
    )

    def __init__(self, llm: BaseLlm, prompt_template: str | None = None):
        self._llm = llm
        self._prompt_template = prompt_template or self.DEFAULT_PROMPT_TEMPLATE

    async def maybe_summarize_events(self, *, events: list[Event]) -> Event | None:
        """A compaction event summarising ``events``; None when there are none or the model said nothing."""
        if not events:
            return None
        prompt = self._prompt_template.format(conversation_history=self._format_events_for_prompt(events))
        request = LlmRequest(model=self._llm.model,
                             contents=[types.Content(role="user", parts=[types.Part(text=prompt)])])
        answer = None
        async with aclosing(self._llm.generate_content_async(request, stream=False)) as responses:
            async for response in responses:
                if response.content:
                    answer = response
                    break
        if answer is None:
            return None
        compaction = EventCompaction(start_timestamp=events[0].timestamp, end_timestamp=events[-1].timestamp,
                                     compacted_content=answer.content.model_copy(update={"role": "model"}))
        # Its own invocation id: the summary belongs to no invocation, whichever one's end triggered it.
        return Event(author="user", invocation_id=new_event_id(), actions=EventActions(compaction=compaction),
                     usage_metadata=answer.usage_metadata)

    def _format_events_for_prompt(self, events: list[Event]) -> str:
        """One line per text, thought, tool call and tool response. A summary's thoughts are left out (they
        were about an older summary), and so are credential requests (their payload is a secret)."""
        lines = []
        for event in events:
            if not event.content or not event.content.parts or _asks_for_credentials(event):
                continue
            for part in event.content.parts:
                if part.thought and part.text:
                    if event.actions.compaction is None:
                        lines.append(f"{event.author} (thought): {part.text}")
                elif part.text:
                    lines.append(f"{event.author}: {part.text}")
                if part.function_call:
                    args = _quoted(str(part.function_call.args))
                    lines.append(f"{event.author} called tool: {part.function_call.name}({args})")
                if part.function_response:
                    response = _quoted(str(part.function_response.response))
                    lines.append(f"Tool response from {part.function_response.name}: {response}")
        return "\n".join(lines)


def _quoted(text: str) -> str:
    """``text`` cut at MAX_TOOL_CONTENT_CHARS, saying how much was cut."""
    if len(text) <= MAX_TOOL_CONTENT_CHARS:
        return text
    return f"{text[:MAX_TOOL_CONTENT_CHARS]}... [truncated {len(text) - MAX_TOOL_CONTENT_CHARS} chars]"


def _asks_for_credentials(event: Event) -> bool:
    """A credential request or the client's answer to one."""
    named = [*event.get_function_calls(), *event.get_function_responses()]
    return any(item.name == REQUEST_CREDENTIAL_FUNCTION_CALL_NAME for item in named)
