"""Parallel agents: concurrency, fusion, result shape, trajectory records."""

import json

import pytest

from _doubles import ScriptedChatModel, tool_call
from _helpers import node
from ark.llm import LLMError
from ark.retrieval import Retriever
from ark.trajectory import read_trajectories, write_trajectories


def zemeckis_script(index, genre_names):
    """Every agent finds the director's films' genres; each adds ``genre_names``."""

    def script(messages):
        turn = sum(1 for m in messages if m.role == "assistant")
        plan = [
            tool_call("search_in_graph", query="Comedy Drama Adventure", k=10),
            tool_call("add_to_answer", node_indices=[node(index, g) for g in genre_names]),
            tool_call("finish"),
        ]
        return plan[min(turn, 2)]

    return script


def test_three_agents_run_concurrently(movie_index):
    """While one agent waits for a reply, the others have already asked: the calls overlap.
    Counted, not timed, so a loaded machine cannot fail it (the timed version did)."""
    inner = zemeckis_script(movie_index, ["Drama"])
    in_flight: list[int] = []

    def script(messages):
        # Calls made so far (recorded before the reply's delay) less those answered.
        in_flight.append(len(model.calls) - len(in_flight))
        return inner(messages)

    model = ScriptedChatModel(script, delay=0.05)
    Retriever(movie_index, model, n_agents=1).retrieve("q")
    assert max(in_flight) == 1  # one agent: one call at a time
    in_flight.clear()
    model.calls.clear()
    Retriever(movie_index, model, n_agents=3).retrieve("q")
    assert max(in_flight) >= 2


def test_vote_fusion_over_agents(movie_index):
    answers = [["Drama", "Comedy"], ["Comedy"], ["Adventure", "Comedy"]]
    agent_of_call = {}

    def script(messages):
        # Same query for every agent: tell them apart by their own system message.
        who = agent_of_call.setdefault(id(messages[0]), len(agent_of_call))
        return zemeckis_script(movie_index, answers[who % 3])(messages)

    retriever = Retriever(movie_index, ScriptedChatModel(script), n_agents=3)
    result = retriever.retrieve("genres of Zemeckis films", question_id="q7")
    ranked = [(r.name, r.votes) for r in result.ranking]
    assert ranked[0] == ("Comedy", 3)
    assert {n for n, _ in ranked} == {"Drama", "Comedy", "Adventure"}
    assert result.question_id == "q7"
    assert len(result.trajectories) == 3
    assert [t.config["agent"] for t in result.trajectories] == [0, 1, 2]
    assert not result.failed


def test_all_agents_failing_is_reported(movie_index):
    model = ScriptedChatModel([LLMError("endpoint unreachable")])
    result = Retriever(movie_index, model, n_agents=2).retrieve("q")
    assert result.failed and result.ranking == []
    assert result.errors == ["endpoint unreachable", "endpoint unreachable"]


def test_trajectories_round_trip_through_jsonl(movie_index, tmp_path):
    model = ScriptedChatModel(zemeckis_script(movie_index, ["Drama", "Comedy"]))
    result = Retriever(movie_index, model, n_agents=2).retrieve("q", question_id="abc")
    path = write_trajectories(tmp_path / "t.jsonl", result.trajectories)
    back = list(read_trajectories(path))
    assert [t.to_dict() for t in back] == [t.to_dict() for t in result.trajectories]
    assert back[0].steps[0].tool_calls[0].name == "search_in_graph"
    text = path.read_text()
    assert all(json.loads(line)["schema_version"] == 1 for line in text.splitlines())


def test_reader_names_the_bad_line(tmp_path):
    import pytest

    from ark.errors import ArkError

    path = tmp_path / "t.jsonl"
    path.write_text('{"schema_version": 1, "query": "q", "model": "m", "config": {}}\nnot json\n')
    with pytest.raises(ArkError, match=r"t.jsonl:2"):
        list(read_trajectories(path))


