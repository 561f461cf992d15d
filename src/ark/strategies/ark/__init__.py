"""Strategy ``ark``: the paper's tool-calling loop (SPEC §4), its prompt and its tools."""

from ark.strategies.ark._agent import Agent, AgentOptions, steps_left_note
from ark.strategies.ark._agent_tools import agent_tool_specs
from ark.strategies.ark._prompt import system_prompt

__all__ = ["Agent", "AgentOptions", "agent_tool_specs", "steps_left_note", "system_prompt"]
