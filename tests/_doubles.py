"""Test doubles: the scripted chat model ships in the library (``ark.testing``), for
users' tests as for ARK's own; this module keeps the suite's imports short."""

from ark.llm import LLMError
from ark.testing import ScriptedChatModel, calls, json_reply, prose, tool_call

__all__ = ["LLMError", "ScriptedChatModel", "calls", "json_reply", "prose", "tool_call"]