def test_trajectories_of_a_backend_holding_a_key_do_not_contain_it(movie_index, tmp_path):
    import pytest

    pytest.importorskip("openai", reason="the [openai] extra is not installed")
    from ark.probes import OpenAIChatModel
    from fake_openai import FakeOpenAIServer, chat_reply, function_call

    key = "sk-live-key-that-must-not-leak-0001"
    drama = node(movie_index, "Drama")
    calls = [
        ("search_in_graph", '{"query": "Drama"}'),
        ("add_to_answer", f'{{"node_indices": [{drama}]}}'),
        ("finish", "{}"),
    ]
    replies = [(200, chat_reply(tool_calls=[function_call(n, a)])) for n, a in calls]
    replies.append((401, {"error": {"message": f"key {key} revoked"}}))
    with FakeOpenAIServer(replies) as server:
        model = OpenAIChatModel("m", base_url=server.base_url, api_key=key, backoff=0.0)
        ok = Retriever(movie_index, model, n_agents=1).retrieve("q")
        refused = Retriever(movie_index, model, n_agents=1).retrieve("q")
        assert set(server.auth) == {f"Bearer {key}"}  # the model did hold the key
    assert ok.trajectories[0].answer == [drama] and refused.failed
    path = write_trajectories(tmp_path / "t.jsonl", ok.trajectories + refused.trajectories)
    text = path.read_text()
    assert "revoked" in text and key not in text


def test_sync_retrieve_twice_with_a_keep_alive_server(movie_index):
    import pytest

    pytest.importorskip("openai", reason="the [openai] extra is not installed")
    from ark.probes import OpenAIChatModel
    from fake_openai import FakeOpenAIServer, chat_reply, function_call

    reply = (200, chat_reply(tool_calls=[function_call("search_in_graph", '{"query": "Drama"}')]))
    with FakeOpenAIServer([reply] * 8, keep_alive=True) as server:
        model = OpenAIChatModel("m", base_url=server.base_url, max_retries=0)
        retriever = Retriever(movie_index, model, n_agents=2, max_steps=2)
        for _ in range(2):  # each retrieve() runs its own event loop
            result = retriever.retrieve("q")
            assert [t.stop_reason for t in result.trajectories] == ["max_steps"] * 2, result.errors


def test_late_fusion_with_an_agent_that_errors(movie_index):
    """The failed agent neither votes nor brings its add calls (the lists and the
    batches are of the same agents); before, zip(strict=True) raised ValueError."""
    answers = [["Drama", "Comedy"], None, ["Comedy"]]
    agent_of_call = {}

    def script(messages):
        who = agent_of_call.setdefault(id(messages[0]), len(agent_of_call))
        if answers[who % 3] is None:
            return LLMError("endpoint unreachable")
        return zemeckis_script(movie_index, answers[who % 3])(messages)

    retriever = Retriever(movie_index, ScriptedChatModel(script), n_agents=3, fusion="late")
    result = retriever.retrieve("genres of Zemeckis films")
    assert [t.stop_reason for t in result.trajectories].count("error") == 1
    assert [(r.name, r.votes) for r in result.ranking] == [("Comedy", 2), ("Drama", 1)]
    assert result.errors == ["endpoint unreachable"] and not result.failed


def test_to_dict_is_the_whole_payload_cost_profile_and_evidence_nodes(movie_index):
    from ark.cost import Price, PriceTable

    model = ScriptedChatModel(zemeckis_script(movie_index, ["Drama"]))
    result = Retriever(movie_index, model, n_agents=2).retrieve("genres of Zemeckis films")
    prices = PriceTable(default=Price(input=1.0, output=4.0))
    d = json.loads(json.dumps(result.to_dict(movie_index.graph, prices)))
    # Two agents of three turns; the double counts 10 prompt tokens a message, 5 out.
    assert d["cost"]["llm_calls"] == 6
    tokens = d["cost"]["prompt_tokens"], d["cost"]["completion_tokens"]
    assert tokens[1] == 6 * 5 and d["cost"]["usd"] == pytest.approx(
        (tokens[0] + 4 * tokens[1]) / 1e6
    )
    assert d["profile"]["steps"] == 6
    drama = node(movie_index, "Drama")
    assert d["evidence_nodes"][str(drama)] == ["Drama", movie_index.graph.type_name(drama)]
    # Without a graph or prices: no names, no USD; the trajectories are not annotated.
    bare = result.to_dict()
    assert "evidence_nodes" not in bare and bare["cost"]["usd"] is None
    assert all(t.cost is None for t in result.trajectories)
