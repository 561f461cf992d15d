"""Relations read however the graph spells them, and chains only where the graph
leads: a graph built across two languages (DBpedia's English and French properties),
names with letters outside ASCII, a schema without node types."""

import pytest

from _helpers import tsv_index
from ark.reading import read_chain, read_question
from ark.words import SPELLED, tokens, word_match

# Elections lead to French-named people, whose successor and predecessor are French
# relations; English-named people elsewhere have the English ones. No node types.
TWO_LANGUAGES = "\n".join(
    [
        "Austrian_election_1986\tafterElection\tFranz_Vranitzky",
        "Franz_Vranitzky\tprédécesseur\tFred_Sinowatz",
        "Franz_Vranitzky\tsuccesseur\tViktor_Klima",
        "Franz_Vranitzky\tparti\tSPÖ",
        "Irish_election_1997\tafterElection\tBertie_Ahern",
        "Bertie_Ahern\tparty\tFianna_Fáil",
        "Bertie_Ahern\tpredecessor\tJohn_Bruton",
        "Bertie_Ahern\tsuccessor\tBrian_Cowen",
        "John_Bruton\tsuccessor\tBertie_Ahern",
        "Brian_Cowen\tpredecessor\tBertie_Ahern",
        "Brian_Cowen\tspouse\tMary_Molloy",
        "Ahern_House\tlieuDeNaissance\tDublin",
        "Ahern_House\tpartof\tDublin",
        "Ann_Ames\tsuccessor\tBen_Bell",
        "Ben_Bell\tspouse\tCora_Cole",
        "Dan_Dale\tsuccessor\tEve_Earl",
        "Eve_Earl\tparty\tLabour",
    ]
)


@pytest.fixture(scope="module")
def two_languages(tmp_path_factory):
    return tsv_index(tmp_path_factory.mktemp("two_languages"), TWO_LANGUAGES)


def chain_of(index, question):
    reading = read_question(index, question, encoder="off")
    chain = read_chain(index, reading, question, encoder="off")
    return None if chain is None else chain.steps


def test_words_keep_letters_outside_ascii_and_every_camel_case_split():
    assert tokens("prédécesseur") == ["prédécesseur"]
    assert tokens("Comté_de_Benton") == ["comté", "de", "benton"]
    # Every boundary splits, not every other one.
    assert tokens("lieuDeNaissance") == ["lieu", "de", "naissance"]
    assert tokens("Alan_PULIDO plays for NASA") == ["alan", "pulido", "plays", "for", "nasa"]


def test_a_word_spelt_otherwise_matches_below_its_lemma():
    assert word_match("predecessor", "prédécesseur") == SPELLED
    assert word_match("party", "parti") == SPELLED
    assert word_match("football", "foootball") == SPELLED  # a misspelling
    assert word_match("author", "auteur") == SPELLED
    # Two English words spelt alike are two words.
    assert word_match("filmed", "filled") == 0.0
    assert word_match("south", "sud") == 0.0
    # Its own lemma or a derived form stays stronger.
    assert word_match("party", "parties") == 1.0
    assert SPELLED < word_match("directed", "director") < 1.0


def test_a_relation_named_in_french_is_read_from_the_english_word(two_languages):
    """The elected man's predecessor is French-named here: the chain takes it, not the
    English ``predecessor`` that other people have."""
    steps = chain_of(
        two_languages,
        "who is the predecessor of the one after election of Austrian_election_1986 ?",
    )
    assert steps == (("afterElection", "out"), ("prédécesseur", "out"))
    steps = chain_of(
        two_languages,
        "which party does the one after election of Austrian_election_1986 belong to ?",
    )
    assert steps == (("afterElection", "out"), ("parti", "out"))
    # Where the English relation is there, it is read.
    steps = chain_of(
        two_languages, "who is the predecessor of the one after election of Irish_election_1997 ?"
    )
    assert steps == (("afterElection", "out"), ("predecessor", "out"))


def test_the_chain_goes_only_where_the_graph_leads_from_the_node(two_languages):
    """Some successor has a spouse (Ann_Ames's), so the schema allows successor ->
    spouse; Dan_Dale's successor has none: that chain would answer nothing."""
    assert chain_of(two_languages, "who is the spouse of the successor of Ann_Ames ?") == (
        ("successor", "out"),
        ("spouse", "out"),
    )
    steps = chain_of(two_languages, "who is the spouse of the successor of Dan_Dale ?")
    assert steps is not None and ("spouse", "out") not in steps


# A word several relations have (*party*: three English relations here), where the
# graph offers only one of them, the French ``parti``, at the hop that would take it.
SHARED_WORD = "\n".join(
    [
        "Ripley_Formation\tregion\tAlabama",
        "Alabama\tlegislature\tAlabama_Legislature",
        "Alabama_Legislature\tparti\tRepublican_Party",
        "Ann_Ames\tparty\tLabour",
        "Ben_Bell\tstate_party\tLabour_Scotland",
        "Cora_Cole\tparty_list\tList_A",
        "Dan_Dale\tregion\tOhio",
        "Ohio\tlegislature\tOhio_Legislature",
    ]
)


def test_a_shared_word_names_the_one_relation_the_graph_offers_there(tmp_path):
    index = tsv_index(tmp_path, SHARED_WORD)
    steps = chain_of(
        index, "which party does the legislature of the region of Ripley_Formation belong to ?"
    )
    assert steps == (("region", "out"), ("legislature", "out"), ("parti", "out"))
    # Where nothing offers a relation with the word, the chain does not invent a hop.
    steps = chain_of(
        index, "which party does the legislature of the region of Dan_Dale belong to ?"
    )
    assert steps == (("region", "out"), ("legislature", "out"))
