"""``ark ask --why`` and ``--json``: each answer with the paths that reached it."""

import json

import pytest
from typer.testing import CliRunner

from _helpers import node
from ark.cli import app


def ask(index, *flags):  # type: ignore[no-untyped-def]
    """``ark ask`` against a fake server replaying: find Zemeckis, his films, add one."""
    pytest.importorskip("openai", reason="the [openai] extra is not installed")
    from fake_openai import FakeOpenAIServer, chat_reply, function_call

    zemeckis, gump = node(index, "Robert Zemeckis"), node(index, "Forrest Gump")
    calls = [
        ("search_in_graph", '{"query": "Robert Zemeckis"}'),
        ("search_in_neighborhood", f'{{"node_index": {zemeckis}, "edge_type": "directed_by"}}'),
        ("add_to_answer", f'{{"node_indices": [{gump}]}}'),
        ("finish", "{}"),
    ]
    replies = [(200, chat_reply(tool_calls=[function_call(n, a)])) for n, a in calls]
    with FakeOpenAIServer(replies) as server:
        result = CliRunner().invoke(
            app,
            [
                "ask", str(index.path), "which films did Robert Zemeckis direct",
                "--agents", "1", "--base-url", server.base_url, "--model", "fake", *flags,
            ],
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    return result.output, zemeckis, gump


@pytest.mark.slow
def test_ask_why_prints_the_path_under_the_answer(metaqa_index, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out, zemeckis, gump = ask(metaqa_index, "--why")
    assert f"1. [{gump}] Forrest Gump (movie)" in out
    assert "1 vote; added by agent 1 at step 3" in out
    assert (
        f"agent 1: search 'Robert Zemeckis' (step 1) → [{zemeckis}] Robert Zemeckis "
        f"<-directed_by- [{gump}] Forrest Gump (step 2)"
    ) in " ".join(out.split())
    plain, _, _ = ask(metaqa_index)
    assert "<-directed_by-" not in plain  # only when asked


def test_ask_json_has_the_evidence(metaqa_index, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out, zemeckis, gump = ask(metaqa_index, "--json")
    data = json.loads(out)
    (ev,) = data["evidence"]
    assert ev == {
        "node": gump,
        "votes": 1,
        "added_by": [{"agent": 0, "step": 3}],
        "paths": [
            {
                "agent": 0,
                "anchor": zemeckis,
                "query": "Robert Zemeckis",
                "step": 1,
                "hops": [
                    {
                        "center": zemeckis,
                        "relation": "directed_by",
                        "direction": "in",
                        "neighbor": gump,
                        "step": 2,
                    }
                ],
            }
        ],
    }
    assert data["evidence_nodes"][str(gump)] == ["Forrest Gump", "movie"]
    assert data["evidence_nodes"][str(zemeckis)] == ["Robert Zemeckis", "person"]
