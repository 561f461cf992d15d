"""The fast extractor on real sentences (spaCy's English pipeline, the [ingest] extra)."""

from __future__ import annotations

import json

import pytest

from ark.errors import ArkError
from ark.ingest import CO_OCCURS, Chunk, FastExtractor, ingest, load_pipeline
from ark.probes import PAIR_SPAN


def _pipeline_installed() -> bool:
    try:
        load_pipeline()
    except ArkError:
        return False
    return True


needs_spacy = pytest.mark.skipif(
    not _pipeline_installed(),
    reason="spaCy and an English pipeline are not installed (pip install '.[ingest]')",
)

CURIE = (
    "Marie Curie was born in Warsaw. She won the Nobel Prize in Physics in 1903 with Pierre Curie."
)
EIFFEL = "The Eiffel Tower is located in Paris, the capital of France."


@pytest.fixture(scope="module")
def fast() -> FastExtractor:
    return FastExtractor()


def extract(fast: FastExtractor, *texts: str):
    return list(fast.extract_many([Chunk("d", i, t) for i, t in enumerate(texts)]))


@needs_spacy
def test_named_entities_and_the_verb_phrase_between_them(fast):
    (curie,) = extract(fast, CURIE)
    assert {"Marie Curie", "Warsaw", "Pierre Curie", "Nobel Prize in Physics"} <= set(
        curie.entities
    )
    assert ["Marie Curie", "born in", "Warsaw"] in curie.triples
    # a pronoun is nobody: dropped, not an entity, in no triple
    assert "She" not in curie.entities
    assert not any("She" in (s, o) for s, _, o in curie.triples)
    # co-occurrence is within a sentence: nothing joins Warsaw and Pierre Curie
    assert not any({s, o} == {"Warsaw", "Pierre Curie"} for s, _, o in curie.triples)


@pytest.mark.parametrize("noun_phrases", [True, False])
@needs_spacy
def test_noun_phrases_are_mentions_too_unless_turned_off(noun_phrases):
    (eiffel,) = extract(FastExtractor(noun_phrases=noun_phrases), EIFFEL)
    assert ["Eiffel Tower", "located in", "Paris"] in eiffel.triples  # the article dropped
    assert ("capital" in eiffel.entities) is noun_phrases
    assert all(e != "The Eiffel Tower" for e in eiffel.entities)


@needs_spacy
def test_two_mentions_joined_by_no_verb_only_co_occur(fast):
    (eiffel,) = extract(fast, EIFFEL)
    assert ["Paris", CO_OCCURS, "France"] in eiffel.triples
    relations = {r for _, r, _ in eiffel.triples}
    assert relations <= {"located in", CO_OCCURS, "of"}


CITIES = [
    "Paris",
    "Lyon",
    "Marseille",
    "Toulouse",
    "Nice",
    "Nantes",
    "Strasbourg",
    "Montpellier",
    "Bordeaux",
    "Lille",
    "Rennes",
    "Reims",
    "Toulon",
    "Grenoble",
    "Dijon",
    "Angers",
    "Nimes",
    "Limoges",
    "Tours",
    "Amiens",
    "Metz",
    "Besancon",
    "Perpignan",
    "Orleans",
    "Rouen",
    "Caen",
    "Nancy",
    "Avignon",
    "Poitiers",
    "Calais",
]


@needs_spacy
def test_a_crowded_sentence_links_near_mentions_not_every_pair(fast):
    """One sentence naming 30 cities (as a list or a table the parser cannot split
    reads): each mention pairs with the next PAIR_SPAN, not with all the others."""
    text = f"The tour visited {', '.join(CITIES[:-1])} and {CITIES[-1]}."
    assert len(list(fast.nlp(text).sents)) == 1
    (tour,) = extract(fast, text)
    pairs = {frozenset((s, o)) for s, _, o in tour.triples}
    named = [c for c in CITIES if c in tour.entities]
    assert len(named) > PAIR_SPAN + 2
    assert frozenset(named[:2]) in pairs  # neighbours are linked
    assert frozenset((named[0], named[-1])) not in pairs  # the ends are not
    assert len(tour.triples) <= PAIR_SPAN * len(tour.entities)
    assert len(tour.triples) < len(tour.entities) * (len(tour.entities) - 1) // 2


@needs_spacy
def test_the_fast_extractor_is_identified_by_its_pipeline_and_version(fast):
    meta = fast.nlp.meta
    assert fast.id.startswith(f"fast:{meta['lang']}_{meta['name']}-{meta['version']}:")
    assert fast.id != FastExtractor(noun_phrases=False).id


@needs_spacy
def test_ingest_fast_writes_passages_with_entities_and_triples(tmp_path):
    docs = tmp_path / "docs.jsonl"
    docs.write_text(
        json.dumps({"id": "curie", "title": "Marie Curie", "text": CURIE})
        + "\n"
        + json.dumps({"id": "eiffel", "text": EIFFEL})
        + "\n"
    )
    report = ingest(docs, None, extractor="fast", work_dir=tmp_path / "w")
    assert report.extractor.startswith("fast:") and report.usd == 0.0 and report.llm_calls == 0
    rows = [json.loads(x) for x in (tmp_path / "w" / "passages.jsonl").read_text().splitlines()]
    assert ["Marie Curie", "born in", "Warsaw"] in rows[0]["triples"]
    again = ingest(docs, None, extractor="fast", work_dir=tmp_path / "w")
    assert again.reused == 2 and again.extracted == 0


def test_fast_refuses_a_model_and_an_unknown_pipeline(tmp_path):
    docs = tmp_path / "docs.jsonl"
    docs.write_text('{"text": "x"}\n')
    with pytest.raises(ArkError, match="calls no model"):
        ingest(docs, None, extractor="fast", model="1.5b", work_dir=tmp_path / "w")
    with pytest.raises(ArkError, match=r"no spaCy pipeline installed|needs spaCy"):
        load_pipeline("no_such_pipeline_xx")


@needs_spacy
def test_a_chunk_longer_than_the_pipeline_reads_is_refused_with_advice(fast):
    huge = Chunk("big", 0, "word " * (fast.nlp.max_length // 5 + 1))
    with pytest.raises(ArkError, match=r"big#0 has .* use a smaller --chunk-tokens"):
        list(fast.extract_many([huge]))


@needs_spacy
def test_a_mention_is_cut_at_a_bracket_it_does_not_close(fast):
    # spaCy's noun chunks of these sentences open a bracket they do not close
    one, two = extract(
        fast,
        "A directory, a read-only run (resume) or an unwritable report directory is an error.",
        "Adapters: MetaQA (schema, question files), STaRK (conversion, candidate types).",
    )
    assert "read-only run" in one.entities
    assert {"STaRK", "candidate types"} <= set(two.entities)
    assert not any("(" in e or ")" in e for e in one.entities + two.entities)


@needs_spacy
def test_a_markdown_document_is_read_as_its_prose_not_its_markup(fast):
    text = (
        "# The `ark.llm` protocol\n\n"
        "See [import-linter](https://import-linter.readthedocs.io/) for the contracts.\n\n"
        "| package | what it holds |\n|---|---|\n| `ark.graph` | typed nodes and edges |\n"
    )
    md, txt = fast.extract_many([Chunk("guide/house.md", 0, text), Chunk("house.txt", 0, text)])
    assert {"ark.llm protocol", "import-linter", "typed nodes"} <= set(md.entities)
    assert not any(c in e for e in md.entities for c in "|`[]")
    # the same text from a file that is not Markdown is read as written
    assert any("|" in e or "`" in e for e in txt.entities)
