"""``ark index describe`` drops a model's word that the reading's encoder puts nearer
another relation the same nodes have (the 1.5B gave MetaQA's cast *screenplay*)."""

import numpy as np
import pytest

from _doubles import ScriptedChatModel, json_reply
from ark.describe import describe_index
from ark.index import build_index, dense_available
from ark.probes import rival_relations, rival_words

needs_encoder = pytest.mark.skipif(
    not dense_available(),
    reason="checks words with the sentence encoder: needs the [dense] extra",
)

# Three films with cast, director and writer side by side; one with a language.
FILMS = """\
Big|starred_actors|Tom Hanks
Big|directed_by|Penny Marshall
Big|written_by|Gary Ross
Awakenings|starred_actors|Robin Williams
Awakenings|directed_by|Penny Marshall
Awakenings|written_by|Steven Zaillian
Cast Away|starred_actors|Tom Hanks
Cast Away|directed_by|Robert Zemeckis
Cast Away|written_by|William Broyles
Cast Away|in_language|English
"""


@pytest.fixture
def films(tmp_path):
    (tmp_path / "kb.txt").write_text(FILMS, encoding="utf-8")
    return build_index(tmp_path / "kb.txt", tmp_path / "idx")


def test_rivals_are_the_relations_most_of_a_relations_nodes_also_have(films):
    d = films.described
    rivals = rival_relations(films.graph, d.canonical, ["starred_actors", "in_language"])
    # Every film with a cast has a director and a writer; one in three has a language.
    assert rivals["starred_actors"] == {"directed_by", "written_by"}
    # The one film with a language has all three others.
    assert rivals["in_language"] == {"starred_actors", "directed_by", "written_by"}
    # A lower share asked: the language counts too.
    assert (
        "in_language"
        in rival_relations(films.graph, d.canonical, ["starred_actors"], share=0.3)[
            "starred_actors"
        ]
    )


class _Vectors:
    """An encoder double: each text's vector looked up by its first word."""

    def __init__(self, table):
        self.table = table

    def encode(self, texts):
        return np.array([self.table[t.split(":")[0].split()[0]] for t in texts], dtype=np.float32)


def test_a_word_nearer_a_rival_is_dropped_and_one_the_name_says_stays(films):
    enc = _Vectors(
        {
            "starred": [1.0, 0.0, 0.0],
            "directed": [0.0, 1.0, 0.0],
            "written": [0.0, 0.0, 1.0],
            "cast": [0.9, 0.1, 0.0],
            "screenplay": [0.1, 0.2, 0.9],
            "actors": [0.0, 1.0, 0.0],  # nearer the director, but the name says it
            "credits": [0.6, 0.0, 0.5],  # about as near both: stays
        }
    )
    words = {"starred_actors": ["cast", "screenplay", "actors", "credits"]}
    rivals = {"starred_actors": {"directed_by", "written_by"}}
    dropped = rival_words(films.described, words, rivals, enc)
    assert dropped == {"starred_actors": ["screenplay"]}
    # With no rival, nothing is compared.
    assert rival_words(films.described, words, {"starred_actors": set()}, enc) == {}


def _reply():
    # The words the local 1.5B gave MetaQA's relations (session 55), screenplay included.
    return json_reply(
        {
            "items": [
                {"name": "starred_actors", "description": "the actors who have starred in a movie",
                 "aliases": ["actors", "cast", "screenplay"]},
                {"name": "directed_by", "description": "the person who directed a movie",
                 "aliases": ["director"]},
                {"name": "written_by", "description": "the person who wrote a movie",
                 "aliases": ["writer", "script"]},
                {"name": "in_language", "description": "the language of a film",
                 "aliases": ["language"]},
            ]
        }
    )  # fmt: skip


@needs_encoder
def test_describe_stores_the_words_without_the_rivals_and_says_which(films):
    described = describe_index(films, ScriptedChatModel([_reply()] * 2, per_call=True))
    cast = described.relation("starred_actors")
    assert "screenplay" not in cast.aliases and {"actors", "cast"} <= set(cast.aliases)
    assert described.relation("written_by").aliases[:2] == ("writer", "script")
    layer = described.layers["model:scripted-test-model"]
    assert layer["dropped"] == {"starred_actors": ["screenplay"]}
    assert layer["report"]["rival_words"] == 1
    assert layer["report"]["encoder"] == "all-MiniLM-L6-v2"


def test_describe_without_the_encoder_keeps_the_words_and_says_so(films):
    described = describe_index(
        films, ScriptedChatModel([_reply()] * 2, per_call=True), encoder="off"
    )
    assert "screenplay" in described.relation("starred_actors").aliases
    report = described.layers["model:scripted-test-model"]["report"]
    assert report["encoder"] is None and "rival_words" not in report
