"""Chunking: windows of tokens with overlap, positions, any document length."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ark.errors import ArkError
from ark.ingest import Document, chunk_document, chunk_documents, count_tokens
from ark.probes import MAX_WORD, token_spans


def words(n: int) -> str:
    return " ".join(f"w{i}" for i in range(n))


def test_a_short_document_is_one_chunk_holding_its_whole_text():
    doc = Document("d", "  Ada Lovelace wrote notes.\n", "Ada")
    (chunk,) = chunk_document(doc, chunk_tokens=10, overlap=2)
    assert chunk.text == "Ada Lovelace wrote notes."  # stripped, otherwise as written
    assert (chunk.doc, chunk.position, chunk.id, chunk.title) == ("d", 0, "d#0", "Ada")


def test_windows_overlap_by_the_given_tokens_and_cover_the_document():
    chunks = chunk_document(Document("d", words(25)), chunk_tokens=10, overlap=3)
    assert [c.position for c in chunks] == [0, 1, 2, 3]
    assert [c.text.split() for c in chunks] == [
        [f"w{i}" for i in range(0, 10)],
        [f"w{i}" for i in range(7, 17)],
        [f"w{i}" for i in range(14, 24)],
        [f"w{i}" for i in range(21, 25)],
    ]
    for a, b in itertools.pairwise(chunks):
        assert a.text.split()[-3:] == b.text.split()[:3]


def test_the_last_window_ends_at_the_last_token_and_is_not_inside_its_predecessor():
    # 10 tokens, window 8, step 6: [0..7], [6..9]; no third window inside the second
    chunks = chunk_document(Document("d", words(10)), chunk_tokens=8, overlap=2)
    assert [c.text.split()[-1] for c in chunks] == ["w7", "w9"]


def test_a_chunk_keeps_the_documents_own_spacing_and_line_breaks():
    text = "First  line,\nsecond line.\n\nThird paragraph here."
    chunks = chunk_document(Document("d", text), chunk_tokens=4, overlap=1)
    assert chunks[0].text == "First  line,\nsecond"
    for c in chunks:
        assert text[c.start : c.end] == c.text


def test_tokens_are_words_punctuation_and_cjk_characters():
    assert count_tokens("Hello, world!") == 4
    assert count_tokens("東京は日本の首都") == 8  # no spaces: one token per character
    assert count_tokens("x" * (3 * MAX_WORD)) == 3  # a very long run splits
    assert count_tokens("   \n ") == 0


def test_a_document_without_tokens_gives_no_chunk():
    assert chunk_document(Document("d", " \n\t "), chunk_tokens=5, overlap=0) == []


@pytest.mark.parametrize(("size", "overlap"), [(0, 0), (5, 5), (5, 7), (5, -1)])
def test_sizes_that_cannot_advance_are_refused(size, overlap):
    with pytest.raises(ArkError, match=r"chunk-tokens|overlap"):
        chunk_documents([Document("d", "a b c")], chunk_tokens=size, overlap=overlap)


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(min_value=1, max_value=400),
    size=st.integers(min_value=1, max_value=60),
    data=st.data(),
)
def test_any_length_is_covered_in_order_with_exact_overlaps(n, size, data):
    overlap = data.draw(st.integers(min_value=0, max_value=size - 1))
    text = " ".join(f"t{i}," if i % 7 == 3 else f"t{i}" for i in range(n))
    doc = Document("d", text)
    spans = token_spans(text)
    chunks = chunk_document(doc, chunk_tokens=size, overlap=overlap)
    assert [c.position for c in chunks] == list(range(len(chunks)))
    # every chunk: at most `size` tokens, its own text slice
    firsts = []
    for c in chunks:
        inside = [s for s in spans if c.start <= s[0] and s[1] <= c.end]
        assert 1 <= len(inside) <= size
        assert text[c.start : c.end] == c.text
        firsts.append(spans.index(inside[0]))
    # windows start every size-overlap tokens and the last ends at the last token
    assert firsts == [i * (size - overlap) for i in range(len(chunks))]
    assert chunks[0].start == spans[0][0] and chunks[-1].end == spans[-1][1]
    if len(chunks) > 1:  # the last window is not wholly inside the one before it
        assert chunks[-1].end > chunks[-2].end


def _windows_by_spans(text: str, chunk_tokens: int, overlap: int) -> list[tuple[int, int]]:
    """The windows as the list of every token span gives them (the code before issue 67)."""
    spans = token_spans(text)
    if not spans:
        return []
    if len(spans) <= chunk_tokens:
        return [(spans[0][0], spans[-1][1])]
    out, first = [], 0
    while True:
        last = min(first + chunk_tokens, len(spans)) - 1
        out.append((spans[first][0], spans[last][1]))
        if last == len(spans) - 1:
            return out
        first += chunk_tokens - overlap


def test_the_one_pass_windows_are_the_spans_windows():
    import random

    rng = random.Random(0)
    words = ["a", "bb", "ccc", ",", ".", "東", "  ", "\n", "x" * 30]
    for _ in range(300):
        text = "".join(rng.choice(words) + rng.choice(["", " "]) for _ in range(rng.randint(0, 60)))
        size = rng.randint(1, 12)
        overlap = rng.randint(0, size - 1)
        doc = Document("d", text)
        got = [(c.start, c.end) for c in chunk_document(doc, chunk_tokens=size, overlap=overlap)]
        assert got == _windows_by_spans(text, size, overlap), (text, size, overlap)


def test_chunking_a_page_of_punctuation_takes_memory_by_windows_not_tokens():
    import tracemalloc

    text = "!" * 2_000_000  # two million one-character tokens
    tracemalloc.start()
    chunks = chunk_document(Document("p", text), chunk_tokens=512, overlap=64)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert len(chunks) == -(-(2_000_000 - 64) // 448)
    assert peak < 40_000_000  # every span as a tuple: ~250 MB
