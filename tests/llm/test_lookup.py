"""Prompt-lookup decoding (``ark/llm/local/_lookup.py``): drafts copied from the
conversation, kept only where the sampler picks them.

The real-model tests run the 0.5B model on one thread: a tool-calling conversation
decoded with and without drafts gives the same greedy text (the sampler sees the same
positions in the same order), and drafts were kept (the feature did something: with
drafting removed the accepted count is 0).
"""

import asyncio

import pytest

from _llm_fixture import SEARCH_TOOL, needs_small, small_model_file
from ark.llm import LLMError, Message, ToolCall
from ark.probes import SchemaSkeleton, ToolCallSkeleton, lookup_draft
from ark.tools import ToolConfig, tool_specs

# --- the draft itself: pure --------------------------------------------------------


def test_the_draft_copies_what_followed_the_latest_match():
    history = [1, 2, 3, 9, 9, 9, 1, 2, 3, 7, 8, 5, 6, 4, 1, 2, 3]
    assert lookup_draft(history, ngram=3, max_draft=8) == [7, 8, 5, 6]  # latest, not the first
    assert lookup_draft(history, ngram=3, max_draft=3) == [7, 8, 5]


def test_a_shorter_match_earns_a_shorter_draft():
    history = [4, 5, 6, 7, 8, 0, 6]
    assert lookup_draft(history, ngram=3, max_draft=8) == [7]  # only "6" matches
    assert lookup_draft([5, 6, 7, 8, 9, 0, 5, 6], ngram=3, max_draft=8) == [7, 8]
    assert lookup_draft([1, 2, 3, 4], ngram=3) == []  # nothing recurs
    assert lookup_draft([], ngram=3) == [] and lookup_draft([5], ngram=3) == []


def test_the_draft_stops_at_the_end_of_the_history():
    assert lookup_draft([1, 2, 3, 1, 2], ngram=2, max_draft=8) == [3, 1]


def test_the_draft_length_comes_from_the_setting(monkeypatch):
    from ark.probes import MAX_DRAFT, lookup_setting

    monkeypatch.delenv("ARK_LOOKUP", raising=False)
    assert lookup_setting(None) == MAX_DRAFT  # on unless turned off
    monkeypatch.setenv("ARK_LOOKUP", "off")
    assert lookup_setting(None) == 0
    monkeypatch.setenv("ARK_LOOKUP", "on")
    assert lookup_setting(None) == MAX_DRAFT
    monkeypatch.setenv("ARK_LOOKUP", "5")
    assert lookup_setting(None) == 5 and lookup_setting(0) == 0
    monkeypatch.setenv("ARK_LOOKUP", "lots")
    with pytest.raises(LLMError, match="ARK_LOOKUP"):
        lookup_setting(None)


# --- the format's own text: pure ------------------------------------------------------

SKELETON = ToolCallSkeleton(
    tool_specs(None, ToolConfig(multi_neighborhood=True), answer_tools=True)
)
CALL = '<tool_call>\n{"name": "'


@pytest.mark.parametrize(
    ("so_far", "fixed"),
    [
        ("", CALL),
        ("<tool_call>", '\n{"name": "'),
        (CALL, ""),  # which tool: the model's choice
        (CALL + "s", "earch_in_"),  # shared by the two search tools
        (CALL + "search_in_n", 'eighborhood", "arguments": {"node_index":'),
        (CALL + "f", 'inish", "arguments": {}}\n</tool_call>'),
        (CALL + 'search_in_graph", "arguments": {"query": "x", "', 'k":'),
        (CALL + 'search_in_graph", "arguments": {"query": "a, \\"b", ', '"k":'),
        (CALL + 'search_in_neighborhood", "arguments": {"node_index": [1, 2], "', ""),
        (CALL + 'search_in_neighborhood", "arguments": {"node_index": 1, "k', '":'),
        (
            CALL + 'search_in_neighborhood", "arguments": {"node_index": 1, "edge_type": "a", "q',
            'uery":',
        ),
        (CALL + 'search_in_neighborhood", "arguments": {"node_index": 5}', "}\n</tool_call>"),
        (CALL + 'add_to_answer", "arguments": {"node_indices": [5], ', ""),  # no key is left
        (CALL + 'search_in_graph", "arguments": {"query": "Tom', ""),  # a value: the model's
        ('<tool_call>\n{ "name"', ""),  # spaced otherwise: nothing is assumed
    ],
)
def test_the_skeleton_fixes_only_what_the_format_fixes(so_far, fixed):
    assert SKELETON.forced(so_far) == fixed


