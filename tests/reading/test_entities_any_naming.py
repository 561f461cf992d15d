"""Node names found however the graph and the question write them: a graph that folds
case (a Freebase-style dump), accents dropped, a name written without its dashes or
with one word spelt otherwise; lower-case English words scored by how many nodes
share them, and taken only where nothing surer is named."""

import pytest

from _helpers import tsv_index
from ark.probes import FUZZY
from ark.reading import spot_entities

# Every name in lower case, as FreebaseQA's graph writes them; "film" stands in many
# names, "valet" and "album" in one each.
LOWER = "\n".join(
    [
        "twilight\tauthor\tstephenie meyer",
        "twilight\tgenre\tfilm",
        "film noir\tgenre\tfilm",
        "the film\tgenre\tfilm",
        "film school\tgenre\tfilm",
        "star\tgenre\tfilm",
        "star wars\tgenre\tfilm",
        "dark star\tgenre\tfilm",
        "jeeves\temployer_of\tvalet",
        "night train\tartist\tkasabian",
        "night train\trelease_type\talbum",
        "rené descartes\tquotation\tcogito ergo sum",
        "f-15 strike eagle\tmanufacturer\tmcdonnell douglas",
        "jon van caneghem\tcreated\tmight and magic",
    ]
)


@pytest.fixture(scope="module")
def lower(tmp_path_factory):
    return tsv_index(tmp_path_factory.mktemp("lower"), LOWER)


def spotted(index, question):
    return [(e.name, round(e.score, 2)) for e in spot_entities(index, question)]


def test_a_capital_in_the_question_names_a_node_the_graph_writes_in_lower_case(lower):
    assert spotted(lower, "Who wrote the Twilight series of novels?") == [("twilight", 1.0)]
    # The capital that opens a sentence says nothing: "star" is in three names.
    assert spotted(lower, "Star of which sky is it?") == []


def test_a_lower_case_english_word_is_scored_by_how_many_nodes_share_it(lower):
    # One node has "valet" in its name: a name, if a weaker one than an unknown word.
    (valet,) = spot_entities(lower, "what film had the valet ?")
    assert valet.name == "valet" and 0.5 <= valet.score < 1.0
    # "film" stands in five names: the word the question speaks, not a node.
    assert spotted(lower, "what is a film about ?") == []


def test_a_lower_case_english_word_gives_way_to_a_surer_name(lower):
    assert spotted(lower, "'Night Train' was a number one album for which band?") == [
        ("night train", 1.0)
    ]


def test_a_name_is_found_without_its_accents_dashes_or_with_a_word_misspelt(lower):
    assert spotted(lower, "What did Rene Descartes say?") == [("rené descartes", 1.0)]
    assert spotted(lower, "Which company made the F15 Strike Eagle?") == [
        ("f-15 strike eagle", FUZZY)
    ]
    assert spotted(lower, "What did Jon Van Canegham create?") == [("jon van caneghem", FUZZY)]
