"""``response_schema=`` on the backends: JSON mode on a server (with a fallback when
the server refuses a schema) and a grammar from the schema on the local model."""

import asyncio
import importlib.util
import json

import pytest

from ark.llm import LLMError, Message, parse_json_reply

SCHEMA = {
    "type": "object",
    "properties": {"verdict": {"enum": ["yes", "no"]}, "keep": {"type": "array"}},
    "required": ["verdict"],
}
ASK = [Message(role="system", content="Judge."), Message(role="user", content="Is it?")]
TOOLS = [{"type": "function", "function": {"name": "t", "parameters": {"type": "object"}}}]


def test_parse_json_reply_finds_the_value_inside_prose_or_a_fence():
    assert parse_json_reply('{"a": 1}') == {"a": 1}
    assert parse_json_reply('Sure:\n```json\n{"a": [1, 2]}\n```') == {"a": [1, 2]}
    assert parse_json_reply("no json here") is None
    assert parse_json_reply('{"a": ') is None


def test_openai_sends_a_json_schema_without_tools_and_parses_the_reply(monkeypatch):
    pytest.importorskip("openai")
    from ark.probes import OpenAIChatModel
    from fake_openai import FakeOpenAIServer, chat_reply

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeOpenAIServer([(200, chat_reply('{"verdict": "no"}'))]) as server:
        model = OpenAIChatModel("m", base_url=server.base_url)
        out = asyncio.run(model.complete(ASK, TOOLS, response_schema=SCHEMA))
    sent = server.requests[0]
    assert "tools" not in sent
    assert sent["response_format"]["type"] == "json_schema"
    assert sent["response_format"]["json_schema"]["schema"] == SCHEMA
    assert out.data == {"verdict": "no"} and out.message.content == '{"verdict": "no"}'


def test_openai_falls_back_to_json_mode_when_the_schema_is_refused(monkeypatch):
    pytest.importorskip("openai")
    from ark.probes import OpenAIChatModel
    from fake_openai import FakeOpenAIServer, chat_reply

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    refusal = (400, {"error": {"message": "response_format json_schema not supported"}})
    replies = [refusal, (200, chat_reply('{"verdict": "yes"}')), (200, chat_reply("{}"))]
    with FakeOpenAIServer(replies) as server:
        model = OpenAIChatModel("m", base_url=server.base_url, backoff=0.0)
        out = asyncio.run(model.complete(ASK, (), response_schema=SCHEMA))
        asyncio.run(model.complete(ASK, (), response_schema=SCHEMA))
    formats = [r["response_format"]["type"] for r in server.requests]
    assert formats == ["json_schema", "json_object", "json_object"]  # remembered
    assert out.data == {"verdict": "yes"} and model.json_mode == "json_object"


def test_openai_without_a_schema_sends_no_response_format(monkeypatch):
    pytest.importorskip("openai")
    from ark.probes import OpenAIChatModel
    from fake_openai import FakeOpenAIServer, chat_reply

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeOpenAIServer([(200, chat_reply("hi")), (400, {})]) as server:
        model = OpenAIChatModel("m", base_url=server.base_url, backoff=0.0)
        out = asyncio.run(model.complete(ASK, TOOLS))
        with pytest.raises(LLMError, match="refused"):
            asyncio.run(model.complete(ASK, TOOLS))  # a 400 without a schema is final
    assert "response_format" not in server.requests[0] and out.data is None


needs_llama = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python is not installed"
)


@needs_llama
def test_local_grammar_from_the_graphsearch_schemas_compiles(metaqa_index):
    from llama_cpp import LlamaGrammar

    from ark.llm.local import json_grammar
    from ark.strategies.graphsearch import prompts

    schemas = [
        prompts.plan_schema(metaqa_index.schema.relation_names),
        prompts.refinement_schema([1, 2, 3]),
        prompts.drafting_schema([]),
        prompts.VERIFICATION_SCHEMA,
        prompts.GROUNDING_SCHEMA,
    ]
    for schema in schemas:
        grammar = json_grammar(schema)
        LlamaGrammar.from_string(grammar, verbose=False)
    plan = json_grammar(schemas[0])
    assert '"\\"directed_by\\""' in plan  # relations are an enum in the grammar
    assert json.loads(json.dumps(schemas[0]))  # schemas are plain JSON