LOOKUP = {  # the answer step's lookup reply (ark.answer's LOOKUP_SCHEMA)
    "type": "object",
    "properties": {
        "answer": {"type": "string"},
        "citations": {"type": "array", "items": {"type": "integer"}},
    },
    "required": ["answer", "citations"],
}


@pytest.mark.parametrize(
    ("so_far", "fixed"),
    [
        ("", '{"answer":'),
        ("{", '"answer":'),
        ('{"answer": "Port', ""),  # a value: the model's
        ('{"answer": "Port Avel"', ""),  # a comma or the end: the model's
        ('{"answer": "Port Avel",', ' "citations":'),
        ('{"answer": "a, "b"", ', '"citations":'),
        ('{"answer": "x", "citations": [1, 2]', ""),  # no key is left
        ('{"answer": "x", "citations": [1]}', ""),
        ("{\n", ""),  # spaced otherwise: nothing is assumed
        (' {"', ""),
    ],
)
def test_a_schema_reply_s_keys_are_fixed_as_a_call_s_are(so_far, fixed):
    assert SchemaSkeleton(LOOKUP).forced(so_far) == fixed


def test_a_schema_that_is_no_object_with_keys_fixes_nothing():
    optional = {"type": "object", "properties": {"a": {"type": "string"}}}
    for schema in ({"type": "string"}, {"type": "object"}, {"type": "array"}):
        assert SchemaSkeleton(schema).forced("") == ""
    assert SchemaSkeleton(optional).forced("") == "{"  # "}" or the key: the model's


# --- on the real model --------------------------------------------------------------


SYSTEM = "You search a movie graph with the tool. Always call the tool."


def conversation(question: str, then: str = "Now search for Cast Away.") -> list[Message]:
    """A question, one earlier call and its observation: what the next call may copy.
    ``then`` asks for a clear next call: where two are close (*the second movie
    listed*: "Cast" and "Tom" 0.04 apart), the rounding of logits by the size of the
    batch a token is decoded in can pick the other, drafts or not."""
    call = ToolCall("c1", "search_in_graph", {"query": "Tom Hanks"}, '{"query": "Tom Hanks"}')
    return [
        Message(role="system", content=SYSTEM),
        Message(role="user", content=question),
        Message(role="assistant", tool_calls=(call,)),
        Message(
            role="tool",
            tool_call_id="c1",
            name="search_in_graph",
            content="[12] Tom Hanks (person)\n[40] Forrest Gump (movie)\n[41] Cast Away (movie)",
        ),
        Message(role="user", content=then),
    ]


@pytest.fixture(scope="module")
def models():
    from ark.llm.local import LocalChatModel

    path = small_model_file()
    plain = LocalChatModel(path, n_ctx=2048, n_threads=1, kv_cache=False, lookup=0)
    drafted = LocalChatModel(path, n_ctx=2048, n_threads=1, kv_cache=False, lookup=4)
    return plain, drafted


def call(model, messages, temperature):
    reply = model.complete(messages, SEARCH_TOOL, temperature=temperature, max_tokens=40)
    return asyncio.run(reply)


@pytest.mark.slow
@needs_small
def test_drafted_decoding_writes_what_token_by_token_decoding_writes(models):
    """Greedy. (Sampled with a seed, the same draw can pick differently where two
    tokens are close: a token's logits move by llama.cpp's rounding with the batch it
    is decoded in, as they do between a cold and a warm prefix cache.)"""
    plain, drafted = models
    for question, then in (
        ("Which films did Tom Hanks star in?", "Now search for Cast Away."),
        ("Who directed Cast Away?", "Now search for Forrest Gump."),
    ):
        messages = conversation(question, then)
        ref = call(plain, messages, 0.0)
        out = call(drafted, messages, 0.0)
        assert out.message.tool_calls and ref.message.tool_calls
        assert [c.raw_arguments for c in out.message.tool_calls] == [
            c.raw_arguments for c in ref.message.tool_calls
        ]
        assert out.message.content == ref.message.content
        assert out.usage == ref.usage and out.finish_reason == ref.finish_reason
        assert ref.profile.draft_tokens == 0
        # Drafts were checked and some kept: the tool call repeats the earlier one's
        # text, so decodes were saved.
        assert out.profile.draft_tokens > 0 and out.profile.accepted_tokens > 0
        assert out.profile.accepted_tokens <= out.profile.draft_tokens


