"""``ark index describe``: a model's words per relation, stored in the index."""

import json

import pytest
from typer.testing import CliRunner

from _doubles import ScriptedChatModel, json_reply
from ark.cli import app
from ark.describe import describe_index
from ark.index import build_index, open_index
from ark.llm import Message

KB = "Ann|plays_in_club|Rovers\nRovers|plays_in_club_inverse|Ann\nAnn|is_aged|27\n"


@pytest.fixture
def index(tmp_path):
    (tmp_path / "kb.txt").write_text(KB, encoding="utf-8")
    return build_index(tmp_path / "kb.txt", tmp_path / "idx")


def items(**said):
    """A batch reply: ``name=(description, aliases)`` per item."""
    return json_reply(
        {"items": [{"name": n, "description": d, "aliases": a} for n, (d, a) in said.items()]}
    )


def _replies():
    # One call for the two forward relations (most frequent first), one for the type.
    return [
        items(
            plays_in_club=("the club a player plays for", ["club", "team"]),
            is_aged=("how old someone is", ["age", "age"]),
        ),
        items(entity=("a thing", ["player"])),
    ]


def test_describe_asks_once_per_batch_and_stores_it(index):
    model = ScriptedChatModel(_replies(), per_call=True)
    described = describe_index(index, model)
    assert len(model.schemas) == 2 and all(s is not None for s in model.schemas)
    # The reply schema names exactly the batch's relations.
    enum = model.schemas[0]["properties"]["items"]["items"]["properties"]["name"]["enum"]
    assert sorted(enum) == ["is_aged", "plays_in_club"]
    club = described.relation("plays_in_club")
    assert club.aliases == ("club", "team") and club.description.startswith("the club")
    # The stored reverse shares its forward relation's words; duplicates are dropped.
    assert described.relation("plays_in_club_inverse").aliases == ("club", "team")
    assert described.relation("is_aged").aliases == ("age",)
    assert described.type("entity").aliases == ("player",)
    reopened = open_index(index.path)
    assert reopened.described.sources == ("name", "model:scripted-test-model")
    report = reopened.described.layers["model:scripted-test-model"]["report"]
    assert report["calls"] == 2 and report["asked"] == 2 and report["types_asked"] == 1
    # Described again: the earlier model's words are replaced, not piled up.
    again = describe_index(reopened, ScriptedChatModel(_replies(), per_call=True))
    assert again.sources == ("name", "model:scripted-test-model")


def test_words_the_model_echoes_from_the_prompt_are_dropped(index):
    # A small model repeats the prompt's own vocabulary ("head -> tail", "nodes"):
    # no question says "number on head entity".
    replies = [
        items(
            plays_in_club=("the club of the head entity", ["club", "team of head"]),
            is_aged=("the age of the head entity", ["age", "age of tail entity"]),
        ),
        items(entity=("a thing", ["player", "entity"])),
    ]
    described = describe_index(index, ScriptedChatModel(replies, per_call=True))
    assert described.relation("plays_in_club").aliases == ("club",)
    assert described.relation("is_aged").aliases == ("age",)
    assert described.relation("is_aged").description == "the age of the subject"
    # The type's own name is not the prompt's word.
    assert described.type("entity").aliases == ("player", "entity")


def test_a_word_given_to_two_relations_of_a_batch_stays_only_where_the_name_says_it(index):
    # A small model copies one item's words into the next: "team" tells neither apart,
    # "club" stays with the relation whose own name has it.
    replies = [
        items(
            plays_in_club=("the club a player plays for", ["club", "team", "squad"]),
            is_aged=("how old someone is", ["age", "team", "club"]),
        ),
        items(entity=("a thing", ["player"])),
    ]
    described = describe_index(index, ScriptedChatModel(replies, per_call=True))
    assert described.relation("plays_in_club").aliases == ("club", "squad")
    assert described.relation("is_aged").aliases == ("age",)


def test_an_item_that_copies_the_prompts_example_is_rejected(index):
    # Out of its depth, a small model answers with the system prompt's worked example
    # (employed_by's description and aliases): its words are not taken, not even the
    # description, and the rejection is listed; the other item of the batch stays.
    from ark.probes import EXAMPLE_ALIASES

    replies = [
        items(
            plays_in_club=("the club a player plays for", ["club", "team"]),
            is_aged=("the entity a person works for", list(EXAMPLE_ALIASES)),
        ),
        items(entity=("a thing", ["player", "employer", "boss", "job at"])),
    ]
    described = describe_index(index, ScriptedChatModel(replies, per_call=True))
    assert described.relation("plays_in_club").aliases == ("club", "team")
    aged = described.relation("is_aged")
    assert aged.aliases == () and aged.description == ""
    assert described.type("entity").aliases == ()
    layer = open_index(index.path).described.layers["model:scripted-test-model"]
    assert layer["rejected"]["relations.is_aged"] == "the prompt's example copied"


