"""Session observers: the session renders their parts into the observation, keeps the
parts beside it and knows nothing else of them; the chain hints are one, composed by
``ark-guided``, and read a question once."""

import asyncio
from collections import OrderedDict

import pytest

from _doubles import ScriptedChatModel, calls, tool_call
from _helpers import node
from ark.probes import hints_chain as _chain
from ark.retrieval import Retriever
from ark.session import Hint, NextCall, Note, Part, SessionObserver, ToolSession
from ark.strategies import Agent, ChainHints, GuidedAgent
from ark.strategies.guided.hints import question_reading
from ark.tools import ToolConfig


class Recorder(SessionObserver):
    """Says which hook ran, with what it saw, in parts tagged with its name."""

    def __init__(self, tag: str) -> None:
        self.tag = tag
        self.seen: list[tuple] = []

    def after_search(self, session, name, arguments, result, centers):
        self.seen.append(("search", name, len(result.hits), list(centers)))
        return Hint(f"{len(result.hits)} hits", self.tag, nodes=tuple(centers))

    def after_repeat(self, session, name, arguments):
        self.seen.append(("repeat", name))
        return Hint("a repeat.", self.tag)

    def after_add(self, session, added):
        self.seen.append(("add", list(added), list(session.answer)))
        return Note("added.", self.tag, (NextCall("finish", {}),), tuple(added))


def test_observers_parts_are_rendered_in_order_after_the_session_state(movie_index):
    first, second = Recorder("A"), Recorder("B")
    s = ToolSession(movie_index, observers=[first, second])
    plain = ToolSession(movie_index)
    hanks = node(movie_index, "Tom Hanks")
    found = s.call("search_in_graph", {"query": "Tom Hanks"})
    assert [(p.kind, p.text) for p in found.parts] == [("A", "1 hits"), ("B", "1 hits")]
    # Rendered at the edge: each part on a line of its own after the results.
    bare = plain.call("search_in_graph", {"query": "Tom Hanks"}).observation
    assert found.observation == "\n".join([bare, *(p.render() for p in found.parts)])
    hop = s.call("search_in_neighborhood", {"node_index": hanks})
    assert first.seen[-1] == ("search", "search_in_neighborhood", len(hop.nodes), [hanks])
    assert hop.parts[0].nodes == (hanks,)
    assert s.explored == [hanks]
    again = s.call("search_in_neighborhood", {"node_index": hanks})
    # After a refused repeat or an add, the parts continue the session's sentences.
    assert again.code == "repeated_call" and [p.kind for p in again.parts] == ["A", "B"]
    assert again.observation.endswith(" " + " ".join(p.render() for p in again.parts))
    added = s.call("add_to_answer", {"node_indices": hop.nodes[:1]})
    assert [(p.kind, p.nodes) for p in added.parts] == [
        ("A", (hop.nodes[0],)),
        ("B", (hop.nodes[0],)),
    ]
    assert all(isinstance(p, Note) and p.call == NextCall("finish", {}) for p in added.parts)
    assert added.observation.endswith(" " + " ".join(p.render() for p in added.parts))
    assert first.seen[-1] == ("add", hop.nodes[:1], hop.nodes[:1])  # after the answer grew
    # Nothing added: no hook; a search without hits is still seen, its empty line not.
    s.call("add_to_answer", {"node_indices": hop.nodes[:1]})
    assert first.seen[-1][0] == "add" and len([x for x in first.seen if x[0] == "add"]) == 1
    s.call("search_in_neighborhood", {"node_index": hanks, "node_type": "genre"})
    assert first.seen[-1] == ("search", "search_in_neighborhood", 0, [hanks])
    assert second.seen == first.seen


@pytest.mark.slow
def test_hints_are_switched_on_one_way_an_observer_the_strategy_composes(movie_index):
    question = "What genres are the films directed by Robert Zemeckis?"
    # The session has no switch of its own: it knows only the observer protocol.
    with pytest.raises(TypeError, match="hints"):
        ToolSession(movie_index, hints=True, question=question)  # type: ignore[call-arg]
    guided = GuidedAgent(movie_index, ScriptedChatModel([]))
    from_strategy = guided.new_session(question)
    (hints,) = from_strategy.observers
    assert isinstance(hints, ChainHints) and hints.question == question
    composed = ToolSession(movie_index, observers=[ChainHints(movie_index, question)])
    zemeckis = node(movie_index, "Robert Zemeckis")
    script = [
        ("search_in_graph", {"query": "Robert Zemeckis"}),
        ("search_in_neighborhood", {"node_index": zemeckis, "edge_type": "directed_by"}),
        ("search_in_neighborhood", {"node_index": zemeckis, "edge_type": "directed_by"}),
        ("add_to_answer", {"node_indices": [zemeckis]}),
    ]
    for name, arguments in script:
        a, b = from_strategy.call(name, arguments), composed.call(name, arguments)
        assert a.observation == b.observation and a.parts == b.parts
        assert len(a.parts) == 1 and isinstance(a.parts[0], Hint | Note)


