"""Names written as one word are found from their words, and still whole."""

from ark.index import Tokenizer, TokenizerConfig, build_index
from ark.tools import GraphTools


def test_a_name_written_with_underscores_or_camelcase_gives_its_parts():
    tok = Tokenizer()
    assert tok.tokens("prince_miguel_duke_of_viseu") == [
        "prince_miguel_duke_of_viseu",
        "prince",
        "miguel",
        "duke",
        "viseu",
    ]
    assert set(tok.tokens("BarackObama")) == {"barackobama", "barack", "obama"}
    assert {"jean", "luc", "picard"} <= set(tok.tokens("Jean-Luc_Picard"))
    # Plain words give exactly what they gave before.
    assert tok.tokens("Tom Hanks starred in Forrest Gump (1994).") == Tokenizer(
        TokenizerConfig(split_names=False)
    ).tokens("Tom Hanks starred in Forrest Gump (1994).")


def test_an_index_written_before_the_option_reads_without_it():
    old = TokenizerConfig.from_dict(
        {"lower": True, "token_pattern": r"(?u)\b\w\w+\b", "stopwords": "en", "stemmer": None}
    )
    assert old.split_names is False
    assert TokenizerConfig.from_dict(TokenizerConfig().to_dict()).split_names is True


def test_global_search_finds_an_underscored_name_from_its_words(tmp_path):
    kb = tmp_path / "kb.tsv"
    kb.write_text(
        "prince_miguel_duke_of_viseu\tparents\tafonso_v_of_portugal\n"
        "prince_miguel_duke_of_viseu\tplace_of_birth\tlisbon\n"
        "manuel_i\tplace_of_birth\talcochete\n",
        encoding="utf-8",
    )
    tools = GraphTools(build_index(kb, tmp_path / "idx"))
    for query in ("Prince Miguel, Duke of Viseu", "prince miguel duke of viseu"):
        hits = tools.search_in_graph(query).hits
        assert hits and hits[0].name == "prince_miguel_duke_of_viseu", query
    # The whole name still finds it, as before.
    assert tools.search_in_graph("prince_miguel_duke_of_viseu").hits[0].name == (
        "prince_miguel_duke_of_viseu"
    )
