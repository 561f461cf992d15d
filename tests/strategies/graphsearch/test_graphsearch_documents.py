"""GraphSearch in its own setting, a graph built from documents, with a scripted model:
the semantic channel reads passages, the relational one the extracted phrases,
refinement records summaries and sub-answers, the verifier is parsed strictly and the
answer in words is written by the answer pipeline (ark.answer) from the basis the
workflow records."""

import asyncio
import re

import numpy as np
import pytest

from _doubles import ScriptedChatModel, json_reply, prose
from ark.answer import answer_question, answer_retrieval, write_from_basis
from ark.index import build_dense, build_index, open_dense
from ark.llm import Message
from ark.retrieval import Retriever, fuse_trajectories
from ark.strategies import (
    AgentConfig,
    AnswerBasis,
    GraphSearch,
    GraphSearchConfig,
    recorded_basis,
)
from ark.strategies.graphsearch import modules as m
from ark.strategies.graphsearch import prompts
from ark.strategies.graphsearch.documents import PASSAGE_SEARCH, DenseSearch, DocumentGraph

QUESTION = "In which city is the museum that holds The Harbour at Dawn?"
PLAN = {
    "semantic": ["Which museum holds The Harbour at Dawn?", "In which city is #1?"],
    "relational": [
        {"subject": "The Harbour at Dawn", "relation": "hangs in", "object": "#1"},
        {"subject": "#1", "relation": "located in", "object": "#2"},
    ],
}
SUB_ANSWERS = {"1": "Kestrel Museum", "2": "Valdor"}


def module_of(messages: list[Message]) -> str:
    system = messages[0].content
    for key, name in [
        ("You plan how", "decomposition"),
        ("did not find enough evidence", "expansion"),
        ("You read search results", "reading"),
        ("using only the evidence given", "answer"),  # ark.answer's prompt
        ("You answer a question", "drafting"),
        ("You check", "verification"),
        ("You rewrite", "grounding"),
    ]:
        if key in system:
            return name
    raise AssertionError(f"unknown module prompt: {system[:60]}")


def entity(index, name: str) -> int:
    g = index.graph
    return next(n for n in range(g.n_nodes) if g.name(n) == name and g.type_name(n) == "entity")


def passage(index, title: str) -> int:
    g = index.graph
    return next(n for n in range(g.n_nodes) if g.name(n) == title and g.type_name(n) == "passage")


def scripted(index, verdicts=("yes",), plan=PLAN):
    """Plans PLAN; reads each step's answer (S1/R1: the museum, S2/R2: the city) and
    keeps the shown nodes named like it or holding it; drafts the city's entity; judges
    by ``verdicts`` in turn; answers "Valdor" citing the city and a node never shown."""
    verdicts = list(verdicts)
    g = index.graph

    def script(messages):
        kind, user = module_of(messages), messages[1].content
        if kind == "decomposition":
            return json_reply(plan)
        if kind == "expansion":
            return json_reply({"semantic": ["Which city is Kestrel Museum in?"], "relational": []})
        if kind == "reading":
            number = re.search(r"Step [SR](\d+):", user).group(1)
            answer = SUB_ANSWERS.get(number, "unknown")
            shown = [int(n) for n in re.findall(r"\[(\d+)\]", user)]
            keep = [n for n in shown if g.name(n) == answer or answer in g.text(n)]
            return json_reply(
                {"summary": f"The results say {answer}.", "answer": answer, "keep": keep[:3]}
            )
        if kind == "drafting":
            city = entity(index, "Valdor")
            found = [city] if f"[{city}]" in user else []
            return json_reply(
                {"chain": "The painting hangs in the museum, in Valdor.", "answer": found}
            )
        if kind == "verification":
            v = verdicts.pop(0) if verdicts else "no"
            return json_reply({"verdict": v, "missing": "" if v == "yes" else "the city"})
        if kind == "answer":
            cited = [entity(index, "Valdor"), 9999]
            return json_reply({"answerable": True, "answer": "Valdor", "citations": cited})
        return json_reply({"text": "The Harbour at Dawn"})

    return ScriptedChatModel(script)


def run(index, model, **workflow):
    gs = GraphSearch(index, model, AgentConfig(), workflow=GraphSearchConfig(**workflow))
    return asyncio.run(gs.run(QUESTION))


def run_and_answer(index, model, **workflow):
    """The workflow, then the answer pipeline's step over its retrieval (the answer is
    recorded in the trajectory, which is returned)."""
    traj = run(index, model, **workflow)
    asyncio.run(answer_retrieval(model, index, fuse_trajectories(index, QUESTION, [traj])))
    return traj


