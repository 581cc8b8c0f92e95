"""LlmRequest: what an agent sends to a model."""

from __future__ import annotations

from typing import Any

from google.genai import types
from pydantic import BaseModel, ConfigDict, Field


class LlmRequest(BaseModel):
    """The conversation, the generation config (system instruction, tool declarations) and the tools by name."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    model: str | None = None
    contents: list[types.Content] = Field(default_factory=list)
    config: types.GenerateContentConfig = Field(default_factory=types.GenerateContentConfig)
    tools_dict: dict[str, Any] = Field(default_factory=dict, exclude=True)

    def append_instructions(self, instructions: list[str]) -> None:
        """Add paragraphs to the system instruction."""
        if not instructions:
            return
        text = "\n\n".join(instructions)
        current = self.config.system_instruction
        if current:
            text = f"{current}\n\n{text}" if isinstance(current, str) else text
        self.config.system_instruction = text

    def append_tools(self, tools: list[Any]) -> None:
        """Declare tools (BaseTool instances) to the model and index them by name."""
        declarations = []
        for tool in tools:
            declaration = tool._get_declaration()
            if declaration is not None:
                declarations.append(declaration)
                self.tools_dict[tool.name] = tool
        if not declarations:
            return
        if self.config.tools is None:
            self.config.tools = []
        for existing in self.config.tools:
            if isinstance(existing, types.Tool) and existing.function_declarations is not None:
                existing.function_declarations.extend(declarations)
                return
        self.config.tools.append(types.Tool(function_declarations=declarations))
