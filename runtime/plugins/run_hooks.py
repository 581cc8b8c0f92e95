"""The Runner's loop when it has plugins: before/after run around the agent, on_event on every event."""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import aclosing
from typing import TYPE_CHECKING

from google.genai import types

from ..events import Event

if TYPE_CHECKING:
    from ..agents.base_agent import BaseAgent
    from ..contexts.invocation_context import InvocationContext

log = logging.getLogger(__name__)

# A replacement event keeps the original's identity: the stream, the history and resumption all key on it.
_IDENTITY = frozenset({"id", "invocation_id", "timestamp"})


async def run_with_plugins(
    ctx: InvocationContext, agent: BaseAgent, commit: Callable[[InvocationContext, Event], Awaitable[None]]
) -> AsyncGenerator[Event, None]:
    """Run ``agent`` as the Runner does (commit each non-partial event, then yield it), with the plugins' run
    callbacks: ``before_run`` may answer instead of the agent; ``on_event`` may replace each event before it
    is committed; ``after_run`` follows a run that raised nothing; ``on_run_error`` hears of one that did."""
    plugins = ctx.plugin_manager
    raised = closing = False
    try:
        answer = await plugins.run_before_run_callback(invocation_context=ctx)
        if isinstance(answer, types.Content):
            events = _only(Event(invocation_id=ctx.invocation_id, author="model", content=answer))
        else:
            events = agent.run_async(ctx)
        async with aclosing(events) as events:
            async for event in events:
                if not event.invocation_id:  # a custom agent's event: it belongs to this invocation
                    event.invocation_id = ctx.invocation_id
                event = await on_event(ctx, event)
                if not event.partial:
                    await commit(ctx, event)
                yield event
    except GeneratorExit:  # the caller stopped reading: as in ADK, a clean end
        closing = True
        raise
    except Exception as exc:
        raised = True
        await plugins.run_on_run_error_callback(invocation_context=ctx, error=exc)
        raise
    except BaseException:  # cancelled (a lost lease, a shutdown): no after_run
        raised = True
        raise
    finally:
        if not raised:
            try:
                await plugins.run_after_run_callback(invocation_context=ctx)
            except Exception:
                if not closing:
                    raise
                # raising now would hide the close the caller asked for
                log.exception("invocation %s: after_run_callback failed while closing early", ctx.invocation_id)


async def on_event(ctx: InvocationContext, event: Event) -> Event:
    """``event`` after the plugins' on_event callbacks: the fields a replacement set override the original's
    (except its id, invocation_id and timestamp)."""
    plugins = ctx.plugin_manager
    if not plugins.has_callback("on_event_callback"):
        return event
    replaced = await plugins.run_on_event_callback(invocation_context=ctx, event=event)
    if replaced is None or replaced is event:
        return event
    update = {name: getattr(replaced, name) for name in replaced.model_fields_set - _IDENTITY}
    merged = event.model_copy(update=update)
    if not merged.author:
        merged.author = event.author
    return merged


async def _only(event: Event) -> AsyncGenerator[Event, None]:
    yield event