def retrieval(traj, label):
    return next(s for s in traj.steps if s.module == "retrieval" and s.note.startswith(label))


def reading_prompt(model, label):
    return next(
        c[1].content
        for c in model.calls
        if module_of(c) == "reading" and f"Step {label}:" in c[1].content
    )


def test_the_semantic_channel_reads_passages_and_records_summaries_and_sub_answers(docs_index):
    model = scripted(docs_index)
    traj = run(docs_index, model)
    g = docs_index.graph
    s1 = retrieval(traj, "S1")
    (call,) = s1.tool_calls
    assert call.name == PASSAGE_SEARCH and call.ok
    # BM25 over passages only: the entity node named "The Harbour at Dawn" (a short
    # text, which a search over every node ranks first) is not among them.
    assert call.nodes and {g.type_name(n) for n in call.nodes} == {"passage"}
    assert call.nodes[0] == passage(docs_index, "The Harbour at Dawn")
    # The model reads the passage's text, not a one-line snippet.
    assert "It hangs in the Kestrel Museum" in reading_prompt(model, "S1")
    steps = {
        f"{s['channel'][0].upper()}{s['number']}": s for s in traj.extra["graphsearch"]["steps"]
    }
    assert steps["S1"]["answer"] == "Kestrel Museum"
    assert steps["S1"]["summary"] == "The results say Kestrel Museum."
    # S2's placeholder is grounded with S1's sub-answer in words (S1 kept a passage
    # titled "The Harbour at Dawn": its name would be the wrong entity).
    assert steps["S2"]["grounded"] == "In which city is Kestrel Museum?"
    assert steps["S2"]["answer"] == "Valdor"
    drafting = next(c[1].content for c in model.calls if module_of(c) == "drafting")
    assert "-> Kestrel Museum. The results say Kestrel Museum." in drafting


def test_the_relational_channel_follows_the_extracted_phrases(docs_index):
    model = scripted(docs_index)
    traj = run(docs_index, model, channels=("relational",))
    museum, city = entity(docs_index, "Kestrel Museum"), entity(docs_index, "Valdor")
    r1 = retrieval(traj, "R1")
    assert r1.tool_calls[0].name == "search_in_graph"  # the named end, found by name
    explored = [c for c in r1.tool_calls if c.name == "search_in_neighborhood"]
    assert {c.center for c in explored} == {entity(docs_index, "The Harbour at Dawn")}
    assert {c.arguments["node_type"] for c in explored} == {"entity", "passage"}
    # R2 starts from the entity R1 kept (no search by name), and the fact whose phrase
    # shares the step's words comes first (the tool's own order would put "hangs in",
    # a lower node index, before it).
    r2 = retrieval(traj, "R2")
    assert {c.center for c in r2.tool_calls} == {museum}
    facts = reading_prompt(model, "R2").split("Facts about Kestrel Museum:\n")[1].splitlines()
    assert facts[0] == f"(Kestrel Museum, located in, [{city}] Valdor)"
    assert "Passages mentioning it" in reading_prompt(model, "R2")
    assert traj.answer[0] == city  # the ranking: the draft's answer first, as before


@pytest.mark.parametrize(
    "reply, accepted, valid",
    [
        ({"verdict": "yes", "missing": ""}, True, True),
        ({"verdict": " Yes ", "missing": ""}, True, True),
        ({"verdict": "no", "missing": "the city"}, False, True),
        ({"verdict": "yes, but the city is not certain", "missing": ""}, False, False),
        ({"verdict": ["yes"], "missing": ""}, False, False),
        ("yes", False, False),
        (None, False, False),
    ],
)
def test_the_verdict_is_parsed_strictly(reply, accepted, valid):
    verdict = m.parse_verdict(reply)
    assert (verdict.accepted, verdict.valid) == (accepted, valid)


def test_a_yes_but_verdict_is_no_acceptance_and_expands(docs_index):
    """The public code accepts any reply containing "yes"; here it expands."""
    model = scripted(docs_index, verdicts=("yes, but the city is unsure", "yes"))
    traj = run(docs_index, model)
    mods = [s.module for s in traj.steps]
    assert mods.count("evidence_verification") == 2 and "query_expansion" in mods
    first = next(s for s in traj.steps if s.module == "evidence_verification")
    assert first.note == "verdict is neither yes nor no"  # counted, not fatal
    assert traj.extra["graphsearch"]["verdicts"] == ["yes, but the city is unsure", "yes"]
    assert traj.stop_reason == "finish"


