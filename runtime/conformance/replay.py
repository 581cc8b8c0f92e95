"""google-adk's conformance replay, honoured by agentq: ``adk conformance test`` runs recorded cases against a
server over HTTP, and the server must answer every model call and tool call from the recordings.

The protocol (google-adk 2.13, ``adk conformance``): each ``/run_sse`` request carries, in its ``state_delta``,
``_adk_replay_config = {dir, user_message_index, streaming_mode}``. ``dir`` is the test case's folder; its
``generated-recordings.yaml`` (``-sse`` for streaming ``sse``) lists, in order, the model calls
(``llm_recording``: the request and the responses) and the tool calls (``tool_recording``: the call and the
response) each agent made for each user message. The server then:

- answers the k-th model call of an agent for message i with the k-th recorded one of that agent and message
  (at the model, as google-adk does: a before-model callback that answers takes no recording), after checking that the request it built is the one recorded (what the model would see: the conversation, the
  system instruction, the tool declarations, the output schema), so a divergence shows up where it starts;
- checks each tool call against the next recorded one of that agent and message (name and arguments), runs the
  tool as usual (its side effects, such as state writes, are part of what is compared later; an AgentTool is not
  run, its agent's model calls are not recorded) and answers with the recorded response instead of the tool's.

The client then compares the session's events and state with the recorded session.

``ConformanceReplay`` is a plugin. It reads a recordings file only under ``cases_root`` (a server must not read
any path a client names): agentq's workers add it only when ``AGENTQ_CONFORMANCE_CASES`` names that folder.
Each model call is answered with the recording's final (non-partial) response.
"""

from __future__ import annotations

import copy
import re
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from google.genai import types

from ..errors import UsageError
from ..flows import confirmation
from ..models import LlmResponse
from ..plugins import BasePlugin

CONFIG_KEY = "_adk_replay_config"
"""The session state key ``adk conformance test`` sets (through ``state_delta``) on every message it sends."""

RECORDINGS_FILES = {"none": "generated-recordings.yaml", "sse": "generated-recordings-sse.yaml"}


class ReplayMismatchError(Exception):
    """The run asked for a model or tool call other than the recorded one (the case does not conform)."""


@dataclass
class _Replay:
    """The recordings of one user message of one case, and how far each agent got through them."""

    model_calls: dict[str, list[dict[str, Any]]]
    tool_calls: dict[str, list[dict[str, Any]]]
    message_index: int
    next_model_call: dict[str, int] = field(default_factory=dict)
    next_tool_call: dict[str, int] = field(default_factory=dict)

    def take(self, kind: str, agent: str) -> dict[str, Any]:
        recorded, positions = ((self.model_calls, self.next_model_call) if kind == "model"
                               else (self.tool_calls, self.next_tool_call))
        position = positions.get(agent, 0)
        mine = recorded.get(agent, [])
        if position >= len(mine):
            raise ReplayMismatchError(
                f"agent {agent!r} made {kind} call #{position + 1} for user message {self.message_index}; "
                f"the recordings have {len(mine)}")
        positions[agent] = position + 1
        return mine[position]


