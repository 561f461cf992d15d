"""The tools an agent is offered: the retrieval tools and the answer tools
(``add_to_answer``, ``finish``), from their one definition in ``ark.tools``."""

from __future__ import annotations

from typing import Any

from ark.graph import Schema
from ark.tools import ToolConfig, tool_specs


def agent_tool_specs(schema: Schema | None, tools: ToolConfig) -> list[dict[str, Any]]:
    """OpenAI-style function definitions for an agent: retrieval and answer tools,
    ablations applied."""
    return tool_specs(schema, tools, answer_tools=True)