def test_a_relation_named_as_the_example_may_say_its_words(tmp_path):
    (tmp_path / "kb.txt").write_text("Ann|employed_by|Acme\n", encoding="utf-8")
    index = build_index(tmp_path / "kb.txt", tmp_path / "idx")
    from ark.probes import EXAMPLE_ALIASES, EXAMPLE_DESCRIPTION

    replies = [
        items(employed_by=(EXAMPLE_DESCRIPTION, list(EXAMPLE_ALIASES))),
        items(entity=("a thing", ["player"])),
    ]
    described = describe_index(index, ScriptedChatModel(replies, per_call=True))
    assert described.relation("employed_by").aliases == EXAMPLE_ALIASES


def test_a_reply_that_is_not_json_leaves_the_names(index):
    described = describe_index(index, ScriptedChatModel([json_reply("no")] * 2, per_call=True))
    assert described.relation("plays_in_club").aliases == ()
    assert described.relation("plays_in_club").label == "plays in club"


def test_the_cli_describes_through_an_openai_compatible_server(index, monkeypatch):
    pytest.importorskip("openai", reason="the [openai] extra is not installed")
    from fake_openai import FakeOpenAIServer, chat_reply

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    bodies = [
        {
            "items": [
                {"name": "plays_in_club", "description": "the club a player plays for",
                 "aliases": ["club", "team"]},
                {"name": "is_aged", "description": "how old someone is", "aliases": ["age"]},
            ]
        },
        {"items": [{"name": "entity", "description": "a thing", "aliases": []}]},
    ]  # fmt: skip
    relations, types = (chat_reply(content=json.dumps(b)) for b in bodies)

    def respond(request):
        # Describe sends its batches at once to a server: each gets the reply to what
        # it asks about, whichever arrives first.
        asked = request["messages"][-1]["content"]
        return (200, relations if asked.startswith("Relations") else types)

    with FakeOpenAIServer(respond=respond) as server:
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
    from ark.reading import linker_for

    before = linker_for(index, encoder="off").link("which team is Ann on")
    assert before.confident() == []
    describe_index(index, ScriptedChatModel(_replies(), per_call=True))
    after = linker_for(index, encoder="off").link("which team is Ann on")
    assert [link.relation for link in after.confident()] == ["plays_in_club"]


# -- issue 42, item 5: a reply that does not fit changes nothing ----------------------


def _described_once(index):
    describe_index(index, ScriptedChatModel(_replies(), per_call=True))
    return open_index(index.path)


def _item(**fields):
    return json_reply(
        {"items": [{"name": "plays_in_club", **fields}, {"name": "is_aged", **fields}]}
    )


@pytest.mark.parametrize(
    "bad",
    [
        Message(role="assistant", content="Sure! The club a player plays for."),
        Message(role="assistant", content=""),
        Message(role="assistant", content="null"),
        json_reply({"description": "no list", "aliases": ["x"]}),
        json_reply({"items": [], "note": "hi"}),
        _item(desc="other keys", words=["x"]),
        _item(description="extra key", aliases=["x"], note="hi"),
        _item(description="letters", aliases="not a list"),
        _item(description="x" * 5_000_000, aliases=["huge"]),
        _item(description="nul \x00 byte", aliases=["nul"]),
        Message(
            role="assistant",
            content='{"items": [{"name": "is_aged", "description": "lone \\ud800", '
            '"aliases": []}, {"name": "plays_in_club", "description": 12, "aliases": []}]}',
        ),
        json_reply({"items": [{"name": "someone_else", "description": "x", "aliases": []}]}),
    ],
    ids=[
        "prose",
        "empty",
        "null",
        "no-items",
        "extra-top-key",
        "other-keys",
        "extra-key",
        "aliases-not-a-list",
        "5MB",
        "nul",
        "surrogate-and-number",
        "only-a-stranger",
    ],
)
def test_a_reply_that_does_not_fit_changes_nothing_and_says_so(index, bad, caplog):
    reopened = _described_once(index)
    before = reopened.described.to_dict()
    size = max(p.stat().st_size for p in index.path.glob("described*.json"))
    with caplog.at_level("WARNING"):
        after = describe_index(reopened, ScriptedChatModel([bad] * 2, per_call=True))
    assert after.to_dict() == before
    assert open_index(index.path).described.to_dict() == before
    # Two relations and one type, each counted.
    assert sum("does not fit" in r.getMessage() for r in caplog.records) == 3
    assert max(p.stat().st_size for p in index.path.glob("described*.json")) <= size


def test_one_bad_item_keeps_that_relation_and_stores_the_rest(index):
    reopened = _described_once(index)
    replies = [
        json_reply(
            {
                "items": [
                    {"name": "plays_in_club", "description": "letters", "aliases": "not a list"},
                    {"name": "is_aged", "description": "years lived", "aliases": ["years"]},
                ]
            }
        ),
        items(entity=("a person", ["person"])),
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
    assert layer["report"]["rejected"] == 1