class ConformanceReplay(BasePlugin):
    """Answers model and tool calls from ``adk conformance`` recordings under ``cases_root`` (see the module)."""

    def __init__(self, cases_root: str | Path, *, name: str = "agentq_conformance_replay"):
        super().__init__(name)
        self.cases_root = Path(cases_root).resolve()
        self._replays: dict[str, _Replay] = {}

    async def before_run_callback(self, *, invocation_context) -> types.Content | None:
        config = invocation_context.session.state.get(CONFIG_KEY)
        if config:
            self._replays[invocation_context.invocation_id] = self._load(config)
        return None

    async def after_run_callback(self, *, invocation_context) -> None:
        self._replays.pop(invocation_context.invocation_id, None)

    def model_for_call(self, *, invocation_id: str, agent_name: str) -> _ReplayedModel | None:
        """The model that answers ``agent_name``'s next model call in a replayed invocation, else None.

        As google-adk 2.13 replays, at the model: the before-model callbacks (the plugins', then the agent's)
        run first, and one that answers takes no recorded model call."""
        replay = self._replays.get(invocation_id)
        return None if replay is None else _ReplayedModel(replay, agent_name)

    async def before_tool_callback(self, *, tool, tool_args, tool_context) -> dict[str, Any] | None:
        replay = self._replays.get(tool_context.invocation_id)
        if replay is None:
            return None
        recorded = replay.take("tool", tool_context.agent_name)
        call = recorded.get("tool_call") or {}
        if call.get("name") != tool.name or (call.get("args") or {}) != tool_args:
            raise ReplayMismatchError(
                f"agent {tool_context.agent_name!r}, user message {replay.message_index}: tool call "
                f"{tool.name}({tool_args}) where the recordings have {call.get('name')}({call.get('args')})")
        # the tool runs as it would (held for confirmation first), for its side effects; the answer is the
        # recording's. As google-adk 2.13, an AgentTool is not run: its agent's model calls are not recorded.
        held = await confirmation.gate(tool, copy.deepcopy(tool_args), tool_context)
        if held is None and not _runs_an_agent(tool):
            await tool.run_async(args=copy.deepcopy(tool_args), tool_context=tool_context)
        return (recorded.get("tool_response") or {}).get("response") or {}

    def _load(self, config: Any) -> _Replay:
        if not isinstance(config, dict) or not isinstance(config.get("dir"), str):
            raise UsageError(f"{CONFIG_KEY} must be an object with the test case folder as 'dir'")
        folder = Path(config["dir"]).resolve()
        if not folder.is_relative_to(self.cases_root):
            raise UsageError(f"{CONFIG_KEY} names {folder}, which is not under the conformance cases folder "
                             f"{self.cases_root} (AGENTQ_CONFORMANCE_CASES)")
        mode = config.get("streaming_mode", "none")
        if mode not in RECORDINGS_FILES:
            raise UsageError(f"{CONFIG_KEY}: streaming_mode {mode!r} is not one of {sorted(RECORDINGS_FILES)}")
        message_index = config.get("user_message_index")
        if not isinstance(message_index, int):
            raise UsageError(f"{CONFIG_KEY}: user_message_index must be a whole number")
        path = folder / RECORDINGS_FILES[mode]
        if not path.is_file():
            raise UsageError(f"no recordings at {path}")
        import yaml  # only a conformance run needs it

        model_calls: dict[str, list] = {}
        tool_calls: dict[str, list] = {}
        for entry in (yaml.safe_load(path.read_text()) or {}).get("recordings", []):
            if entry.get("user_message_index") != message_index:
                continue
            if entry.get("llm_recording"):
                model_calls.setdefault(entry["agent_name"], []).append(entry["llm_recording"])
            if entry.get("tool_recording"):
                tool_calls.setdefault(entry["agent_name"], []).append(entry["tool_recording"])
        return _Replay(model_calls, tool_calls, message_index)


def _runs_an_agent(tool: Any) -> bool:
    """An AgentTool (it wraps an ``agent``; ``runtime.tools.agent_tool`` sits above this layer)."""
    return getattr(tool, "agent", None) is not None


class _ReplayedModel:
    """Stands in for an agent's model for one call: checks the request against the next recording of the
    agent for the message, and answers with its final response."""

    def __init__(self, replay: _Replay, agent_name: str):
        self._replay, self._agent_name = replay, agent_name

    async def generate_content_async(self, llm_request: Any, stream: bool = False) -> AsyncGenerator[LlmResponse]:
        replay, agent = self._replay, self._agent_name
        recorded = replay.take("model", agent)
        expected, actual = model_view(recorded.get("llm_request") or {}), model_view(_dump(llm_request))
        if expected != actual:
            raise ReplayMismatchError(
                f"agent {agent!r}, user message {replay.message_index}: the model request differs from the "
                f"recorded one\nrecorded: {expected}\nactual:   {actual}")
        finals = [r for r in recorded.get("llm_responses") or [] if not r.get("partial")]
        if len(finals) != 1:
            raise ReplayMismatchError(f"agent {agent!r}: a recorded model call has {len(finals)} final "
                                      "responses; agentq replays exactly one")
        yield LlmResponse.model_validate(finals[0])


def _dump(request: Any) -> dict[str, Any]:
    return {"model": request.model,
            "contents": [c.model_dump(mode="json", exclude_none=True) for c in request.contents],
            "config": request.config.model_dump(mode="json", exclude_none=True)}


def model_view(request: dict[str, Any]) -> dict[str, Any]:
    """What the model is shown by a request (a dumped LlmRequest): the model name, the conversation (call ids
    left out: they are minted per run), the system instruction, the tool declarations (as google-adk's own
    check normalises them: schemas without titles, defaults and descriptions) and the output schema."""
    config = request.get("config") or {}
    return {
        "model": request.get("model"),
        "contents": [_without_ids(content) for content in request.get("contents") or []],
        "system_instruction": _instruction(config.get("system_instruction")),
        "tools": [_declaration(d) for tool in config.get("tools") or []
                  for d in (tool.get("function_declarations") or [])],
        "response_schema": _schema(config.get("response_schema") or config.get("response_json_schema")),
    }


