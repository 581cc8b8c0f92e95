"""The system instruction: the agent's instruction (templated from state), its identity, transfer targets."""

from __future__ import annotations

import inspect
import re
from typing import TYPE_CHECKING

from google.genai import types

from ..contexts.readonly_context import ReadonlyContext

if TYPE_CHECKING:
    from ..agents.llm_agent import LlmAgent
    from ..contexts.invocation_context import InvocationContext

# Braces after "$", "{" or a backslash are left alone, as ADK does: "${x}" and "\{x}" are not placeholders.
_PLACEHOLDER = re.compile(r"(?<![${\\]){+[^{}]*}+")
_PREFIXES = ("app", "user", "temp")


def _is_state_name(name: str) -> bool:
    parts = name.split(":")
    if len(parts) == 1:
        return name.isidentifier()
    return len(parts) == 2 and parts[0] in _PREFIXES and parts[1].isidentifier()


async def inject_session_state(template: str, ctx: InvocationContext) -> str:
    """Replace ``{key}`` with state values, ``{key?}`` with '' when missing, ``{artifact.name}`` with an
    artifact's text. Names that are not state names stay verbatim; a missing required key is a KeyError."""
    if "{" not in template:
        return template
    pieces: list[str] = []
    end = 0
    for match in _PLACEHOLDER.finditer(template):
        pieces.append(template[end : match.start()])
        pieces.append(await _replacement(match.group(), ctx))
        end = match.end()
    pieces.append(template[end:])
    return "".join(pieces)


async def _replacement(placeholder: str, ctx: InvocationContext) -> str:
    name = placeholder.lstrip("{").rstrip("}").strip()
    optional = name.endswith("?")
    if optional:
        name = name[:-1]
    if name.startswith("artifact."):
        filename = name.removeprefix("artifact.")
        if ctx.artifact_service is None:
            # Even for {artifact.f?}: a runner without artifacts is a setup mistake, not a missing file.
            # A plain ValueError, as ADK raises: the agent's run reports it as an error event.
            raise ValueError("Artifact service is not initialized.")
        artifact = await ctx.artifact_service.load_artifact(
            app_name=ctx.app_name, user_id=ctx.user_id, session_id=ctx.session.id, filename=filename
        )
        if artifact is None:
            if optional:
                return ""
            raise KeyError(f"Artifact {filename!r} not found in agent {ctx.agent.name!r}.")
        # A custom artifact service may hand back something other than a Part; ADK shows its str() then
        return artifact.text if isinstance(artifact, types.Part) and artifact.text is not None else str(artifact)
    if not _is_state_name(name):
        return placeholder
    state = ctx.session.state
    if name in state:
        value = state[name]
        return "" if value is None else str(value)
    if optional:
        return ""
    raise KeyError(f"Context variable not found: `{name}` in agent {ctx.agent.name!r}.")


async def canonical(instruction, readonly_context: ReadonlyContext) -> tuple[str, bool]:
    """``(text, bypass_state_injection)``: a string as it is (to be templated), or what a callable
    (InstructionProvider) returns, which is used verbatim."""
    if not callable(instruction):
        return instruction, False
    text = instruction(readonly_context)
    if inspect.isawaitable(text):
        text = await text
    return text, True


async def resolve_instruction(instruction, ctx: InvocationContext) -> str:
    """A string instruction is templated; a callable (InstructionProvider) is called and used as is."""
    if not instruction:
        return ""
    text, bypass = await canonical(instruction, ReadonlyContext(ctx))
    if bypass:
        return text or ""
    return await inject_session_state(text, ctx)


def identity(agent: LlmAgent) -> str:
    """Who the model is speaking as."""
    text = f'You are an agent. Your internal name is "{agent.name}".'
    if agent.description:
        text += f' The description about you is "{agent.description}".'
    return text


def transfer_instruction(agent: LlmAgent, targets: list) -> str:
    """How and to whom the agent may hand the conversation over."""
    listed = "\n".join(
        f"\nAgent name: {target.name}\nAgent description: {target.description}\n" for target in targets
    )
    text = (
        f"\nYou have a list of other agents to transfer to:\n\n{listed}\n\n"
        "If you are the best to answer the question according to your description, you can answer it.\n\n"
        "If another agent is better for answering the question according to its description, call "
        "`transfer_to_agent` function to transfer the question to that agent. When transferring, do not "
        "generate any text other than the function call.\n"
    )
    parent = agent.parent_agent
    if parent is not None and not agent.disallow_transfer_to_parent and any(t is parent for t in targets):
        text += (
            f"\nYour parent agent is {parent.name}. If neither the other agents nor you are best for answering "
            "the question according to the descriptions, transfer to your parent agent.\n"
        )
    return text


async def system_instruction(agent: LlmAgent, ctx: InvocationContext, targets: list) -> str | None:
    """The whole system instruction for one model call, paragraphs joined by blank lines."""
    paragraphs = []
    root = agent.root_agent
    global_instruction = getattr(root, "global_instruction", "")
    if global_instruction:
        paragraphs.append(await resolve_instruction(global_instruction, ctx))
    if agent.instruction:
        paragraphs.append(await resolve_instruction(agent.instruction, ctx))
    # as ADK 2.13: a single_turn agent is given no identity, nor is an agent run as a workflow node (single turn)
    if getattr(agent, "mode", None) != "single_turn" and ctx.node_path is None:
        paragraphs.append(identity(agent))
    if targets:
        paragraphs.append(transfer_instruction(agent, targets))
    paragraphs = [p for p in paragraphs if p]
    return "\n\n".join(paragraphs) if paragraphs else None
