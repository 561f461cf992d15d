"""Chat formatting without a model: importable without llama.cpp, same text as the
local backend renders."""

import subprocess
import sys

from ark.llm import Message, ToolCall
from ark.llm.local import ChatTemplate, fix_call_braces

#: A miniature of Qwen2.5's template: tools, the doubled-brace example, tool calls.
TEMPLATE = """{% for m in messages %}<|im_start|>{{ m.role }}
{% if m.role == 'system' and tools %}{% for t in tools %}{{ t | tojson }}
{% endfor %}{{ '{{"name": <function-name>, "arguments": <args-json-object>}}' }}
{% endif %}{{ m.content }}{% if m.tool_calls %}{% for c in m.tool_calls %}<tool_call>
{{ c | tojson }}
</tool_call>{% endfor %}{% endif %}<|im_end|>
{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant
{% endif %}"""


def test_render_fixes_braces_and_passes_arguments_as_objects():
    call = ToolCall("c1", "search_in_graph", {"query": "Tom Hanks"}, '{"query": "Tom Hanks"}')
    messages = [
        Message("system", "You search."),
        Message("user", "Who?"),
        Message("assistant", "", tool_calls=(call,)),
    ]
    tools = [{"type": "function", "function": {"name": "search_in_graph"}}]
    text = ChatTemplate(TEMPLATE).render(messages, tools)
    assert '{"name": <function-name>, "arguments": <args-json-object>}' in text
    assert "{{" not in text
    # arguments as an object: no escaped quotes of a JSON string inside JSON
    assert '{"name": "search_in_graph", "arguments": {"query": "Tom Hanks"}}' in text
    assert text.endswith("<|im_start|>assistant\n")
    assert fix_call_braces("x") == "x"


def _loaded_after(statement: str) -> list[str]:
    """Which of the local engine and llama.cpp a fresh interpreter has loaded after
    ``statement``."""
    code = (
        f"import sys; {statement}; "
        "print(*[m for m in ('ark.llm.local', 'llama_cpp') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_importing_ark_llm_loads_neither_the_local_engine_nor_llama_cpp():
    """``make_chat_model`` imports the engine when it builds a local model, not before:
    a program that talks to a server never pays for (or needs) llama.cpp."""
    assert _loaded_after("import ark, ark.llm, ark.retrieval, ark.strategies") == []


def test_importing_the_chat_template_does_not_load_llama_cpp():
    """SFT rendering and ``ark llm-cache stats`` read the engine's template and files
    without llama.cpp installed."""
    assert _loaded_after("import ark.llm.local") == ["ark.llm.local"]
