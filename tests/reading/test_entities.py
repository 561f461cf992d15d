"""Node names found in a question however the question writes them, each scored."""

import pytest

from _helpers import tsv_index
from ark.reading import read_question, spot_entities

NAMES = "\n".join(
    [
        "kalama\tspouse\tkamehameha_iii",
        "prince_miguel_duke_of_viseu\tparents\tafonso_v",
        "Big (1988 film)\tdirected_by\tPenny Marshall",
        "Fall\thas_tags\tscript",
        "The Bat\trelease_year\t1959",
        "Maiden Japan\tgenre\tdouble live album",
        "yale university\tcontained_by\tconnecticut",
        "american beauty\tdirected_by\tsam mendes",
        "american pie\tdirected_by\tpaul weitz",
    ]
)


@pytest.fixture(scope="module")
def names(tmp_path_factory):
    return tsv_index(tmp_path_factory.mktemp("names"), NAMES)


def spotted(index, question):
    return [(e.name, round(e.score, 2)) for e in spot_entities(index, question)]


def test_a_lower_case_one_word_name_no_dictionary_has_is_a_name(names):
    assert spotted(names, "what is the kalama 's husband 's place of death ?") == [("kalama", 0.8)]
    # An English word in lower case is not the node named so: "fall", "script".
    assert spotted(names, "what did the script say in the fall ?") == []


def test_a_name_with_underscores_is_found_written_with_spaces_and_capitals(names):
    assert spotted(names, "who are the parents of Prince Miguel, Duke of Viseu ?") == [
        ("prince_miguel_duke_of_viseu", 1.0)
    ]


def test_common_words_in_lower_case_are_not_part_of_a_name(names):
    """A part of a name ("live album" of "double live album") is no name."""
    question = "Where did the band form that made the live album Maiden Japan?"
    assert spotted(names, question) == [("Maiden Japan", 1.0)]


def test_a_name_is_found_without_its_parenthesis(names):
    assert spotted(names, "who directed Big ?") == [("Big (1988 film)", 0.9)]


def test_one_word_of_a_two_word_name_names_nothing(names):
    """A name is found whole (no rule for leaving out an English head noun)."""
    assert spotted(names, "The Ivy League school Yale is in which US state?") == []
    assert spotted(names, "In which American state is Yale University?") == [
        ("yale university", 1.0)
    ]
    assert spotted(names, "Which American state has the most lakes?") == []
    # An English word written with a capital is not a name's proper word: no "Beauty".
    assert spotted(names, "Is Beauty in the eye of the beholder?") == []


@pytest.mark.slow
def test_a_possessive_name_is_masked_from_the_relation_words(names):
    reading = read_question(names, "who is Kalama's husband ?")
    assert [e.name for e in reading.entities] == ["kalama"]
    assert 2 in reading.linking.entity_positions
