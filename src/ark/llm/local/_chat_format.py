"""Chat formatting without a model: a GGUF/Hugging Face chat template rendered with
the fixes a small model needs, and the parsing of Qwen-style tool calls.

The local backend renders its prompts here, and training code imports it to render
the very same text for supervised fine-tuning — without loading llama.cpp. Fixes
(why: docs/decisions/local-model.md): the GGUF template
shows the call format with doubled braces, which small models copy, so they are
undone; tool-call arguments go to the template as objects (a JSON string would be
escaped twice); assistant turns that call tools have empty content.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ark.llm._types import LLMError, Message, ToolCall

TOOL_CALL_OPEN = "<tool_call>\n"
TOOL_CALL_CLOSE = "\n</tool_call>"


class ChatTemplate:
    """A Jinja chat template (as GGUF metadata or ``tokenizer_config.json`` carry it)."""

    def __init__(self, template: str) -> None:
        try:
            import jinja2
        except ImportError as exc:  # pragma: no cover - jinja2 comes with [local]/[train]
            raise LLMError("chat templates need jinja2: pip install jinja2") from exc
        env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True)
        env.filters["tojson"] = lambda v: json.dumps(v, ensure_ascii=False)
        self.source = template
        self._template = env.from_string(template)

    @classmethod
    def from_gguf(cls, path: str | Path) -> ChatTemplate:
        """The template stored in a GGUF file's metadata (needs the ``gguf`` package)."""
        try:
            from gguf import GGUFReader
        except ImportError as exc:
            raise LLMError("reading a GGUF's chat template needs: pip install gguf") from exc
        reader = GGUFReader(str(path))
        field = reader.fields.get("tokenizer.chat_template")
        if field is None:
            raise LLMError(f"{path} has no chat template")
        return cls(bytes(field.parts[field.data[0]]).decode("utf-8"))

    def render(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] = (),
        *,
        add_generation_prompt: bool = True,
    ) -> str:
        """The prompt text for ``messages`` with ``tools`` offered, quirks fixed."""
        prompt = self._template.render(
            messages=[template_message(m) for m in messages],
            tools=list(tools) or None,
            add_generation_prompt=add_generation_prompt,
        )
        return fix_call_braces(prompt)


def fix_call_braces(prompt: str) -> str:
    """Undo the doubled braces of the GGUF template's tool-call example."""
    return prompt.replace('{{"name": <function-name>', '{"name": <function-name>').replace(
        "<args-json-object>}}", "<args-json-object>}"
    )


def template_message(m: Message) -> dict[str, Any]:
    """A message as the template expects it: arguments as objects, no None content."""
    d: dict[str, Any] = {"role": m.role, "content": m.content or ""}
    if m.tool_calls:
        d["tool_calls"] = [
            {
                "name": c.name,
                "arguments": c.arguments if c.arguments is not None else c.raw_arguments,
            }
            for c in m.tool_calls
        ]
    return d


def parse_tool_calls(text: str) -> tuple[str, tuple[ToolCall, ...]]:
    """Split Qwen-style output into prose and ``<tool_call>`` JSON blocks."""
    calls = []
    prose = []
    rest = text
    while (start := rest.find("<tool_call>")) != -1:
        prose.append(rest[:start])
        end = rest.find("</tool_call>", start)
        block = rest[start + len("<tool_call>") : end if end != -1 else len(rest)].strip()
        rest = rest[end + len("</tool_call>") :] if end != -1 else ""
        try:
            obj = json.loads(block)
        except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
            obj = None
        if isinstance(obj, dict) and isinstance(obj.get("name"), str):
            args = obj.get("arguments", {})
            calls.append(
                ToolCall(
                    id=f"call_{uuid.uuid4().hex[:12]}",
                    name=obj["name"],
                    arguments=args if isinstance(args, dict) else None,
                    raw_arguments=json.dumps(args, ensure_ascii=False),
                )
            )
        else:
            calls.append(
                ToolCall(f"call_{uuid.uuid4().hex[:12]}", "invalid_tool_call", None, block)
            )
    prose.append(rest)
    return "".join(prose).strip(), tuple(calls)
