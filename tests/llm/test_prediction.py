"""A predicted call (``complete(prediction=...)``) is drafted, checked token by token:
a reply that copies it is decoded in a few batches and is exactly the reply written
without it; one that does not is written as the model chooses."""

import asyncio

import pytest

from _llm_fixture import SEARCH_TOOL, needs_small, small_model_file
from ark.llm import Message, ToolCall
from ark.probes import predicted_text

HISTORY = [
    Message(role="system", content="You find entities in a movie graph with tools."),
    Message(role="user", content="Find the node for the actor Tom Hanks."),
]


def test_the_predicted_text_is_the_call_as_the_grammar_writes_it():
    text = predicted_text(SEARCH_TOOL, "search_in_graph", {"query": "Tom Hanks"})
    call = '{"name": "search_in_graph", "arguments": {"query": "Tom Hanks"}}'
    assert text == f"<tool_call>\n{call}\n</tool_call>"
    assert predicted_text(SEARCH_TOOL, "search_in_graph", {"nope": 1}) == ""
    assert predicted_text(SEARCH_TOOL, "finish", {}) == ""


@pytest.fixture(scope="module")
def small():
    from ark.llm.local import LocalChatModel

    return LocalChatModel(small_model_file(), n_ctx=4096, n_threads=2, kv_cache=False)


@pytest.mark.slow
@needs_small
def test_a_reply_that_copies_the_prediction_is_drafted_and_unchanged(small):
    def ask(prediction=None):
        small._llm.reset()  # the same cold start for both
        return asyncio.run(
            small.complete(
                HISTORY, SEARCH_TOOL, temperature=0.0, max_tokens=48, prediction=prediction
            )
        )

    plain = ask()
    call = plain.message.tool_calls[0]
    copied = ask(ToolCall("p", call.name, call.arguments, call.raw_arguments))
    assert copied.message.tool_calls[0].arguments == call.arguments
    assert plain.profile.predicted_tokens == 0
    assert copied.profile.predicted_tokens >= 5
    other = ask(ToolCall("p", "search_in_graph", {"query": "zzz qqq"}, "{}"))
    assert other.message.tool_calls[0].arguments == call.arguments
