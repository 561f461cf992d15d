"""Teacher-free trajectories from the graph itself.

Relation paths are sampled from the graph (1–3 hops, and intersections of two
anchors' one-hop sets), turned into questions from the schema's relation and type
names with general templates, and solved by an *oracle policy* that goes through the
real tool session — so every observation the student trains on is a real tool output,
and every answer is exactly the path's target set. The policy varies k, queries,
filters and the order of calls, re-anchors with global search now and then, and
sometimes makes a typical bad call and recovers from it. No question set is read.
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ark.distill._paths import (
    MAX_ANSWERS,
    MAX_FRONTIER,
    MAX_K,
    Path_,
    PathSampler,
    follow,
    path_question,
)
from ark.distill._questions import (
    RelationStep,
    _spaced,
    load_templates,
)
from ark.errors import ArkError
from ark.index import Index
from ark.llm import Message, ToolCall
from ark.session import ToolSession
from ark.strategies import ChainHints, steps_left_note, system_prompt
from ark.tools import MAX_CENTERS, GraphTools, ToolConfig
from ark.trajectory import StepRecord, ToolCallRecord, Trajectory

__all__ = [
    "Oracle",
    "RelationStep",
    "SynthConfig",
    "llm_paraphraser",
    "load_templates",
    "synthesize",
]


# -- the oracle policy ----------------------------------------------------------------


@dataclass
class SynthConfig:
    n: int = 2000
    hops: tuple[int, ...] = (1, 2, 3)
    seed: int = 0
    max_steps: int = 20
    prompt: str = "short"
    intersection_share: float = 0.1
    #: Share of hops preceded by a typical slip (filters copied from the hop before,
    #: the final type asked for a hop too early, a misspelt relation) and its fix.
    bad_call_share: float = 0.1
    reanchor_share: float = 0.15
    #: Share of neighborhoods larger than the default k = 20 that are first explored
    #: with the default, so the student sees "showing 20 of N" and asks again for all.
    cut_share: float = 0.3
    #: Train the hop over a set (``ToolConfig(multi_neighborhood=True)``): an
    #: intermediate hop reaching several nodes is explored in one call over all of them,
    #: so paths may fan out to ``MAX_CENTERS`` nodes (6 with one call per node, which a
    #: 20-step budget bounds) — real questions' bridges are often 10–30 films.
    multi_neighborhood: bool = False
    #: Observations as ``GuidedAgent`` (strategy ``ark-guided``) shows them: with its
    #: hints, computed from the synthetic question as the agent would, and a node's text
    #: printed once (``AgentOptions.texts_once``). The student learns to read them, and
    #: where a hint is wrong (a relation the question does not name by its words) it
    #: sees the oracle take the path anyway.
    hints: bool = False
    #: Observations in the grouped form (``ToolConfig(grouped_observations=True)``).
    grouped_observations: bool = False
    templates: dict[str, Any] = field(default_factory=dict)


class Oracle:
    """Solves a sampled path through a real :class:`ToolSession`, recording the exact
    conversation the ARK agent would have had."""

    def __init__(self, index: Index, config: SynthConfig, rng: random.Random) -> None:
        self.index = index
        self.config = config
        self.rng = rng
        self.tools = GraphTools(index)
        self.tool_config = ToolConfig(
            multi_neighborhood=config.multi_neighborhood,
            grouped_observations=config.grouped_observations,
        )
        self.system = system_prompt(index.schema, self.tool_config, config.max_steps, config.prompt)
        described = index.described
        #: A stored reverse (``plays_in_club_inverse``) by its forward name, as hints name it.
        self._forward = (
            {r.name: r.inverse_of for r in described.relations if r.inverse_of} if described else {}
        )

    def run(self, path: Path_, number: int) -> Trajectory | None:
        cfg, rng = self.config, self.rng
        session = ToolSession(
            self.index,
            tools=self.tools,
            config=self.tool_config,
            question=path.question if cfg.hints else None,
            observers=[ChainHints(self.index, path.question)] if cfg.hints else [],
            # As ark-guided shows them: a node's text once (AgentOptions.texts_once).
            texts_once=cfg.hints,
        )
        messages = [
            Message(role="system", content=self.system),
            Message(role="user", content=path.question),
        ]
        steps: list[StepRecord] = []
        g = self.index.graph

        def call(name: str, args: dict[str, Any]) -> Any:
            session.step = len(steps)
            raw = json.dumps(args, ensure_ascii=False)
            tc = ToolCall(f"call_{number}_{len(steps)}", name, args, raw)
            outcome = session.call(name, args, raw)
            obs = outcome.observation
            if not session.finished:  # the agent's budget note, so the student sees it here
                obs += steps_left_note(cfg.max_steps - len(steps) - 1)
            messages.append(Message(role="assistant", content="", tool_calls=(tc,)))
            messages.append(Message(role="tool", content=obs, tool_call_id=tc.id, name=name))
            steps.append(
                StepRecord(
                    index=len(steps),
                    llm_latency_s=0.0,
                    prompt_tokens=0,
                    completion_tokens=0,
                    content="",
                    tool_calls=[
                        ToolCallRecord.from_outcome(
                            tc.id,
                            name,
                            args,
                            outcome,
                            raw_arguments=raw,
                            observation=obs,
                            timed=False,
                        )
                    ],
                )
            )
            return outcome

        def find(node: int) -> bool:
            """Global search for ``node`` by name; a bigger k once if it is not shown."""
            name = g.name(node)
            query = name if rng.random() < 0.75 else f"{name} {g.type_name(node)}"
            for k in (rng.choice([3, 5, 5, 10]), 30):
                out = call("search_in_graph", {"query": query, "k": k})
                if node in out.nodes:
                    return True
                query = name
            return False

        def explore(node: int | list[int], hop: RelationStep) -> list[int]:
            """One neighborhood call: of one node, or over all of a list (the hop over
            a set, which takes no subquery here)."""
            args: dict[str, Any] = {"node_index": node}
            style = rng.random()
            args["edge_type"] = hop.relation if style < 0.85 else [hop.relation]
            types = None
            if style < 0.7:
                args["node_type"] = hop.target_type
                types = [g.type_id(hop.target_type)]
            if isinstance(node, list):
                expected = len({n for ns in follow(g, node, hop).values() for n in ns})
            else:
                hood = g.neighborhood(node, types, [g.relation_id(hop.relation)])
                expected = len(hood.neighbors)
                if rng.random() < 0.2:
                    args["query"] = _spaced(hop.target_type)
            if expected > 20 and rng.random() < cfg.cut_share:
                call("search_in_neighborhood", dict(args))  # "showing 20 of N": ask again
            if expected > 20 or rng.random() < 0.2:
                args["k"] = min(MAX_K, max(expected, rng.choice([20, 30, 50])))
            return call("search_in_neighborhood", args).nodes

        def empty(node: int, node_type: str, relation: str) -> bool:
            hood = g.neighborhood(node, [g.type_id(node_type)], [g.relation_id(relation)])
            return len(hood.neighbors) == 0

        def bad_call(node: int, hops: list[RelationStep], depth: int) -> None:
            """A typical slip whose observation says how to fix it (the caller then
            makes the right call): the node's own type as ``node_type`` (after the first
            hop: the filters copied from the hop before), the question's final type
            asked a hop too early, or a misspelt relation. Type slips are made only
            where they come back empty, so what they teach is how to read "no neighbors"."""
            hop, own = hops[depth], g.type_name(node)
            slips: list[dict[str, Any]] = []
            if own != hop.target_type and empty(node, own, hop.relation):
                slips.append({"node_index": node, "edge_type": hop.relation, "node_type": own})
            final = hops[-1].target_type
            if (
                depth < len(hops) - 1
                and final != hop.target_type
                and empty(node, final, hop.relation)
            ):
                slips.append({"node_index": node, "edge_type": hop.relation, "node_type": final})
            if not slips or rng.random() < 0.25:
                slips.append({"node_index": node, "edge_type": _spaced(hop.relation) + "s"})
            call("search_in_neighborhood", rng.choice(slips))

        answer_set = set(path.answers)

        def meet() -> bool:
            """The intersection in one call, as the hint offers it: the hop over both
            anchors, the filter each one's own relation (its forward name), and the
            nodes linked to both added. The second anchor is searched for only when the
            observation does not name it already (the hint does, once both are read)."""
            first, second = path.anchors if rng.random() < 0.5 else path.anchors[::-1]
            if not find(first):
                return False
            if f"[{second}]" not in messages[-1].content and not find(second):
                return False
            # Anchors (and their relations) in the order the question names them, as
            # the hint lists them.
            order = sorted(range(2), key=lambda i: path.question.find(g.name(path.anchors[i])))
            relations = [path.hops[i][0].relation for i in order]
            edges = list(dict.fromkeys(self._forward.get(r, r) for r in relations))
            nodes = [path.anchors[i] for i in order]
            args: dict[str, Any] = {"node_index": nodes, "edge_type": edges}
            if len(answer_set) > 20 or rng.random() < 0.2:
                args["k"] = min(MAX_K, max(len(answer_set), rng.choice([20, 30, 50])))
            result = call("search_in_neighborhood", args).result
            both = [m.hit.index for m in getattr(result, "merged", ()) if len(m.centers) == 2]
            # A node the other anchor reaches by the first one's relation counts too:
            # such a path is dropped rather than taught with an answer the hint contradicts.
            if set(both) != answer_set:
                return False
            for i in range(0, len(both), MAX_ANSWERS):  # in the observation's order
                call("add_to_answer", {"node_indices": both[i : i + MAX_ANSWERS]})
            return True

        incremental = rng.random() < 0.4
        walks = list(enumerate(zip(path.anchors, path.hops, strict=True)))
        if path.kind == "intersection" and cfg.multi_neighborhood:
            if not meet():
                return None
            walks = []
        for a, (anchor, hops) in walks:
            if not find(anchor):
                return None
            frontier = [anchor]
            for depth, hop in enumerate(hops):
                final = depth == len(hops) - 1
                order = list(frontier)
                rng.shuffle(order)
                reanchor = depth > 0 and len(order) == 1 and rng.random() < cfg.reanchor_share
                if reanchor and not find(order[0]):
                    return None
                if rng.random() < cfg.bad_call_share:
                    # On a node the hop leads on from, explored right after the slip.
                    live = next((n for n in order if follow(g, [n], hop)[n]), None)
                    if live is not None:
                        order.remove(live)
                        order.insert(0, live)
                        bad_call(live, hops, depth)
                one_call = cfg.multi_neighborhood and len(order) > 1
                one_call = one_call and (len(order) > MAX_FRONTIER or rng.random() < 0.9)
                # Over a set, the indices in the order the observation listed them.
                targets: list[int] | list[list[int]] = [sorted(order)] if one_call else order
                for target in targets:
                    found = explore(target, hop)
                    if final and incremental and path.kind == "chain":
                        new = [n for n in found if n in answer_set and n not in session.answer]
                        if new:
                            call("add_to_answer", {"node_indices": new[:MAX_ANSWERS]})
                frontier = path.frontiers[a][depth]
        missing = [n for n in path.answers if n not in session.answer]
        for i in range(0, len(missing), MAX_ANSWERS):
            call("add_to_answer", {"node_indices": missing[i : i + MAX_ANSWERS]})
        call("finish", {})
        if not session.finished or len(steps) > cfg.max_steps:
            return None
        if set(session.answer) != answer_set:
            return None  # a tool cut (k) hid an answer; never train on a wrong answer
        return self._trajectory(path, number, messages, steps, session.answer)

    def _trajectory(
        self,
        path: Path_,
        number: int,
        messages: list[Message],
        steps: list[StepRecord],
        answer: list[int],
    ) -> Trajectory:
        cfg = self.config
        key = f"{cfg.seed}:{number}:{path.question}"
        return Trajectory(
            question=path.question,
            model="oracle",
            config={
                "max_steps": cfg.max_steps,
                "temperature": 0.0,
                "tools": self.tool_config.to_dict(),
                "agent": 0,
                "seed": cfg.seed,
                "strategy": "oracle",
                "prompt": cfg.prompt,
                "hints": cfg.hints,
            },
            id=hashlib.sha256(key.encode()).hexdigest()[:32],
            question_id=f"synth-{cfg.seed}-{number}",
            created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            messages=[m.to_dict() for m in messages],
            steps=steps,
            answer=list(answer),
            stop_reason="finish",
            synthetic=True,
            extra={
                "synthesis": {
                    "kind": path.kind,
                    "hops": max(len(h) for h in path.hops),
                    "anchors": path.anchors,
                    "path": [
                        [[h.relation, h.direction, h.target_type] for h in hops]
                        for hops in path.hops
                    ],
                    "answers": path.answers,
                }
            },
        )


# -- the whole run ----------------------------------------------------------------------

Paraphraser = Callable[[str, Sequence[str]], str | None]


def synthesize(
    index: Index,
    config: SynthConfig,
    *,
    paraphrase: Paraphraser | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Iterator[Trajectory]:
    """``config.n`` trajectories, hop counts spread evenly over ``config.hops``;
    deterministic for a seed (a paraphrase model aside)."""
    if not config.hops or any(h not in (1, 2, 3) for h in config.hops):
        raise ArkError(f"--hops must be among 1, 2, 3; got {config.hops}")
    rng = random.Random(config.seed)
    fan_out = MAX_CENTERS if config.multi_neighborhood else MAX_FRONTIER
    sampler = PathSampler(index, rng, max_frontier=fan_out)
    oracle = Oracle(index, config, rng)
    g = index.graph
    made = 0
    attempts = 0
    seen: set[tuple] = set()
    while made < config.n:
        attempts += 1
        if attempts > 200 * config.n + 1000:
            raise ArkError(
                f"could only sample {made} of {config.n} paths; the graph has too few "
                "paths with 1–50 answers for these --hops"
            )
        path = sampler.draw(config.hops[made % len(config.hops)], config.intersection_share)
        if path is None:
            continue
        key = path.key()
        if key in seen:
            continue
        path.question = path_question(index, path, rng, config.templates)
        if paraphrase is not None:
            names = [g.name(a) for a in path.anchors]
            better = paraphrase(path.question, names)
            if better and all(n in better for n in names):
                path.question = better
        traj = oracle.run(path, made)
        if traj is None:
            continue
        seen.add(key)
        made += 1
        if progress:
            progress(made, config.n)
        yield traj


def llm_paraphraser(llm: Any, seed: int = 0) -> Paraphraser:
    """``--paraphrase-model``: rewrite a template question through the LLM protocol;
    the rewrite is used only if it keeps every entity name verbatim."""
    import asyncio

    def rewrite(question: str, names: Sequence[str]) -> str | None:
        prompt = (
            "Rewrite this question as a person would ask it, in one sentence. Keep these "
            f"names exactly as written: {', '.join(names)}. Reply with the question only.\n\n"
            + question
        )
        completion = asyncio.run(
            llm.complete(
                [Message(role="user", content=prompt)],
                [],
                temperature=0.7,
                max_tokens=96,
                seed=seed,
            )
        )
        text = completion.message.content.strip().splitlines()
        return text[0].strip() if text else None

    return rewrite
