"""``ark index describe``: a model's words per relation, stored in the index."""

import json

import pytest
from typer.testing import CliRunner

from _doubles import ScriptedChatModel, json_reply
from ark.cli import app
from ark.index import build_index, open_index
from ark.linking import describe_index

KB = "Ann|plays_in_club|Rovers\nRovers|plays_in_club_inverse|Ann\nAnn|is_aged|27\n"


@pytest.fixture
def index(tmp_path):
    (tmp_path / "kb.txt").write_text(KB, encoding="utf-8")
    return build_index(tmp_path / "kb.txt", tmp_path / "idx")


def _replies():
    return [
        json_reply({"description": "the club a player plays for", "aliases": ["club", "team"]}),
        json_reply({"description": "how old someone is", "aliases": ["age", "age"]}),
        json_reply({"description": "a thing", "aliases": ["player"]}),
    ]


def test_describe_asks_once_per_forward_relation_and_type_and_stores_it(index):
    model = ScriptedChatModel(_replies(), per_call=True)
    described = describe_index(index, model)
    assert len(model.schemas) == 3 and all(s is not None for s in model.schemas)
    club = described.relation("plays_in_club")
    assert club.aliases == ("club", "team") and club.description.startswith("the club")
    # The stored reverse shares its forward relation's words; duplicates are dropped.
    assert described.relation("plays_in_club_inverse").aliases == ("club", "team")
    assert described.relation("is_aged").aliases == ("age",)
    assert described.type("entity").aliases == ("player",)
    reopened = open_index(index.path)
    assert reopened.described.sources == ("name", "model:scripted-test-model")
    # Described again: the earlier model's words are replaced, not piled up.
    again = describe_index(reopened, ScriptedChatModel(_replies(), per_call=True))
    assert again.sources == ("name", "model:scripted-test-model")


def test_words_the_model_echoes_from_the_prompt_are_dropped(index):
    # A small model repeats the prompt's own vocabulary ("head -> tail", "nodes"):
    # no question says "number on head entity".
    replies = [
        json_reply(
            {"description": "the club of the head entity", "aliases": ["club", "team of head"]}
        ),
        json_reply(
            {"description": "the age of the head entity", "aliases": ["age", "age of tail entity"]}
        ),
        json_reply({"description": "a thing", "aliases": ["player", "entity"]}),
    ]
    described = describe_index(index, ScriptedChatModel(replies, per_call=True))
    assert described.relation("plays_in_club").aliases == ("club",)
    assert described.relation("is_aged").aliases == ("age",)
    assert described.relation("is_aged").description == "the age of the subject"
    # The type's own name is not the prompt's word.
    assert described.type("entity").aliases == ("player", "entity")


def test_a_reply_that_is_not_json_leaves_the_names(index):
    described = describe_index(index, ScriptedChatModel([json_reply("no")] * 3, per_call=True))
    assert described.relation("plays_in_club").aliases == ()
    assert described.relation("plays_in_club").label == "plays in club"


def test_the_cli_describes_through_an_openai_compatible_server(index, monkeypatch):
    pytest.importorskip("openai", reason="the [openai] extra is not installed")
    from fake_openai import FakeOpenAIServer, chat_reply

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    bodies = [
        {"description": "the club a player plays for", "aliases": ["club", "team"]},
        {"description": "how old someone is", "aliases": ["age"]},
        {"description": "a thing", "aliases": []},
    ]
    replies = [(200, chat_reply(content=json.dumps(b))) for b in bodies]
    with FakeOpenAIServer(replies) as server:
        result = CliRunner().invoke(
            app,
            ["index", "describe", str(index.path), "--base-url", server.base_url,
             "--model", "fake-model", "--json"],
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    club = next(r for r in data["relations"] if r["name"] == "plays_in_club")
    assert club["aliases"] == ["club", "team"]
    info = CliRunner().invoke(app, ["info", str(index.path), "--json"])
    assert "the club a player plays for" in info.output


def test_the_linker_reads_the_new_words_after_describe(index):
    from ark.linking import linker_for

    before = linker_for(index, dense="off").link("which team is Ann on")
    assert before.confident() == []
    describe_index(index, ScriptedChatModel(_replies(), per_call=True))
    after = linker_for(index, dense="off").link("which team is Ann on")
    assert [link.relation for link in after.confident()] == ["plays_in_club"]


# -- issue 42, item 5: a reply that does not fit changes nothing ----------------------

from ark.llm import Message  # noqa: E402


def _described_once(index):
    describe_index(index, ScriptedChatModel(_replies(), per_call=True))
    return open_index(index.path)


@pytest.mark.parametrize(
    "bad",
    [
        Message(role="assistant", content="Sure! The club a player plays for."),
        Message(role="assistant", content=""),
        Message(role="assistant", content="null"),
        json_reply({"desc": "other keys", "words": ["x"]}),
        json_reply({"description": "extra key", "aliases": ["x"], "note": "hi"}),
        json_reply({"description": "letters", "aliases": "not a list"}),
        json_reply({"description": "x" * 5_000_000, "aliases": ["huge"]}),
        json_reply({"description": "nul \x00 byte", "aliases": ["nul"]}),
        Message(role="assistant", content='{"description": "lone \\ud800", "aliases": []}'),
        json_reply({"description": 12, "aliases": []}),
    ],
    ids=[
        "prose",
        "empty",
        "null",
        "other-keys",
        "extra-key",
        "aliases-not-a-list",
        "5MB",
        "nul",
        "surrogate",
        "number",
    ],
)
def test_a_reply_that_does_not_fit_changes_nothing_and_says_so(index, bad, caplog):
    reopened = _described_once(index)
    before = reopened.described.to_dict()
    size = max(p.stat().st_size for p in index.path.glob("described*.json"))
    with caplog.at_level("WARNING"):
        after = describe_index(reopened, ScriptedChatModel([bad] * 3, per_call=True))
    assert after.to_dict() == before
    assert open_index(index.path).described.to_dict() == before
    assert sum("does not fit" in r.getMessage() for r in caplog.records) == 3
    assert max(p.stat().st_size for p in index.path.glob("described*.json")) <= size


def test_one_bad_reply_keeps_that_relation_and_stores_the_rest(index):
    reopened = _described_once(index)
    replies = [
        json_reply({"description": "letters", "aliases": "not a list"}),  # plays_in_club
        json_reply({"description": "years lived", "aliases": ["years"]}),  # is_aged
        json_reply({"description": "a person", "aliases": ["person"]}),  # the type
    ]
    after = describe_index(reopened, ScriptedChatModel(replies, per_call=True))
    club = after.relation("plays_in_club")
    assert club.aliases == ("club", "team")  # the earlier words, not "n", "o", "t" ...
    assert after.relation("plays_in_club_inverse").aliases == ("club", "team")
    assert after.relation("is_aged").aliases == ("years",)
    stored = open_index(index.path).described
    assert stored.relation("is_aged").description == "years lived"
    layer = stored.layers["model:scripted-test-model"]
    assert "relations.plays_in_club" in layer["rejected"]
