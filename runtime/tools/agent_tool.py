"""AgentTool: another agent, called like a function."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from google.genai import types

from ..errors import AgentRunFailedError
from .base_tool import BaseTool
from .tool_context import ToolContext

if TYPE_CHECKING:
    from ..agents.base_agent import BaseAgent


class AgentTool(BaseTool):
    """Runs ``agent`` on the caller's request, in its own in-memory session seeded with a copy of the caller's
    state; state changes are copied back, and the agent's final text is the result (``{"result": text}``).

    ``skip_summarization=True`` makes the tool's response the caller's final answer (no second model call).
    """

    def __init__(self, agent: BaseAgent, skip_summarization: bool = False, *, idempotent: bool = False):
        super().__init__(name=agent.name, description=agent.description, idempotent=idempotent)
        self.agent = agent
        self.skip_summarization = skip_summarization
        self._declaration: types.FunctionDeclaration | None = None

    def _get_declaration(self) -> types.FunctionDeclaration:
        schema = getattr(self.agent, "input_schema", None)
        if self._declaration is None and schema is not None:
            from ._schema import schema_for

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
        from ..artifacts import InMemoryArtifactService
        from ..runners import Runner
        from ..sessions import InMemorySessionService

        if self.skip_summarization:
            tool_context.actions.skip_summarization = True
        if getattr(self.agent, "input_schema", None) is not None:
            request = self.agent.input_schema.model_validate(args).model_dump_json(exclude_none=True)
        else:
            request = args.get("request")
        if request is None:
            request = "" if not args else str(args if len(args) > 1 else next(iter(args.values())))
        message = types.Content(role="user", parts=[types.Part(text=str(request))])
        parent = tool_context.invocation_context
        runner = Runner(
            app_name=self.agent.name,
            agent=self.agent,
            session_service=InMemorySessionService(),
            artifact_service=parent.artifact_service or InMemoryArtifactService(),
        )
        session = await runner.session_service.create_session(
            app_name=self.agent.name, user_id="tmp_user", state=_persistable(tool_context.state.to_dict())
        )
        last = None
        async for event in runner.run_async(
            user_id=session.user_id, session_id=session.id, new_message=message, run_config=parent.run_config
        ):
            if event.partial:
                continue
            if event.actions.state_delta:
                tool_context.state.update(event.actions.state_delta)
            if event.content is not None:
                last = event
            elif event.error_code:
                # the agent's run failed: so does this call, as if the tool itself had raised
                raise AgentRunFailedError(event.error_message or "", code=event.error_code)
        if last is None or not last.content or not last.content.parts:
            return ""
        text = "\n".join(p.text for p in last.content.parts if p.text and not p.thought)
        schema = getattr(self.agent, "output_schema", None)
        if schema is not None and text.strip():
            return schema.model_validate_json(text).model_dump(exclude_none=True)
        return text


def _persistable(state: dict[str, Any]) -> dict[str, Any]:
    """temp: keys live only in the caller's invocation; the child session starts without them."""
    return {key: value for key, value in state.items() if not key.startswith("temp:")}
