"""What an ingested graph looks like beside another extraction of the same corpus.

    python benchmarks/bench_ingest.py prompt INDEX [INDEX ...] [--model 1.5b]
    python benchmarks/bench_ingest.py compare OPENIE.json N NAME=PASSAGES.jsonl [...]

``prompt``: per index, its nodes by type, its mention and triple edges, its relation
phrases (the most frequent ones, with ``co-occurs with``'s share), and the size of
the agent's system prompt with the tool specs as the local model reads them — the
rendered text tokenised by that model's own tokenizer (``tokenize_prompt``, what
the local backend checks against ``n_ctx``), for ``ark`` and ``ark-guided`` (whose
neighborhood tool takes a list of nodes). Loads the model's weights (memory-mapped)
but calls it not once.

``compare``: the extractions of the first ``N`` passages of a corpus — HippoRAG's
OpenIE JSON (its ``docs`` in corpus order) against the passages files that ``ark
ingest`` wrote (``INDEX.ingest/passages.jsonl``), each cleaned by the same
``clean_extraction``, entities compared by ``entity_key``. Per extraction: entities
and how many are HippoRAG's too, triples (``co-occurs with`` apart), relation
phrases, and how many of HippoRAG's linked entity pairs it links too (in either
direction, whatever the relation) or states as the same triple. The first N, not
passages picked by the questions: a sample any corpus has.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

from ark.graph import entity_key, relation_key
from ark.ingest import CO_OCCURS, Extraction, clean_extraction


def prompt_sizes(indexes: list[Path], model: str) -> None:
    from ark.index import open_index
    from ark.llm import Message, make_chat_model
    from ark.strategies import Agent, AgentConfig

    llm = make_chat_model(model=model)
    plain = AgentConfig()
    guided = replace(plain, tools=replace(plain.tools, multi_neighborhood=True))
    for path in indexes:
        index = open_index(path)
        schema = index.schema
        totals = dict(schema.relation_totals())
        mentions = sum(  # a passage's mentions; "mentions" may also be a triple's phrase
            r.count for r in schema.relations if r.name == "mentions" and r.source_type == "passage"
        )
        edges = index.meta["counts"]["edges"]
        co = totals.get(CO_OCCURS, 0)
        types = ", ".join(f"{t.count:,} {t.name}" for t in schema.node_types)
        print(f"{path}: {index.meta['counts']['nodes']:,} nodes ({types})")
        print(
            f"  {edges:,} edges: {mentions:,} mentions, {edges - mentions:,} triples "
            f"({co:,} {CO_OCCURS}, {100 * co / max(edges - mentions, 1):.0f} %); "
            f"{len(totals):,} relations"
        )
        top = [(n, c) for n, c in schema.relation_totals() if n != "mentions"][:8]
        print("  most frequent: " + ", ".join(f"{n} ({c:,})" for n, c in top))
        for name, config in (("ark", plain), ("ark-guided", guided)):
            agent = Agent(index, llm, config)
            head = [Message(role="system", content=agent.system)]
            tokens = llm.tokenize_prompt(head, agent.specs)
            chars = len(llm.render(head, agent.specs))
            print(
                f"  {name}: system prompt and tool specs {len(tokens):,} tokens "
                f"({chars:,} characters rendered)"
            )


def _read_passages(path: Path, n: int) -> list[dict]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for _, line in zip(range(n), f, strict=False)]


def compare(openie: Path, n: int, others: list[str]) -> None:
    docs = json.loads(openie.read_text(encoding="utf-8"))["docs"][:n]
    sets: dict[str, list[Extraction]] = {
        "hipporag": [
            clean_extraction(d["extracted_entities"], d["extracted_triples"]) for d in docs
        ]
    }
    for arg in others:
        name, _, path = arg.partition("=")
        rows = _read_passages(Path(path), n)
        if [r["text"] for r in rows] != [d["text"] for d in docs]:
            raise SystemExit(f"{path}: its first {n} passages are not {openie}'s")
        sets[name] = [clean_extraction(r.get("entities", []), r.get("triples", [])) for r in rows]

    def keyed(exts: list[Extraction]) -> tuple[list[set], list[set]]:
        ents = [{entity_key(e) for e in x.entities} for x in exts]
        trip = [
            {(entity_key(s), relation_key(r), entity_key(o)) for s, r, o in x.triples} for x in exts
        ]
        return ents, trip

    ref_ents, ref_trips = keyed(sets["hipporag"])
    ref_pairs = [{(s, o) for s, _, o in t} for t in ref_trips]
    n_ref_ents, n_ref_pairs = sum(map(len, ref_ents)), sum(map(len, ref_pairs))
    print(f"first {n} passages of {openie.name}; entities and triples counted per passage")
    for name, exts in sets.items():
        ents, trips = keyed(exts)
        n_ents, n_trips = sum(map(len, ents)), sum(map(len, trips))
        shared = sum(len(a & b) for a, b in zip(ents, ref_ents, strict=True))
        pairs = [{(s, o) for s, _, o in t} | {(o, s) for s, _, o in t} for t in trips]
        linked = sum(len(p & r) for p, r in zip(pairs, ref_pairs, strict=True))
        exact = sum(len(a & b) for a, b in zip(trips, ref_trips, strict=True))
        co = sum(1 for t in trips for _, r, _ in t if r == relation_key(CO_OCCURS))
        relations = {r for t in trips for _, r, _ in t}
        print(
            f"{name}: {n_ents} entities, {shared} of them HippoRAG's ({100 * shared / n_ents:.0f} "
            f"% precision, {100 * shared / n_ref_ents:.0f} % of its {n_ref_ents}); {n_trips} "
            f"triples ({co} {CO_OCCURS}), {len(relations)} relation phrases; of HippoRAG's "
            f"{n_ref_pairs} linked pairs it links {linked} ({100 * linked / n_ref_pairs:.0f} %), "
            f"{exact} as the same triple"
        )


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    pp = sub.add_parser("prompt", help="graph counts and the agent's prompt size")
    pp.add_argument("indexes", nargs="+", type=Path)
    pp.add_argument("--model", default="1.5b", help="the local model whose tokenizer counts")
    pc = sub.add_parser("compare", help="extractions of the first N passages")
    pc.add_argument("openie", type=Path, help="HippoRAG's OpenIE JSON")
    pc.add_argument("n", type=int)
    pc.add_argument("others", nargs="+", help="NAME=PASSAGES.jsonl (ark ingest's)")
    args = p.parse_args(argv)
    if args.cmd == "prompt":
        prompt_sizes(args.indexes, args.model)
    else:
        compare(args.openie, args.n, args.others)


if __name__ == "__main__":
    main()
