"""Extraction by a model (a scripted one): the JSON reply schema, bad replies counted,
failed calls retried later, tokens and cost, and the passages file it all produces."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from _doubles import LLMError, ScriptedChatModel, json_reply, prose
from ark.cost import Price, PriceTable
from ark.errors import ArkError
from ark.ingest import RESPONSE_SCHEMA, ingest, response_schema, salvage_json
from ark.llm import Message

DOCS = [
    {"id": "ada", "title": "Ada Lovelace", "text": "Ada Lovelace was born in London."},
    {"id": "bab", "title": "Charles Babbage", "text": "Babbage designed the Analytical Engine."},
    {"id": "eng", "title": "Analytical Engine", "text": "The engine was never built."},
]

GOOD = {
    "Ada Lovelace": {
        "entities": ["Ada Lovelace", "London"],
        "triples": [["Ada Lovelace", "born in", "London"]],
    },
    "Charles Babbage": {
        "entities": ["Charles Babbage", "Analytical Engine"],
        "triples": [
            ["Charles Babbage", "designed", "Analytical Engine"],
            ["Charles Babbage", "designed"],  # malformed: dropped and counted
        ],
    },
}


def write_docs(tmp_path: Path, docs: list[dict] = DOCS) -> Path:
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    return path


def title_of(messages: list[Message]) -> str:
    user = next(m.content for m in messages if m.role == "user")
    return user.split("\n", 1)[0].removeprefix("Title: ")


def by_title(replies: dict[str, Message | Exception]):
    """Reply to each chunk by its title (call order does not matter)."""

    def script(messages: list[Message]) -> Message | Exception:
        return replies[title_of(messages)]

    return script


def passages(report) -> list[dict]:
    return [json.loads(line) for line in Path(report.passages).read_text().splitlines()]


def test_replies_become_the_passages_file_and_a_bad_reply_is_counted(tmp_path):
    replies = {t: json_reply(r) for t, r in GOOD.items()}
    replies["Analytical Engine"] = prose("Sorry, I cannot help with that.")
    llm = ScriptedChatModel(by_title(replies))
    report = ingest(write_docs(tmp_path), None, llm=llm, work_dir=tmp_path / "work")

    assert (report.chunks, report.extracted, report.reused) == (3, 3, 0)
    assert report.bad_replies == 1 and report.dropped_triples == 1 and report.failed == 0
    assert (report.entities, report.triples, report.relations) == (4, 2, 2)
    # every call asked for the JSON schema, at temperature 0, with the chunk's title
    assert llm.schemas == [response_schema(d["text"]) for d in DOCS]
    assert sorted(title_of(c) for c in llm.calls) == sorted(d["title"] for d in DOCS)
    rows = passages(report)
    assert [r["id"] for r in rows] == ["ada#0", "bab#0", "eng#0"]
    assert rows[0] == {
        "id": "ada#0",
        "title": "Ada Lovelace",
        "text": "Ada Lovelace was born in London.",
        "doc": "ada",
        "position": 0,
        "entities": ["Ada Lovelace", "London"],
        "triples": [["Ada Lovelace", "born in", "London"]],
    }
    assert rows[1]["triples"] == [["Charles Babbage", "designed", "Analytical Engine"]]
    assert "entities" not in rows[2] and "triples" not in rows[2]  # the bad reply: a passage


def test_tokens_and_cost_are_reported(tmp_path):
    llm = ScriptedChatModel(lambda m: json_reply({"entities": [], "triples": []}))
    prices = PriceTable(default=Price(input=1.0, output=2.0))
    report = ingest(write_docs(tmp_path), None, llm=llm, work_dir=tmp_path / "w", prices=prices)
    # the scripted model counts 10 prompt tokens per message (2 per call) and 5 completion
    assert (report.llm_calls, report.prompt_tokens, report.completion_tokens) == (3, 60, 15)
    assert report.usd == pytest.approx((60 * 1.0 + 15 * 2.0) / 1e6)
    saved = json.loads((tmp_path / "w" / "ingest.json").read_text())
    assert saved["prompt_tokens"] == 60 and saved["extractor"] == report.extractor


def test_replies_that_are_not_lists_and_entity_triples_merged(tmp_path):
    replies = {
        "Ada Lovelace": json_reply({"entities": "Ada", "triples": []}),  # not a list: bad
        "Charles Babbage": json_reply(
            {
                "entities": ["charles  babbage"],
                "triples": [["Charles Babbage", "knew", "Ada"], ["Ada", "is", "ada "]],
            }
        ),
        "Analytical Engine": json_reply(["not", "an", "object"]),  # bad
    }
    report = ingest(
        write_docs(tmp_path),
        None,
        llm=ScriptedChatModel(by_title(replies)),
        work_dir=tmp_path / "w",
    )
    assert report.bad_replies == 2 and report.dropped_triples == 1  # Ada is ada: dropped
    row = passages(report)[1]
    # one spelling per entity key (the first); a triple's ends join the entities
    assert row["entities"] == ["charles babbage", "Ada"]
    assert row["triples"] == [["charles babbage", "knew", "Ada"]]


def test_a_failed_call_is_counted_not_cached_and_retried_on_the_next_run(tmp_path):
    docs = write_docs(tmp_path)
    replies: dict[str, Message | Exception] = {t: json_reply(r) for t, r in GOOD.items()}
    replies["Analytical Engine"] = LLMError("server said 503")
    first = ingest(docs, None, llm=ScriptedChatModel(by_title(replies)), work_dir=tmp_path / "w")
    assert first.failed == 1 and first.extracted == 2
    assert "eng#0: server said 503" in first.errors[0]

    replies["Analytical Engine"] = json_reply({"entities": ["Analytical Engine"], "triples": []})
    llm = ScriptedChatModel(by_title(replies))
    second = ingest(docs, None, llm=llm, work_dir=tmp_path / "w")
    assert [title_of(c) for c in llm.calls] == ["Analytical Engine"]  # only the failed one
    assert (second.failed, second.extracted, second.reused) == (0, 1, 2)
    assert passages(second)[2]["entities"] == ["Analytical Engine"]


def test_a_model_that_fails_on_every_chunk_stops_before_building(tmp_path):
    llm = ScriptedChatModel(lambda m: LLMError("connection refused"))
    with pytest.raises(ArkError, match=r"failed on every chunk .*connection refused"):
        ingest(write_docs(tmp_path), tmp_path / "out.idx", llm=llm, work_dir=tmp_path / "w")
    assert not (tmp_path / "out.idx").exists()


def test_concurrent_calls_give_the_same_result(tmp_path):
    replies = {t: json_reply(r) for t, r in GOOD.items()}
    replies["Analytical Engine"] = json_reply({"entities": ["engine"], "triples": []})
    one = ingest(
        write_docs(tmp_path),
        None,
        llm=ScriptedChatModel(by_title(replies)),
        work_dir=tmp_path / "a",
    )
    many = ingest(
        write_docs(tmp_path),
        None,
        llm=ScriptedChatModel(by_title(replies), delay=0.01),
        work_dir=tmp_path / "b",
        concurrency=3,
    )
    assert passages(one) == passages(many)


def test_a_different_model_does_not_reuse_another_models_extractions(tmp_path):
    docs = write_docs(tmp_path)
    reply = json_reply({"entities": ["x"], "triples": []})
    ingest(docs, None, llm=ScriptedChatModel(lambda m: reply, name="a"), work_dir=tmp_path / "w")
    other = ScriptedChatModel(lambda m: reply, name="b")
    report = ingest(docs, None, llm=other, work_dir=tmp_path / "w")
    assert report.reused == 0 and len(other.calls) == 3


def test_an_output_that_is_not_an_index_is_refused_before_any_model_call(tmp_path):
    out = tmp_path / "precious"
    out.mkdir()
    (out / "thesis.txt").write_text("do not delete")
    llm = ScriptedChatModel(lambda m: json_reply({"entities": [], "triples": []}))
    with pytest.raises(ArkError, match="is not an ARK index"):
        ingest(write_docs(tmp_path), out, llm=llm, work_dir=tmp_path / "w")
    assert llm.calls == []


def test_the_schema_bounds_each_list_by_the_chunks_length():
    """A greedy small model can write one triple until the token limit; the schema's
    bounds end such a loop early. Short chunks get the floor, long ones one triple per
    three words and one entity per two, rounded up to a multiple of 8."""
    short = response_schema("Ada Lovelace was born in London.")
    assert short["properties"]["triples"]["maxItems"] == 8
    assert short["properties"]["entities"]["maxItems"] == 8
    long = response_schema(" ".join(["word"] * 100))
    assert long["properties"]["triples"]["maxItems"] == 40  # ceil(100 / 3) = 34 -> 40
    assert long["properties"]["entities"]["maxItems"] == 56  # 50 -> 56
    # the rest is the documented shape, untouched
    triple = RESPONSE_SCHEMA["properties"]["triples"]["items"]
    assert long["properties"]["triples"]["items"] == triple
    assert "maxItems" not in RESPONSE_SCHEMA["properties"]["triples"]


def test_the_grammar_of_a_bounded_schema_refuses_one_item_more():
    """The bound reaches the local model's decoder: the grammar made from the schema
    (llama.cpp's JSON-schema converter) has room for 8 triples and no ninth."""
    pytest.importorskip("llama_cpp.llama_grammar")
    from ark.llm.local import json_grammar

    rules = dict(
        line.split(" ::= ", 1)
        for line in json_grammar(response_schema("Ada was born in London.")).splitlines()
    )
    assert rules["triples"].count("triples-item") == 8
    assert rules["entities"].count("string") == 8
    unbounded = dict(line.split(" ::= ", 1) for line in json_grammar(RESPONSE_SCHEMA).splitlines())
    assert unbounded["triples"].count("triples-item") < 8  # a loop: no end but max_tokens


class _CutModel(ScriptedChatModel):
    """Replies cut at the token limit: ``finish_reason="length"``, as a backend says."""

    async def complete(self, messages, tools, **kwargs):
        completion = await super().complete(messages, tools, **kwargs)
        return dataclasses.replace(completion, finish_reason="length")


def test_a_reply_cut_at_the_token_limit_keeps_what_was_complete(tmp_path):
    looping = (
        '{"entities": ["Ada Lovelace", "London"], "triples": [["Ada Lovelace", "born in", '
        '"London"], ["Ada Lovelace", "born in", "London"], ["Ada Lovelace", "bo'
    )
    replies = {
        "Ada Lovelace": prose(looping),
        "Charles Babbage": prose('{"entities": ["Charles Bab'),  # nothing whole: bad
        "Analytical Engine": prose("Sorry"),
    }
    report = ingest(
        write_docs(tmp_path), None, llm=_CutModel(by_title(replies)), work_dir=tmp_path / "w"
    )
    assert report.cut_replies == 1 and report.bad_replies == 2
    row = passages(report)[0]
    assert row["entities"] == ["Ada Lovelace", "London"]
    assert row["triples"] == [["Ada Lovelace", "born in", "London"]]  # the repeat once
    saved = [json.loads(x) for x in (tmp_path / "w" / "extractions.jsonl").read_text().splitlines()]
    assert sum(1 for x in saved if x.get("cut")) == 1


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '{"entities": ["A", "B"], "triples": [["A", "x", "B"], ["A", "y"',
            {"entities": ["A", "B"], "triples": [["A", "x", "B"]]},
        ),
        ('{"entities": ["A", "B"], "triples": [', {"entities": ["A", "B"], "triples": []}),
        ('{"entities": ["A", "B"], "tri', {"entities": ["A", "B"]}),
        ('{"entities": ["A", "B\\" C", "D', {"entities": ["A", 'B" C']}),
        ('{"entities": ["A [x]", "B {y}"', {"entities": ["A [x]", "B {y}"]}),
        ('{"entities": []}', {"entities": []}),
        ('{"entities": ["A', {"entities": []}),
        ('{"enti', None),
        ("no json at all", None),
    ],
)
def test_salvage_keeps_whole_items_only(text, expected):
    assert salvage_json(text) == expected


def test_a_reply_past_the_schema_s_bounds_is_held_to_them(tmp_path):
    """A server may ignore the schema: a million entities or a 5 MB name for a short
    chunk are dropped and counted, not stored (issue 67)."""
    docs = tmp_path / "docs.jsonl"
    docs.write_text('{"id": "a", "text": "Ada met Bob in Paris."}\n', encoding="utf-8")
    flood = [f"E{i}" for i in range(100_000)]
    reply = json_reply(
        {"entities": ["Ada", "x" * 5_000_000, *flood], "triples": [["Ada", "met", "Bob"]] * 50}
    )
    report = ingest(docs, None, llm=ScriptedChatModel([reply]), work_dir=tmp_path / "w")
    bound = response_schema("Ada met Bob in Paris.")["properties"]["entities"]["maxItems"]
    assert report.entities <= bound + 2 and report.triples == 1
    assert report.dropped_triples >= 100_000
    cache = (tmp_path / "w" / "extractions.jsonl").read_text()
    assert len(cache) < 10_000