def test_an_observer_written_before_the_parts_still_adds_its_line(movie_index):
    """A bare string from a hook is a plain part with that text; an empty one is none."""

    class Bare(SessionObserver):
        def after_search(self, session, name, arguments, result, centers):
            return "bare line" if centers else ""

    s = ToolSession(movie_index, observers=[Bare()])
    found = s.call("search_in_graph", {"query": "Tom Hanks"})
    assert found.parts == []
    hop = s.call("search_in_neighborhood", {"node_index": found.nodes[0]})
    assert hop.parts == [Part("bare line")] and hop.observation.endswith("\nbare line")


def test_the_guided_strategy_composes_the_hints_and_the_plain_one_does_not(movie_index):
    llm = ScriptedChatModel([])
    guided = GuidedAgent(movie_index, llm).new_session("q")
    assert [type(o) for o in guided.observers] == [ChainHints]
    assert Agent(movie_index, llm).new_session("q").observers == []


@pytest.fixture
def counted_reads(monkeypatch):
    """Counts the question readings and chain searches the hints make."""
    counts = {"read_question": 0, "read_chain_and_rival": 0}

    def counting(name):
        real = getattr(_chain, name)

        def wrapper(*args, **kwargs):
            counts[name] += 1
            return real(*args, **kwargs)

        return wrapper

    for name in counts:
        monkeypatch.setattr(_chain, name, counting(name))
    return counts


@pytest.mark.slow
def test_three_guided_agents_read_the_question_once(movie_index, counted_reads):
    question = "What genres are the films directed by Robert Zemeckis? (read once)"
    zemeckis = node(movie_index, "Robert Zemeckis")
    llm = ScriptedChatModel(
        [
            # Found first: ark-guided explores only from a node a result has shown.
            calls(
                tool_call("search_in_graph", query="Robert Zemeckis"),
                tool_call("search_in_neighborhood", node_index=zemeckis, edge_type="directed_by"),
            ),
            tool_call("finish"),
        ]
    )
    retriever = Retriever(movie_index, llm, strategy="ark-guided", n_agents=3)
    result = asyncio.run(retriever.aretrieve(question))
    assert len(result.trajectories) == 3
    assert counted_reads == {"read_question": 1, "read_chain_and_rival": 1}
    # Each agent's hop carries the hint (the reading kept: read no more).
    replay = ToolSession(
        movie_index,
        config=ToolConfig(multi_neighborhood=True),  # ark-guided's
        observers=[ChainHints(movie_index, question)],
    )
    replay.call("search_in_graph", {"query": "Robert Zemeckis"})
    hop = {"node_index": zemeckis, "edge_type": "directed_by"}
    (hint,) = replay.call("search_in_neighborhood", hop).parts
    assert all(t.messages[4]["content"].endswith(hint.render()) for t in result.trajectories)
    assert counted_reads == {"read_question": 1, "read_chain_and_rival": 1}
    # Another question is read; the first is still kept.
    asyncio.run(retriever.aretrieve(question + " again"))
    asyncio.run(retriever.aretrieve(question))
    assert counted_reads == {"read_question": 2, "read_chain_and_rival": 2}


def test_readings_are_kept_per_index_and_bounded(movie_index, counted_reads, monkeypatch):
    monkeypatch.setattr(_chain, "READINGS_KEPT", 2)
    readings = movie_index.memo("question_readings", OrderedDict)
    readings.clear()
    for q in ("films by Tom Hanks", "films by Penny Marshall", "films by Tom Hanks"):
        question_reading(movie_index, q)
    assert counted_reads["read_question"] == 2
    question_reading(movie_index, "genre of Big")  # the oldest is dropped
    question_reading(movie_index, "films by Penny Marshall")
    assert counted_reads["read_question"] == 4
    assert len(readings) == 2
