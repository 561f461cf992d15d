"""``ark index describe`` at any schema size (issue 41; issue 40 item 2): several
relations per call, no call for what the names already say, a cap on the relations
asked, progress per batch, and a resume that skips the finished batches."""

import json
import re

import pytest
from typer.testing import CliRunner

from _doubles import ScriptedChatModel, json_reply
from ark.cli import app
from ark.describe import describe_index, plan_describe
from ark.index import build_index, open_index
from ark.probes import WORK_FILE, words_of_phrase

#: 20 identifier-named relations, relation ``rel_i`` with ``20 - i`` edges (so the most
#: frequent first is rel_00, rel_01, ...), plus two written as phrases.
N = 20


def _kb() -> str:
    lines = []
    for i in reversed(range(N)):  # the rarest first: schema order is not frequency order
        lines += [f"h{i}_{k}|rel_{i:02d}|t{i}_{k}" for k in range(N - i)]
    lines += ["Ann|was born in|Rome", "Rome|first president of|Club"]
    return "\n".join(lines) + "\n"


@pytest.fixture
def index(tmp_path):
    (tmp_path / "kb.txt").write_text(_kb(), encoding="utf-8")
    return build_index(tmp_path / "kb.txt", tmp_path / "idx")


def _asked(messages) -> list[str]:
    return re.findall(r'^\d+\. "([^"]+)"', messages[-1].content, re.M)


def _answer(names, drop=(), strangers=()):
    out = [
        {"name": n, "description": f"what {n} means", "aliases": [f"{n} word"]}
        for n in names
        if n not in drop
    ]
    out += [{"name": s, "description": "x", "aliases": []} for s in strangers]
    return json_reply({"items": out})


def _model(**kw):
    return ScriptedChatModel(lambda messages: _answer(_asked(messages)), **kw)


def test_relations_are_asked_several_to_a_call(index):
    model = _model()
    described = describe_index(index, model, batch_size=8, max_relations=0)
    asked = [_asked(c) for c in model.calls]
    # 20 relations in batches of 8 (8, 8, 4) and the one node type: four calls.
    assert [len(a) for a in asked] == [8, 8, 4, 1]
    assert asked[0] == [f"rel_{i:02d}" for i in range(8)]  # the most frequent first
    assert described.relation("rel_19").aliases == ("rel_19 word",)
    assert described.relation("rel_00").description == "what rel_00 means"


def test_relations_written_as_phrases_are_not_asked_and_keep_their_words(index):
    model = _model()
    described = describe_index(index, model, max_relations=0)
    asked = {n for c in model.calls for n in _asked(c)}
    assert "was born in" not in asked and "first president of" not in asked
    # A phrase gives itself the alias without its auxiliary.
    assert described.relation("was born in").aliases == ("born in",)
    assert described.relation("first president of").label == "first president of"
    report = described.layers["model:scripted-test-model"]["report"]
    assert report["own_words"] == 2 and report["asked"] == N


def test_words_of_phrase():
    assert words_of_phrase("was born in") == ["born in"]
    assert words_of_phrase("has been mayor of") == ["mayor of"]
    assert words_of_phrase("published by") == []
    assert words_of_phrase("is") == []


def test_a_document_graph_asks_about_types_only(tmp_path):
    from _passages_fixture import build_document_index

    index = build_document_index(tmp_path / "docs")
    model = _model()
    described = describe_index(index, model)
    asked = [n for c in model.calls for n in _asked(c)]
    assert sorted(asked) == ["entity", "passage"]  # one call, for the two node types
    assert len(model.calls) == 1
    assert described.relation("born in").label == "born in"


def test_relations_a_schema_file_described_are_not_asked(tmp_path):
    (tmp_path / "kb.txt").write_text(_kb(), encoding="utf-8")
    (tmp_path / "schema.yaml").write_text(
        "relations:\n  rel_00:\n    description: the zero\n    aliases: [nought]\n"
        "  rel_01:\n    aliases: [only words]\n",
        encoding="utf-8",
    )
    index = build_index(tmp_path / "kb.txt", tmp_path / "idx", schema_file=tmp_path / "schema.yaml")
    model = _model()
    described = describe_index(index, model, max_relations=0)
    asked = {n for c in model.calls for n in _asked(c)}
    assert "rel_00" not in asked  # description and aliases given
    assert "rel_01" in asked  # aliases only: the model still writes a description
    assert described.relation("rel_00").description == "the zero"
    assert described.layers["model:scripted-test-model"]["report"]["from_file"] == 1


def test_the_cap_asks_the_most_frequent_relations_only(index):
    model = _model()
    described = describe_index(index, model, batch_size=8, max_relations=5)
    asked = [n for c in model.calls for n in _asked(c)]
    assert asked == [f"rel_{i:02d}" for i in range(5)] + ["entity"]
    assert described.relation("rel_05").aliases == ()  # beyond the cap: its name's words
    report = described.layers["model:scripted-test-model"]["report"]
    assert report["beyond_cap"] == N - 5 and report["asked"] == 5