def test_the_answer_in_words_comes_from_the_final_step(docs_index):
    """The final step is ark.answer's write_answer over what the workflow found: the
    drafted node, the passages the sub-answers came from, the edges followed."""
    model = scripted(docs_index)
    traj = run_and_answer(docs_index, model)
    city, museum = entity(docs_index, "Valdor"), entity(docs_index, "Kestrel Museum")
    assert traj.steps[-1].module == "answer_generation" and traj.steps[-1].note is None
    answer = traj.extra["graphsearch"]["answer"]
    assert (answer["text"], answer["status"]) == ("Valdor", "answered")
    # Citations keep only nodes the step was shown (9999 is not one).
    assert answer["citations"] == [city] and answer["dropped_citations"] == 1
    assert answer["nodes"][0] == city  # the draft's answer first
    assert passage(docs_index, "Kestrel Museum") in answer["nodes"]  # S2's source
    last = model.calls[-1][1].content
    assert "in the city of Valdor" in last  # a passage's text, read
    assert f"[{museum}] Kestrel Museum -located in-> [{city}] Valdor" in last  # an edge followed
    assert traj.to_dict()["graphsearch"]["answer"]["text"] == "Valdor"
    assert traj.usage["prompt_tokens"] == sum(s.prompt_tokens for s in traj.steps)
    # The workflow samples at the run's temperature; the answer is written greedily,
    # as Retriever.answer and naive RAG write theirs.
    assert AgentConfig().temperature > 0
    assert set(model.temperatures[:-1]) == {AgentConfig().temperature}
    assert model.temperatures[-1] == 0.0
    off = run(docs_index, scripted(docs_index), answer=False)
    assert "answer_generation" not in [s.module for s in off.steps]
    assert off.extra["graphsearch"]["answer"] is None and off.answer == traj.answer
    assert recorded_basis(off) is None  # the answer step reads the fused retrieval


def test_an_unusable_final_reply_is_an_unanswered_answer_and_keeps_the_ranking(docs_index):
    inner = scripted(docs_index)

    def script(messages):
        if module_of(messages) == "answer":
            return prose("Valdor, I believe")
        return inner._script(messages)

    traj = run_and_answer(docs_index, ScriptedChatModel(script))
    answer = traj.extra["graphsearch"]["answer"]
    assert (answer["status"], answer["text"], answer["answerable"]) == ("bad_reply", "", False)
    assert traj.steps[-1].note == "bad reply: not JSON" and traj.stop_reason == "finish"
    assert traj.answer[0] == entity(docs_index, "Valdor")


def test_free_text_relations_are_kept_as_phrases_and_the_prompt_lists_few(docs_index):
    model = scripted(docs_index)
    traj = run(docs_index, model, channels=("relational",))
    schema = model.schemas[0]["properties"]["relational"]["items"]["properties"]["relation"]
    assert schema["type"] == "string" and "enum" not in schema
    relational = [s for s in traj.extra["graphsearch"]["steps"] if s["channel"] == "relational"]
    assert [s["text"] for s in relational] == [
        "(The Harbour at Dawn, hangs in, #1)",
        "(#1, located in, #2)",
    ]
    system = model.calls[0][0].content
    assert "relation phrases; the most frequent" in system and "mentions" in system


