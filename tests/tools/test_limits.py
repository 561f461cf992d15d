"""Unbounded inputs: what the model sends and what the graph holds are capped in
what the model is shown, and the observation says so."""

import time

import pytest

from ark.index import build_index
from ark.probes import MAX_OBSERVATION_CHARS
from ark.session import ToolSession
from ark.tools import MAX_QUERY_CHARS, NAME_CHARS, GraphTools

HUGE = 20_000_000


@pytest.fixture(scope="module")
def huge_index(tmp_path_factory):
    root = tmp_path_factory.mktemp("huge")
    name = "Giant " + "x" * 1_000_000
    (root / "kb.txt").write_text(
        f"{name}|directed_by|Robert Zemeckis\nForrest Gump|directed_by|Robert Zemeckis\n"
    )
    return build_index(root / "kb.txt", root / "idx")


def test_a_megabyte_query_is_cut_and_says_so(huge_index):
    tools = GraphTools(huge_index)
    query = "Robert Zemeckis " * 70_000  # about 1 MB, the same terms again and again
    tools.search_in_graph("Robert Zemeckis", k=5)  # compiled kernels loaded before timing
    started = time.perf_counter()
    result = tools.search_in_graph(query, k=5)
    assert time.perf_counter() - started < 2.0
    text = result.render()
    assert f"only its first {MAX_QUERY_CHARS - 1:,} were searched" in text
    assert result.hits[0].name == "Robert Zemeckis"
    assert len(text) < 3 * MAX_QUERY_CHARS


def test_a_huge_node_name_is_shown_cut(huge_index):
    session = ToolSession(huge_index)
    zemeckis = huge_index.graph.names.to_pylist().index("Robert Zemeckis")
    outcome = session.call("search_in_neighborhood", {"node_index": zemeckis})
    assert outcome.ok and len(outcome.observation) < 2_000
    assert "Giant xxx" in outcome.observation and "x" * (NAME_CHARS + 1) not in outcome.observation
    giant = next(n for n in outcome.nodes if huge_index.graph.name(n).startswith("Giant"))
    added = session.call("add_to_answer", {"node_indices": [giant]})
    assert len(added.observation) < 2_000


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("search_in_neighborhood", {"node_index": "9" * HUGE}),
        ("search_in_neighborhood", {"node_index": 0, "k": "k" * HUGE}),
        ("search_in_neighborhood", {"node_index": 0, "node_type": "t" * HUGE}),
        ("search_in_neighborhood", {"node_index": 0, "edge_type": ["e" * HUGE]}),
        ("search_in_graph", {"query": "Zemeckis", "x" * HUGE: 1}),
        ("t" * HUGE, {}),
        ("add_to_answer", {"node_indices": ["n" * HUGE]}),
    ],
    ids=["node_index", "k", "node_type", "edge_type", "argument", "tool", "add"],
)
def test_model_input_is_not_echoed_unbounded(huge_index, name, args):
    session = ToolSession(huge_index)
    started = time.perf_counter()
    outcome = session.call(name, args)
    assert not outcome.ok and len(outcome.observation) < 1_000, outcome.observation[:300]
    assert time.perf_counter() - started < 2.0


def test_every_observation_is_capped(huge_index, monkeypatch):
    from ark.probes import session_module as _session

    assert MAX_OBSERVATION_CHARS == 20_000
    monkeypatch.setattr(_session, "MAX_OBSERVATION_CHARS", 60)
    session = ToolSession(huge_index)
    zemeckis = huge_index.graph.names.to_pylist().index("Robert Zemeckis")
    outcome = session.call("search_in_neighborhood", {"node_index": zemeckis})
    assert outcome.observation.startswith("Neighbors of [")
    assert outcome.observation.endswith(
        "(Observation cut at 60 of 333 characters; ask for fewer results with k.)"
    )


def test_control_characters_in_graph_text_are_written_out_not_sent_to_the_terminal(tmp_path):
    """A node called ``ESC[2J…`` would clear the user's screen in ``ark search`` and
    reach an MCP client raw (issue 67): observations and the CLI write it as \\x1b."""
    from typer.testing import CliRunner

    from ark.cli import app

    (tmp_path / "kb.txt").write_text(
        "Evil\x1b[2J\x1b]0;pwned\x07 Film|directed_by|Robert Zemeckis\n", encoding="utf-8"
    )
    index = build_index(tmp_path / "kb.txt", tmp_path / "idx")
    text = GraphTools(index).search_in_graph("Evil Film", k=5).render()
    assert "\x1b" not in text and "\x07" not in text and "\\x1b[2J" in text
    out = CliRunner().invoke(app, ["search", str(tmp_path / "idx"), "Evil Film"]).output
    assert "\x1b[2J" not in out and "\x07" not in out and "x1b" in out