def test_plan_ranks_by_frequency_and_counts_the_rest(index):
    from ark.graph import DescribedSchema

    base = DescribedSchema.from_names(index.schema, index.graph)
    plan = plan_describe(base, totals=index.schema.relation_totals(), max_relations=3)
    assert plan.relations == ["rel_00", "rel_01", "rel_02"]
    assert len(plan.beyond_cap) == N - 3
    assert sorted(plan.own_words) == ["first president of", "was born in"]
    with pytest.raises(ValueError, match="max_relations"):
        plan_describe(base, max_relations=-1)


def test_a_partial_or_bad_batch_reply_changes_only_its_relations(index, caplog):
    def script(messages):
        names = _asked(messages)
        if names and names[0] == "rel_00":  # the first batch: two left out, one stranger
            return _answer(names, drop={"rel_03", "rel_05"}, strangers=["not_asked"])
        if names and names[0] == "rel_08":  # the second: not JSON at all
            return json_reply("sorry")
        return _answer(names)

    with caplog.at_level("WARNING"):
        described = describe_index(index, ScriptedChatModel(script), batch_size=8, max_relations=0)
    layer = described.layers["model:scripted-test-model"]
    assert set(layer["rejected"]) == {"relations.rel_03", "relations.rel_05"} | {
        f"relations.rel_{i:02d}" for i in range(8, 16)
    }
    assert layer["rejected"]["relations.rel_03"] == "left out of the batch's reply"
    assert layer["report"]["rejected"] == 10 and layer["report"]["unasked_names"] == 1
    assert described.relation("rel_03").aliases == ()
    assert described.relation("rel_08").aliases == ()
    assert described.relation("rel_04").aliases == ("rel_04 word",)
    assert described.relation("rel_16").aliases == ("rel_16 word",)
    assert "not_asked" not in json.dumps(layer)
    assert sum("does not fit" in r.getMessage() for r in caplog.records) == 10


def test_progress_is_reported_per_batch(index):
    seen = []
    describe_index(
        index, _model(), batch_size=8, max_relations=0, progress=lambda d, t: seen.append((d, t))
    )
    assert seen == [(8, 21), (16, 21), (20, 21), (21, 21)]


class Interrupted(Exception):
    pass


def test_an_interrupted_describe_resumes_without_redoing_finished_batches(index):
    def dies_on_third(messages):
        if len(first.calls) == 3:
            raise Interrupted  # as a Ctrl-C or a killed server would stop it
        return _answer(_asked(messages))

    first = ScriptedChatModel(dies_on_third)
    with pytest.raises(Interrupted):  # one batch at a time: the third and after are lost
        describe_index(index, first, batch_size=8, max_relations=0, concurrency=1)
    assert (index.path / WORK_FILE).exists()
    assert open_index(index.path).described.sources == ("name",)  # nothing stored yet
    again = _model()
    described = describe_index(open_index(index.path), again, batch_size=8, max_relations=0)
    # Only the unfinished relation batch (4 relations) and the type batch are asked.
    assert [len(_asked(c)) for c in again.calls] == [4, 1]
    assert described.relation("rel_00").aliases == ("rel_00 word",)  # from the work file
    assert described.relation("rel_19").aliases == ("rel_19 word",)
    assert described.layers["model:scripted-test-model"]["report"]["resumed_batches"] == 2
    assert not (index.path / WORK_FILE).exists()  # removed once stored


def test_another_models_work_file_is_not_reused(index):
    def dies_on_second(messages):
        if len(first.calls) == 2:
            raise Interrupted
        return _answer(_asked(messages))

    first = ScriptedChatModel(dies_on_second, name="model-a")
    with pytest.raises(Interrupted):
        describe_index(index, first, batch_size=8, max_relations=0, concurrency=1)
    other = _model(name="model-b")
    describe_index(open_index(index.path), other, batch_size=8, max_relations=0)
    assert len(other.calls) == 4


class Counting(ScriptedChatModel):
    """Counts the calls in flight at once."""

    inflight = peak = 0

    async def complete(self, *args, **kwargs):
        self.inflight += 1
        self.peak = max(self.peak, self.inflight)
        try:
            return await super().complete(*args, **kwargs)
        finally:
            self.inflight -= 1


def _stored(described):
    return {r.name: (r.description, r.aliases) for r in described.relations}


def test_batches_are_asked_several_at_once_and_merged_as_one_at_a_time(tmp_path):
    """Four batches in flight (a served model answers them in parallel); a model that
    says it takes one (``max_concurrency``, as the plain local backend does) gets one
    at a time; both store the same words."""
    results = []
    for one in (False, True):
        (tmp_path / f"kb{one}.txt").write_text(_kb(), encoding="utf-8")
        index = build_index(tmp_path / f"kb{one}.txt", tmp_path / f"idx{one}")
        model = Counting(lambda messages: _answer(_asked(messages)), delay=0.01)
        if one:
            model.max_concurrency = 1
        results.append(_stored(describe_index(index, model, batch_size=4, max_relations=0)))
        assert model.peak == (1 if one else 4)
        report = open_index(index.path).described.layers["model:scripted-test-model"]["report"]
        assert report["concurrency"] == model.peak and report["calls"] == 6
    assert results[0] == results[1]


