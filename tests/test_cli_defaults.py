"""The defaults that fit the model at hand: with the local model, ``ark ask``/``ark
chat`` run the guided strategy with one agent and ten steps and ``ark ingest`` the fast
extractor, each saying so in one line; with a served model, the paper's."""

from __future__ import annotations

import pytest

from ark.llm import uses_local_model
from ark.probes import LOCAL_DEFAULTS, default_extractor, fitting_defaults


@pytest.fixture(autouse=True)
def _no_endpoint(monkeypatch):
    for name in ("ARK_BASE_URL", "OPENAI_BASE_URL", "OPENAI_API_KEY", "ARK_MODEL"):
        monkeypatch.delenv(name, raising=False)


def test_the_local_model_gets_the_guided_strategy_one_agent_ten_steps(capsys):
    got = fitting_defaults(None, None, None, model=None, base_url=None, adapter=None)
    assert got == LOCAL_DEFAULTS == ("ark-guided", 1, 10)
    said = " ".join(capsys.readouterr().err.split())
    assert "--strategy ark-guided --agents 1 --max-steps 10" in said


def test_a_served_model_gets_the_papers_defaults_and_nothing_is_said(capsys):
    got = fitting_defaults(
        None, None, None, model="m", base_url="http://127.0.0.1:1/v1", adapter=None
    )
    assert got == ("ark", 3, 20)
    assert capsys.readouterr().err == ""


def test_what_the_user_gives_is_kept_and_only_the_rest_is_said(capsys):
    got = fitting_defaults("ark", None, 4, model=None, base_url=None, adapter=None)
    assert got == ("ark", 1, 4)
    said = " ".join(capsys.readouterr().err.split())
    assert "--agents 1" in said and "--strategy" not in said and "--max-steps" not in said


def test_which_model_is_local(monkeypatch):
    assert uses_local_model() and uses_local_model("1.5b")
    assert not uses_local_model(None, "http://127.0.0.1:8000/v1")
    monkeypatch.setenv("ARK_BASE_URL", "http://127.0.0.1:8000/v1")
    assert not uses_local_model()
    monkeypatch.delenv("ARK_BASE_URL")
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    assert not uses_local_model("gpt-4o-mini") and uses_local_model("0.5b")


def test_ingest_reads_with_spacy_unless_a_model_is_named_or_served(capsys):
    pytest.importorskip("spacy")
    assert default_extractor(None, None, as_json=False) == "fast"
    assert "--extractor fast" in " ".join(capsys.readouterr().err.split())
    assert default_extractor("1.5b", None, as_json=False) == "model"
    assert default_extractor("m", "http://127.0.0.1:1/v1", as_json=False) == "model"
    assert capsys.readouterr().err == ""