def test_a_curated_graph_of_many_relations_gets_a_bounded_prompt(tmp_path):
    names = [f"relation_{i}" for i in range(prompts.MAX_ENUM_RELATIONS + 20)]
    lines = [f"a{i}|{r}|b{i}" for i, r in enumerate(names)]
    (tmp_path / "kb.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    index = build_index(tmp_path / "kb.txt", tmp_path / "idx")
    assert prompts.free_relations(index.schema)
    text = prompts.decomposition_prompt(index.schema, free=True)
    listed = set(re.findall(r"relation_\d+", text))
    assert len(listed) == prompts.LISTED_RELATIONS
    # The model's phrase still maps to the graph's relation on a curated graph.
    data = {
        "semantic": [],
        "relational": [{"subject": "a3", "relation": "relation 3", "object": "#1"}],
    }
    _, relational = m.parse_plan(data, index.schema.relation_names)
    assert relational[0].triple.relation == "relation_3"


class ConceptEncoder:
    """A stand-in sentence encoder: one dimension per concept, so "artwork" is near
    "painting" without sharing a word (what dense retrieval adds to BM25)."""

    name = "concepts"
    CONCEPTS = (("paint", "artwork"), ("museum", "gallery"), ("seal",), ("mayor", "politician"))
    dim = len(CONCEPTS) + 1

    def encode(self, texts, batch_size=128):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            low = text.lower()
            for d, words in enumerate(self.CONCEPTS):
                out[i, d] = sum(low.count(w) for w in words)
            out[i, -1] = 0.1
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def test_dense_retrieval_fuses_in_when_the_index_has_embeddings(tmp_path):
    from _graphsearch_docs import write_document_graph

    index = build_index(write_document_graph(tmp_path / "tables"), tmp_path / "idx")
    assert DocumentGraph.of(index, dense=False).dense is None
    encoder = ConceptEncoder()
    build_dense(index, encoder)
    doc = DocumentGraph.of(index, dense=DenseSearch(open_dense(index, encoder.name), encoder))
    # "artwork" is in no passage: BM25 alone finds nothing, the dense ranking does.
    bm25_only = DocumentGraph.of(index, dense=False).search_passages("artwork")
    assert bm25_only[2].nodes == []
    name, args, outcome = doc.search_passages("artwork", k=2)
    assert name == PASSAGE_SEARCH and args["dense"] is True
    assert set(outcome.nodes) == {
        passage(index, "Lena Marsh"),
        passage(index, "The Harbour at Dawn"),
    }
    # Both rankings fused: a passage BM25 finds stays, and dense ones join it.
    _, _, both = doc.search_passages("Tomas Reed artwork", k=3)
    assert passage(index, "Tomas Reed") in both.nodes
    assert passage(index, "Lena Marsh") in both.nodes  # by dense alone: no shared word


def test_no_embeddings_means_bm25_alone(docs_index):
    doc = DocumentGraph.of(docs_index)  # dense asked for, but the index has none
    assert doc is not None and doc.dense is None
    _, args, _ = doc.search_passages("Kestrel Museum")
    assert "dense" not in args


def test_the_next_relational_step_starts_from_the_entity_the_sub_answer_names(docs_index):
    """R1 keeps a stop on the way (Lena Marsh) beside its source passage, and answers
    "Kestrel Museum" in words: R2 starts from the museum, found by that name."""
    inner = scripted(docs_index)
    lena, museum = entity(docs_index, "Lena Marsh"), entity(docs_index, "Kestrel Museum")

    def script(messages):
        user = messages[1].content
        if module_of(messages) == "reading" and "Step R1:" in user:
            keep = [lena, passage(docs_index, "The Harbour at Dawn")]
            return json_reply({"summary": "s", "answer": "Kestrel Museum", "keep": keep})
        return inner._script(messages)

    traj = run(docs_index, ScriptedChatModel(script), channels=("relational",))
    r2 = retrieval(traj, "R2")
    assert r2.tool_calls[0].name == "search_in_graph"
    assert r2.tool_calls[0].arguments["query"] == "Kestrel Museum"
    assert {c.center for c in r2.tool_calls[1:]} == {museum}


def test_a_hub_is_read_along_the_phrases_that_match_the_step(docs_index, monkeypatch):
    """More entity neighbors than one call returns: the anchor is read along the
    relations sharing a word with the step's phrase, so the fact asked for is not cut
    off (here with a call of 2 neighbors, the museum's "founded in" edge, its last)."""
    from ark.session import ToolSession
    from ark.strategies.graphsearch import documents

    monkeypatch.setattr(documents, "NEIGHBOR_K", 2)
    doc = DocumentGraph.of(docs_index, dense=False)
    session = ToolSession(docs_index, answer_tools=False)
    museum, year = entity(docs_index, "Kestrel Museum"), entity(docs_index, "1890")
    calls = doc.explore(session, [museum], "founded in", None)
    hood = calls[0]
    assert hood[1]["edge_type"] == ["founded in"] and hood[2].nodes == [year]
    assert doc.triples(calls, "founded in")[0][1] == f"(Kestrel Museum, founded in, [{year}] 1890)"
    # A neighborhood that fits in one call is read whole, whatever the phrase.
    monkeypatch.setattr(documents, "NEIGHBOR_K", 100)
    whole = doc.explore(session, [museum], "founded in", None)[0]
    assert "edge_type" not in whole[1] and year in whole[2].nodes and len(whole[2].nodes) == 3


def test_the_pipeline_answers_graphsearch_from_the_workflows_basis(docs_index):
    """``answer_question`` with one GraphSearch agent writes the workflow's own answer
    from the basis it recorded (one call, whatever the writer); no answer call over the
    fused ranking, and the call is the trajectory's last step."""
    model = scripted(docs_index)
    retriever = Retriever(docs_index, model, strategy="graphsearch", n_agents=1, max_steps=12)
    answered = answer_question(retriever, QUESTION)  # the default writer reads in steps
    assert answered.answer.text == "Valdor" and answered.recorded
    assert answered.answer.citations == [entity(docs_index, "Valdor")]
    assert [module_of(c) for c in model.calls].count("answer") == 1
    traj = answered.retrieval.trajectories[0]
    assert traj.steps[-1].module == "answer_generation"
    assert traj.extra["graphsearch"]["answer"] == answered.answer.to_dict()
    assert traj.usage["prompt_tokens"] == sum(s.prompt_tokens for s in traj.steps)


class SeedRecorder(ScriptedChatModel):
    """The scripted model, keeping the seed each call asked for."""

    def __init__(self, script):
        super().__init__(script)
        self.seeds: list[int | None] = []

    async def complete(self, messages, tools, *, seed=None, **kwargs):
        self.seeds.append(seed)
        return await super().complete(messages, tools, seed=seed, **kwargs)


def test_graphsearchs_answer_through_the_pipeline_is_the_one_its_basis_gives(docs_index):
    """The workflow writes no answer: it records its basis (answer nodes, followed
    edges, the seed of the call after its last); the pipeline's answer is the one-call
    writer's over that basis, greedy, with that seed, as the workflow wrote it before."""
    retrieval = Retriever(
        docs_index, scripted(docs_index), strategy="graphsearch", n_agents=1, seed=5
    ).retrieve(QUESTION)
    traj = retrieval.trajectories[0]
    assert "answer_generation" not in [s.module for s in traj.steps]
    assert traj.extra["graphsearch"]["answer"] is None
    key, basis = recorded_basis(traj)
    assert key == "graphsearch" and basis == AnswerBasis.from_dict(basis.to_dict())
    model_calls = sum(s.module != "retrieval" for s in traj.steps)
    assert basis.seed == 5 + model_calls  # agent 0's seed, then one per call made
    city, museum = entity(docs_index, "Valdor"), entity(docs_index, "Kestrel Museum")
    assert basis.nodes[0] == city and (museum, "located in", city) in basis.edges

    direct = SeedRecorder(scripted(docs_index)._script)
    expected = asyncio.run(write_from_basis(direct, QUESTION, docs_index, basis))

    model = SeedRecorder(scripted(docs_index)._script)
    retriever = Retriever(docs_index, model, strategy="graphsearch", n_agents=1, seed=5)
    answered = answer_question(retriever, QUESTION, writer="steps")
    assert answered.answer == expected and answered.answer.text == "Valdor"
    assert model.calls[-1] == direct.calls[-1]  # the same prompt: nodes and edges
    assert model.seeds[-1] == direct.seeds[-1] == basis.seed
    assert model.temperatures[-1] == direct.temperatures[-1] == 0.0
    assert recorded_basis(answered.retrieval.trajectories[0])[1] == basis


def test_several_graphsearch_agents_are_answered_from_their_fused_retrieval(docs_index):
    """No one agent's basis is the fused retrieval's: the writer reads the ranking."""
    model = scripted(docs_index)
    retriever = Retriever(docs_index, model, strategy="graphsearch", n_agents=2, seed=0)
    answered = answer_question(retriever, QUESTION, writer="one")
    assert not answered.recorded and answered.answer.text == "Valdor"
    assert all(recorded_basis(t) is not None for t in answered.retrieval.trajectories)
    assert all(t.extra["graphsearch"]["answer"] is None for t in answered.retrieval.trajectories)
    ranked = [r.index for r in answered.retrieval.ranking]
    assert answered.answer.nodes[: len(ranked)] == ranked[: len(answered.answer.nodes)]


def test_an_evaluation_counts_graphsearchs_answer_tokens_once(docs_index):
    """``ark eval --answer``: the answer's call is a step of GraphSearch's trajectory, so
    the record's tokens are the trajectory's (not the answer's added a second time)."""
    from ark.eval import RetrieverMethod

    retriever = Retriever(docs_index, scripted(docs_index), strategy="graphsearch", n_agents=1)
    out = asyncio.run(RetrieverMethod(retriever, answer=True)("q1", QUESTION))
    traj = out.trajectories[0]
    assert out.answer is not None and out.answer["text"] == "Valdor"
    assert out.answer["prompt_tokens"] > 0 and traj.steps[-1].module == "answer_generation"
    assert out.prompt_tokens == traj.usage["prompt_tokens"]
    assert out.completion_tokens == traj.usage["completion_tokens"]