def test_batches_finished_beside_a_failed_one_are_kept_for_the_resume(index):
    def dies_on_second(messages):
        if _asked(messages)[0] == "rel_08":
            raise Interrupted
        return _answer(_asked(messages))

    first = ScriptedChatModel(dies_on_second, delay=0.01)
    with pytest.raises(Interrupted):
        describe_index(index, first, batch_size=8, max_relations=0, concurrency=4)
    again = _model()
    described = describe_index(open_index(index.path), again, batch_size=8, max_relations=0)
    assert [_asked(c)[0] for c in again.calls] == ["rel_08"]  # only the batch that failed
    assert described.relation("rel_19").aliases == ("rel_19 word",)
    assert described.layers["model:scripted-test-model"]["report"]["resumed_batches"] == 3


def test_the_cli_says_what_was_asked_and_what_was_not(index, monkeypatch):
    import ark.llm

    model = _model()
    monkeypatch.setattr(ark.llm, "make_chat_model", lambda **kw: model)
    result = CliRunner().invoke(
        app, ["index", "describe", str(index.path), "--max-relations", "5", "--batch-size", "4"]
    )
    assert result.exit_code == 0, result.output
    out = " ".join(result.output.split())
    assert "Asked the model about 5 relations and 1 node types in 3 calls (4 a call;" in out
    assert re.search(r"[\d,]+ prompt and [\d,]+ reply tokens\)", out)
    assert "from their own words: 2" in out
    assert "15 less frequent relations were not asked about (--max-relations 5)" in out
    assert len(model.calls) == 3


def _words_answer(names, extra=0):
    words = [f"w{k}" for k in range(extra)]
    return json_reply({"items": [{"name": n, "aliases": [f"{n} word", *words]} for n in names]})


def test_words_only_asks_for_no_description_and_stores_the_words(index):
    from ark.probes import DESCRIBE_SYSTEM, WORDS_SYSTEM

    model = ScriptedChatModel(lambda messages: _words_answer(_asked(messages)))
    described = describe_index(
        index, model, batch_size=8, max_relations=3, descriptions=False, max_words=4
    )
    item = model.schemas[0]["properties"]["items"]["items"]
    assert set(item["properties"]) == {"name", "aliases"} and "description" not in item["required"]
    assert item["properties"]["aliases"]["maxItems"] == 4
    assert model.calls[0][0].content == WORDS_SYSTEM != DESCRIBE_SYSTEM
    assert "description" not in model.calls[0][-1].content and "up to 4 aliases" in (
        model.calls[0][-1].content
    )
    rel = described.relation("rel_00")
    assert rel.aliases == ("rel_00 word",) and rel.description == ""
    layer = described.layers["model:scripted-test-model"]
    assert "description" not in layer["relations"]["rel_00"]
    assert layer["report"]["descriptions"] is False and layer["report"]["max_words"] == 4
    assert not layer.get("rejected")


def test_words_only_keeps_at_most_max_words_and_rejects_an_item_with_a_description(index):
    def script(messages):
        names = _asked(messages)
        if names and names[0] == "rel_00":  # one item says more than was asked for
            items = [
                {"name": n, "aliases": [f"{n} {w}" for w in ("word", "a", "b")]} for n in names
            ]
            items[1]["description"] = "not asked for"
            return json_reply({"items": items})
        return _words_answer(names)

    described = describe_index(
        index, ScriptedChatModel(script), max_relations=3, descriptions=False, max_words=2
    )
    assert described.relation("rel_00").aliases == ("rel_00 word", "rel_00 a")  # cut to 2
    layer = described.layers["model:scripted-test-model"]
    assert set(layer["rejected"]) == {"relations.rel_01"}
    assert "expected ['aliases']" in layer["rejected"]["relations.rel_01"]


def test_a_work_file_of_the_other_mode_is_not_reused(index):
    def dies_on_second(messages):
        if len(first.calls) == 2:
            raise Interrupted
        return _answer(_asked(messages))

    first = ScriptedChatModel(dies_on_second)
    with pytest.raises(Interrupted):
        describe_index(index, first, batch_size=8, max_relations=0)
    other = ScriptedChatModel(lambda messages: _words_answer(_asked(messages)))
    describe_index(open_index(index.path), other, batch_size=8, max_relations=0, descriptions=False)
    assert len(other.calls) == 4  # nothing resumed from the run that asked for descriptions


def test_the_report_counts_the_models_tokens(index):
    model = _model()
    described = describe_index(index, model, batch_size=8, max_relations=3)
    report = described.layers["model:scripted-test-model"]["report"]
    assert report["calls"] == 2
    assert report["prompt_tokens"] > 0 and report["completion_tokens"] > 0
