"""AgentTool: another agent, called like a function.

It runs the agent with a Runner, so it sits above the runner, at the top of the runtime's layers; the other
tools sit below the flows. ``runtime.tools`` therefore exports it lazily.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from google.genai import types

from ..artifacts import InMemoryArtifactService
from ..contexts.tool_context import ToolContext
from ..errors import AgentRunFailedError
from ..flows import agent_tool_pause
from ..routing import pending_long_running_calls
from ..runners import Runner
from ._schema import schema_for
from .agent_tool_journal import AgentToolJournal
from .agent_tool_session import ChildSession
from .base_tool import BaseTool

if TYPE_CHECKING:
    from ..agents.base_agent import BaseAgent
    from ..contexts.invocation_context import InvocationContext
    from ..events import Event
    from ..sessions import Session


class AgentTool(BaseTool):
    """Runs ``agent`` on the caller's request, in a session of its own (one per call, on the caller's session
    service, see ``agent_tool_session``) seeded with the caller's session state; state changes are copied
    back, and the agent's final text is the result (``{"result": text}``). The session is deleted then.

    When the agent pauses (a long-running call, a confirmation request), so does the caller: its client is
    asked the agent's calls, and the answers resume the agent (see ``flows.agent_tool_pause``).

    ``skip_summarization=True`` makes the tool's response the caller's final answer (no second model call).
    ``include_plugins`` (default True, as ADK) runs the caller's plugins for the wrapped agent's run too.
    """

    answers_as_agent = True

    def __init__(self, agent: BaseAgent, skip_summarization: bool = False, *, idempotent: bool = False,
                 include_plugins: bool = True):
        super().__init__(name=agent.name, description=agent.description, idempotent=idempotent)
        self.agent = agent
        self.skip_summarization = skip_summarization
        self.include_plugins = include_plugins
        self._declaration: types.FunctionDeclaration | None = None

    def _get_declaration(self) -> types.FunctionDeclaration:
        schema = getattr(self.agent, "input_schema", None)
        if self._declaration is None and schema is not None:
            self._declaration = types.FunctionDeclaration(
                name=self.name, description=self.agent.description or None, parameters=schema_for(schema)
            )
        if self._declaration is None:
            self._declaration = types.FunctionDeclaration(
                name=self.name,
                description=self.agent.description or None,
                parameters=types.Schema(
                    type=types.Type.OBJECT,
                    properties={"request": types.Schema(type=types.Type.STRING)},
                    required=["request"],
                ),
            )
        return self._declaration

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        if self.skip_summarization:
            tool_context.actions.skip_summarization = True
        parent = tool_context.invocation_context
        call_id = tool_context.function_call_id
        child = ChildSession.of(parent, call_id)
        session, existed = await child.open(parent.session_service, tool_context.state.to_dict())
        waiting = pending_long_running_calls(session, child.invocation_id) if existed else []
        if waiting:
            ids = {call.id for call in waiting}
            answers = [r for r in agent_tool_pause.answers_for(parent.run.events, call_id) if r.id in ids]
            if not answers:  # nothing for the agent yet (or its answers are forwarded already): it still waits
                return agent_tool_pause.paused(_not_yet_issued(waiting, parent))
            message = types.Content(role="user", parts=[types.Part(function_response=r) for r in answers])
        else:
            # A repeated attempt at the call (after a crash) sends the request again: the Runner does not
            # append it twice, and continues the agent's invocation from its committed events.
            message = types.Content(role="user", parts=[types.Part(text=self._request(args))])
        try:
            last, long_running = await self._run_agent(child, message, tool_context)
        except AgentRunFailedError:  # the call fails with it: nothing will resume this run of the agent
            await child.delete(parent.session_service)
            raise
        if long_running or waiting:
            session = await child.get(parent.session_service)
            waiting = pending_long_running_calls(session, child.invocation_id) if session is not None else []
            if waiting:
                return agent_tool_pause.paused(_not_yet_issued(waiting, parent))
        elif last is None and existed:  # it had answered before the caller's process stopped
            last = _last_said(session, child.invocation_id)
        await child.delete(parent.session_service)
        return self._result(last)

    def _request(self, args: dict[str, Any]) -> str:
        """The user message the agent is run on, made from the caller's arguments."""
        if getattr(self.agent, "input_schema", None) is not None:
            return self.agent.input_schema.model_validate(args).model_dump_json(exclude_none=True)
        request = args.get("request")
        if request is None:
            request = "" if not args else str(args if len(args) > 1 else next(iter(args.values())))
        return str(request)

    async def _run_agent(self, child: ChildSession, message: types.Content, tool_context: ToolContext
                         ) -> tuple[Event | None, bool]:
        """Run the agent on ``message`` in its session, copying its state changes to the caller's; its last
        event with content, and whether it issued a long-running call."""
        parent = tool_context.invocation_context
        runner = Runner(
            app_name=child.app_name,
            agent=self.agent,
            session_service=parent.session_service,
            artifact_service=parent.artifact_service or InMemoryArtifactService(),
            # the agent's own tools run at most once too, journaled as calls of the caller's invocation
            tool_journal=AgentToolJournal(parent.tool_journal, parent.invocation_id)
            if parent.tool_journal is not None else None,
            plugins=list(parent.plugin_manager.plugins) if self.include_plugins else None,
        )
        last = None
        long_running = False
        async for event in runner.run_async(
            user_id=child.user_id, session_id=child.session_id, new_message=message,
            invocation_id=child.invocation_id, run_config=parent.run_config,
        ):
            if event.partial:
                continue
            if event.actions.state_delta:
                tool_context.state.update(event.actions.state_delta)
            long_running = long_running or bool(event.long_running_tool_ids)
            if event.content is not None:
                last = event
            elif event.error_code:
                # the agent's run failed: so does this call, as if the tool itself had raised
                raise AgentRunFailedError(event.error_message or "", code=event.error_code)
        return last, long_running

    def _result(self, last: Event | None) -> Any:
        """The agent's final text (parsed by its ``output_schema``, if any); '' when it said nothing."""
        if last is None or not last.content or not last.content.parts:
            return ""
        text = "\n".join(p.text for p in last.content.parts if p.text and not p.thought)
        schema = getattr(self.agent, "output_schema", None)
        if schema is not None and text.strip():
            return schema.model_validate_json(text).model_dump(exclude_none=True)
        return text


def _not_yet_issued(waiting: list[types.FunctionCall], parent: InvocationContext) -> list[types.FunctionCall]:
    """The agent's pending calls the caller's client has not been asked yet (the others pend in the caller)."""
    return [call for call in waiting if call.id not in parent.run.pending]


def _last_said(session: Session, invocation_id: str) -> Event | None:
    """The last event with content the agent committed in ``invocation_id``."""
    return next((e for e in reversed(session.events)
                 if e.invocation_id == invocation_id and e.author != "user" and e.content is not None), None)
