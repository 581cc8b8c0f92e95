"""The callbacks around one model call: the plugins' first, then the agent's own, unless a plugin answered."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import TYPE_CHECKING

from ..contexts.callbacks import first_answer
from ..models.llm_response import LlmResponse

if TYPE_CHECKING:
    from ..agents.llm_agent import LlmAgent
    from ..contexts.callback_context import CallbackContext
    from ..models.llm_request import LlmRequest
    from ..plugins import PluginManager


async def before_model(
    agent: LlmAgent, plugins: PluginManager, callback_context: CallbackContext, request: LlmRequest
) -> LlmResponse | None:
    """The response that replaces the model call, if a before-model callback gives one."""
    answer = None
    if plugins.has_callback("before_model_callback"):
        answer = await plugins.run_before_model_callback(callback_context=callback_context, llm_request=request)
    if answer is None and agent.before_model_callback:
        answer = await first_answer(agent.before_model_callback, callback_context=callback_context,
                                    llm_request=request)
    return answer


async def after_model(
    agent: LlmAgent, plugins: PluginManager, callback_context: CallbackContext, response: LlmResponse
) -> LlmResponse:
    """``response``, or what an after-model callback replaces it with."""
    altered = None
    if plugins.has_callback("after_model_callback"):
        altered = await plugins.run_after_model_callback(callback_context=callback_context, llm_response=response)
    if altered is None and agent.after_model_callback:
        altered = await first_answer(agent.after_model_callback, callback_context=callback_context,
                                     llm_response=response)
    return response if altered is None else _inherit_model_fields(response, altered)


async def answer_errors(
    answers: AsyncGenerator[LlmResponse, None], plugins: PluginManager, callback_context: CallbackContext,
    request: LlmRequest,
) -> AsyncGenerator[LlmResponse, None]:
    """The model's answers; when the model raises, the plugins' on_model_error callbacks may answer instead
    (their response then goes through the after-model callbacks like the model's own)."""
    try:
        async with aclosing(answers) as responses:
            async for response in responses:
                yield response
    except Exception as exc:
        answer = await plugins.run_on_model_error_callback(callback_context=callback_context, llm_request=request,
                                                           error=exc)
        if answer is None:
            raise
        yield answer


def _inherit_model_fields(original: LlmResponse, altered: LlmResponse) -> LlmResponse:
    """As ADK: a replacement that leaves ``partial``, ``turn_complete`` or ``usage_metadata`` unset keeps the
    original's, so replacing a streamed chunk does not make it final and the call's token count is not lost."""
    if altered is original or not isinstance(altered, LlmResponse):
        return altered
    update = {name: getattr(original, name) for name in ("partial", "turn_complete", "usage_metadata")
              if getattr(altered, name) is None and getattr(original, name) is not None}
    return altered.model_copy(update=update) if update else altered