_NOTE = re.compile(r"\n\n?(?:NOTE|Note|IMPORTANT):.*", re.DOTALL)
_TRANSFER_BLOCK = "You have a list of other agents to transfer to:"
_TARGET = re.compile(r"Agent name: (.*)\nAgent description: (.*)")
_PARENT = re.compile(r"parent agent (?:is )?([^\s.,]+)")


def _prose(text: str) -> str:
    """Framework prose reduced to what it says: whitespace runs as one space, and a closing "NOTE:" (or "Note:",
    "IMPORTANT:") paragraph left out (each library words its own notes to the model, such as not calling a
    long-running tool again, or a task agent's tool alone), as
    google-adk's own check pins the wording of such texts."""
    return " ".join(_NOTE.sub("", text).split())


def _instruction(instruction: Any) -> Any:
    """A system instruction with its transfer block reduced to its facts (the agents offered, with their
    descriptions, and the parent named): both libraries word the block their own way around those facts."""
    if not isinstance(instruction, str):
        return instruction
    # a task agent's paragraph about finish_task: framework prose each library words its own way
    instruction = "\n\n".join("[finish_task instruction]" if "`finish_task`" in paragraph else paragraph
                               for paragraph in instruction.split("\n\n"))
    head, found, block = instruction.partition(_TRANSFER_BLOCK)
    if not found:
        return " ".join(head.split())
    parent = _PARENT.search(block)
    return {"instruction": " ".join(head.split()), "transfer_targets": _TARGET.findall(block),
            "parent": parent.group(1) if parent else None}


_RELAYED_PREAMBLE = "For context:"
_QUOTED = re.compile(r":\n<<<BEGIN_[A-Z_]+>>>\n(?P<payload>.*)\n<<<END_[A-Z_]+>>>\Z", re.DOTALL)


def _relayed(content: dict[str, Any]) -> dict[str, Any]:
    """Another agent's turn relayed to this one, reduced to what it relays: google-adk 2.13 quotes it between
    markers after a longer preamble (a fence against instructions smuggled in another agent's output), agentq
    relays it plainly; both carry the same payload, which is what is compared (as google-adk's own check does)."""
    parts = content["parts"]
    first = parts[0].get("text") if parts else None
    if content.get("role") != "user" or len(parts) < 2 or not (first or "").startswith(_RELAYED_PREAMBLE):
        return content
    relayed = [{"text": _RELAYED_PREAMBLE}]
    relayed += [{**part, "text": _QUOTED.sub(r": \g<payload>", part["text"])} if "text" in part else part
                for part in parts[1:]]
    return {**content, "parts": relayed}


def _without_ids(content: dict[str, Any]) -> dict[str, Any]:
    parts = []
    for part in content.get("parts") or []:
        part = {k: v for k, v in part.items() if k != "thought_signature"}
        for kind in ("function_call", "function_response"):
            if kind in part:
                part[kind] = {k: v for k, v in part[kind].items() if k != "id"}
        parts.append(part)
    return _relayed({"role": content.get("role"), "parts": parts})


def _declaration(declaration: dict[str, Any]) -> dict[str, Any]:
    schema = declaration.get("parameters_json_schema") or declaration.get("parameters")
    name = declaration.get("name")
    # transfer_to_agent's and finish_task's descriptions are prose for the model that both libraries word their
    # own way
    framework = name in ("transfer_to_agent", "finish_task")
    description = None if framework else _prose(declaration.get("description") or "")
    return {"name": name, "description": description, "parameters": _schema(schema)}


def _schema(schema: Any, defs: dict[str, Any] | None = None) -> Any:
    """A JSON schema without what does not change what it accepts: $defs inlined, titles, defaults and
    descriptions left out, type names in lower case."""
    if isinstance(schema, dict):
        defs = {**(defs or {}), **(schema.get("$defs") or {})}
        if "$ref" in schema and schema["$ref"].rsplit("/", 1)[-1] in defs:
            target = defs[schema["$ref"].rsplit("/", 1)[-1]]
            schema = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
        out = {}
        for key, value in schema.items():
            if key in ("title", "default", "description", "$defs"):
                continue
            out[key] = value.lower() if key == "type" and isinstance(value, str) else _schema(value, defs)
        return out
    if isinstance(schema, list):
        return [_schema(v, defs) for v in schema]
    return schema
