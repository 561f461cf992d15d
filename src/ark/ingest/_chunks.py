"""Cutting documents into overlapping chunks of a bounded number of tokens.

A chunk is what becomes one ``passage`` node: a window of the document's tokens,
with the document it came from and its position (0, 1, ...) in that document. Its
text is the document's own text between the window's first and last token, so
spacing, line breaks and punctuation stay as written, and a document that fits in one
window is one chunk whose text is the whole document (stripped): a passage corpus
ingested with a chunk size above its longest passage keeps its passages as they were,
which is what lets gold passages be found again by their text.

Tokens are counted by a regular expression, not by a model's tokenizer: a word (at
most :data:`MAX_WORD` characters; a longer run counts as several tokens, as a
subword tokenizer would split it), one punctuation mark, or one CJK character (those
scripts write no spaces). The extraction model may be the local one, whose tokenizer
needs the model file loaded, or any served model, whose tokenizer is unknown here;
the chunk size is a budget for the extraction prompt and for the passage's length in
BM25, which this count serves. In English prose a model's subword tokenizer gives
about 1.1–1.3 tokens per token counted so; a chunk of 512 counted tokens is about 600
model tokens, the size that Microsoft GraphRAG found to extract about twice as many
entity mentions as 2,400-token chunks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ark.errors import ArkError
from ark.ingest._documents import Document

__all__ = ["Chunk", "chunk_document", "chunk_documents", "count_tokens", "token_spans"]

#: Longest word counted as one token.
MAX_WORD = 24
_CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN = re.compile(rf"[{_CJK}]|[^\W{_CJK}]{{1,{MAX_WORD}}}|[^\w\s]")

#: Defaults: about 600 model tokens per chunk, an eighth of it shared with the next.
CHUNK_TOKENS = 512
OVERLAP = 64


@dataclass(frozen=True, slots=True)
class Chunk:
    """One passage cut from a document: its id is ``"<doc>#<position>"``."""

    doc: str
    position: int
    text: str
    title: str | None = None
    #: Where the chunk starts and ends in the document's text (characters).
    start: int = 0
    end: int = 0

    @property
    def id(self) -> str:
        return f"{self.doc}#{self.position}"


def token_spans(text: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` character offsets of ``text``'s tokens."""
    return [m.span() for m in _TOKEN.finditer(text)]


def count_tokens(text: str) -> int:
    """How many tokens ``text`` has, counted as chunks count them."""
    return sum(1 for _ in _TOKEN.finditer(text))


def check_sizes(chunk_tokens: int, overlap: int) -> None:
    """A chunk must hold at least one token, and the overlap must leave each window
    at least one token of its own (otherwise chunking never advances)."""
    if chunk_tokens < 1:
        raise ArkError(f"--chunk-tokens must be at least 1, got {chunk_tokens}")
    if overlap < 0 or overlap >= chunk_tokens:
        raise ArkError(
            f"--overlap must be at least 0 and below --chunk-tokens ({chunk_tokens}), got {overlap}"
        )


def chunk_document(
    doc: Document, *, chunk_tokens: int = CHUNK_TOKENS, overlap: int = OVERLAP
) -> list[Chunk]:
    """``doc`` as windows of ``chunk_tokens`` tokens, each starting ``chunk_tokens -
    overlap`` tokens after the previous one; the last window ends at the document's
    last token (no window lies wholly inside its predecessor). A document without
    tokens (only spaces) gives no chunk."""
    check_sizes(chunk_tokens, overlap)
    step = chunk_tokens - overlap
    # One pass over the tokens keeping only the windows' ends: memory by the number of
    # windows, not of tokens (a list of every span of a large page ran out, issue 67).
    starts: list[int] = []  # window k's first character
    full_ends: list[int] = []  # window k's last character, for windows of chunk_tokens
    n = 0
    last_end = 0
    for i, match in enumerate(_TOKEN.finditer(doc.text)):
        start, last_end = match.span()
        if i % step == 0:
            starts.append(start)
        j = i - (chunk_tokens - 1)
        if j >= 0 and j % step == 0:
            full_ends.append(last_end)
        n = i + 1
    if n == 0:
        return []
    if n <= chunk_tokens:
        return [Chunk(doc.id, 0, doc.text[starts[0] : last_end], doc.title, starts[0], last_end)]
    chunks: list[Chunk] = []
    for k, start in enumerate(starts):
        full = k * step + chunk_tokens <= n
        end = full_ends[k] if full else last_end
        chunks.append(Chunk(doc.id, k, doc.text[start:end], doc.title, start, end))
        if not full or k * step + chunk_tokens == n:
            return chunks
    return chunks


def chunk_documents(
    docs: Iterable[Document], *, chunk_tokens: int = CHUNK_TOKENS, overlap: int = OVERLAP
) -> list[Chunk]:
    """Every document's chunks, in document order."""
    check_sizes(chunk_tokens, overlap)
    return [c for d in docs for c in chunk_document(d, chunk_tokens=chunk_tokens, overlap=overlap)]