@pytest.mark.slow
@needs_small
def test_the_cache_stays_true_after_drafts_were_dropped(models):
    """Rejected drafts leave no cells behind: the next call reuses the cached prefix
    and still writes what a fresh model writes."""
    from ark.llm.local import LocalChatModel

    _, drafted = models
    first = conversation("Which films did Tom Hanks star in?")
    call(drafted, first, 0.0)
    second = conversation("Who directed Cast Away?")
    warm = call(drafted, second, 0.0)
    assert warm.profile.reused_tokens > 0
    fresh = LocalChatModel(small_model_file(), n_ctx=2048, n_threads=1, kv_cache=False)
    assert call(fresh, second, 0.0).message.tool_calls[0].raw_arguments == (
        warm.message.tool_calls[0].raw_arguments
    )


@pytest.mark.slow
@needs_small
def test_a_first_call_is_drafted_from_the_format(models):
    """No earlier call to copy from: the tool call's own format (the tool's name once
    its first letters settle it, ``", "arguments": {"query":``, the closing
    ``}\n</tool_call>``) is drafted, and greedy output is unchanged."""
    plain, drafted = models
    messages = [
        Message(role="system", content=SYSTEM),
        Message(role="user", content="Search the graph for Forrest Gump."),
    ]
    ref = call(plain, messages, 0.0)
    out = call(drafted, messages, 0.0)
    assert [c.raw_arguments for c in out.message.tool_calls] == [
        c.raw_arguments for c in ref.message.tool_calls
    ]
    assert out.profile.accepted_tokens >= 12, out.profile
    assert 0 < out.profile.forced_tokens <= out.profile.accepted_tokens
    assert ref.profile.forced_tokens == 0


@pytest.mark.slow
@needs_small
def test_the_decoder_constrains_the_whole_vocabulary_only_when_the_grammar_refuses(
    models, monkeypatch
):
    """The grammar checks the sampled token first (``LazyGrammarSampler``): most tokens
    of a tool call are ones it allows, so the 151k-candidate pass runs on few of them,
    and the greedy call is the one ``create_completion`` writes (test above)."""
    from ark.probes import LazyGrammarSampler
    from ark.probes import local_model as _model

    made: list[LazyGrammarSampler] = []

    class Counting(LazyGrammarSampler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.sampled = 0
            made.append(self)

        def sample(self, ctx, index):
            self.sampled += 1
            return super().sample(ctx, index)

    monkeypatch.setattr(_model, "LazyGrammarSampler", Counting)
    _, drafted = models
    out = call(drafted, conversation("Which films did Tom Hanks star in?"), 0.0)
    assert out.message.tool_calls and len(made) == 1
    sampler = made[0]
    assert sampler.grammar is not None  # the tool-call grammar is on
    assert sampler.sampled >= out.usage.completion_tokens
    assert sampler.resamples < sampler.sampled / 2


@pytest.mark.slow
@needs_small
def test_a_schema_reply_is_drafted_from_its_keys(models):
    """A ``response_schema`` reply (the answer step's lookup): its keys are drafted
    from the schema and greedy output is unchanged."""
    plain, drafted = models
    messages = [
        Message(role="system", content='Answer in JSON: {"answer": "...", "citations": [1]}.'),
        Message(role="user", content="[1] Port Avel: its mayor is Tomas Reed.\nWho is the mayor?"),
    ]

    def ask(model):
        reply = model.complete(messages, [], temperature=0.0, max_tokens=40, response_schema=LOOKUP)
        return asyncio.run(reply)

    ref, out = ask(plain), ask(drafted)
    assert out.data == ref.data and isinstance(out.data, dict)
    assert out.usage == ref.usage
    assert 0 < out.profile.forced_tokens <= out.profile.accepted_tokens
    assert ref.profile.forced_tokens == 0
