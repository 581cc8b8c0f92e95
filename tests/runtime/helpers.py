"""Small shared helpers for the runtime tests: messages, running a turn, summarising events."""

from __future__ import annotations

from typing import Any

from google.genai import types

from runtime.events import Event

APP = "app"
USER = "u"


def user_text(text: str) -> types.Content:
    """A user message with one text part."""
    return types.Content(role="user", parts=[types.Part(text=text)])


def function_response(call_id: str, name: str, response: dict[str, Any], will_continue: bool | None = None
                      ) -> types.Content:
    """A client message answering call ``call_id``."""
    return types.Content(
        role="user",
        parts=[types.Part(function_response=types.FunctionResponse(
            id=call_id, name=name, response=response, will_continue=will_continue))],
    )


async def new_session(runner, state: dict[str, Any] | None = None, session_id: str | None = None):
    """A fresh session of the runner's app."""
    return await runner.session_service.create_session(
        app_name=runner.app_name, user_id=USER, state=state, session_id=session_id
    )


async def run(runner, session, message=None, **kwargs) -> list[Event]:
    """Every event of one run_async call."""
    return [
        event
        async for event in runner.run_async(user_id=USER, session_id=session.id, new_message=message, **kwargs)
    ]


async def stored(runner, session) -> list[Event]:
    """The session's committed history as the service has it now."""
    fresh = await runner.session_service.get_session(app_name=runner.app_name, user_id=USER, session_id=session.id)
    return fresh.events


def summary(event: Event) -> tuple:
    """(author, what it says) with random ids left out: text, calls as (name, args), responses as (name, dict)."""
    said: list[Any] = []
    for part in event.content.parts if event.content and event.content.parts else []:
        if part.text is not None:
            said.append(part.text)
        elif part.function_call:
            said.append(("call", part.function_call.name, part.function_call.args))
        elif part.function_response:
            said.append(("response", part.function_response.name, part.function_response.response))
    return (event.author, said)


def summaries(events: list[Event]) -> list[tuple]:
    """``summary`` of every event that has content."""
    return [summary(event) for event in events if event.content is not None]
