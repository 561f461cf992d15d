"""The agent's tools, re-exported from their one home in ``ark.tools``."""

from __future__ import annotations

from typing import Any

from ark.graph import Schema
from ark.tools import ANSWER_TOOL_SPECS, MAX_ADD, ToolConfig, allowed_arguments, tool_specs

__all__ = ["ANSWER_TOOL_SPECS", "MAX_ADD", "ToolConfig", "agent_tool_specs", "allowed_arguments"]


def agent_tool_specs(schema: Schema | None, tools: ToolConfig) -> list[dict[str, Any]]:
    """OpenAI-style function definitions for an agent: retrieval and answer tools,
    ablations applied."""
    return tool_specs(schema, tools, answer_tools=True)
