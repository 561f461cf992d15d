"""ark.testing: the scripted model a user drives their own pipeline with."""

from ark import Retriever
from ark.testing import ScriptedChatModel, tool_call


def test_a_user_drives_the_retriever_with_the_scripted_model(tmp_path):
    from ark.index import build_index

    (tmp_path / "kb.txt").write_text(
        "Forrest Gump|directed_by|Robert Zemeckis\nCast Away|directed_by|Robert Zemeckis\n",
        encoding="utf-8",
    )
    index = build_index(tmp_path / "kb.txt", tmp_path / "idx")
    zemeckis = next(
        i for i in range(index.graph.n_nodes) if index.graph.name(i) == "Robert Zemeckis"
    )
    model = ScriptedChatModel(
        [
            tool_call("search_in_graph", query="Robert Zemeckis"),
            tool_call("add_to_answer", node_indices=[zemeckis]),
            tool_call("finish"),
        ]
    )
    result = Retriever(index, model, n_agents=1).retrieve("Who directed Forrest Gump?")
    assert [n.index for n in result.ranking] == [zemeckis]
    assert len(model.calls) == 3  # one model call per turn, each seeing the whole history
    assert [m.role for m in model.calls[2]][:2] == ["system", "user"]
