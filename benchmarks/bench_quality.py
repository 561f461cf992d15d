"""Agent quality on a fixed MetaQA dev sample, with the differences to a stored baseline.

    python benchmarks/bench_quality.py [--hops 1 2 3] [--limit 30] [--label NAME]
        [--agents 1] [--max-steps 8] [--seed 0] [--temperature 0.7] [--fusion vote]
        [--prompt full|short] [--model 0.5b|1.5b|GGUF] [--adapter LORA.gguf]
        [--[no-]example] [--[no-]hints] [--[no-]multi-neighborhood]
        [--save-baseline]

Every run goes through the real evaluation runner (``ark.eval.run_queries``, the
same code as ``ark eval``) with the local model and a fixed agent seed, so a change
to the agent is judged on the same questions with the same sampling. Each hop is
written to ``OUT/LABEL/hopN`` and is resumable: rerunning the same command continues
where an interrupted run stopped (the runner refuses to resume with other settings).
The table printed at the end compares each hop with ``benchmarks/quality_baseline.json``
(``--save-baseline`` stores this run there). Needs the ``[local]`` extra and the
MetaQA folder (``$ARK_METAQA_DIR`` or ``../shared/data/metaqa``). One 30-question hop
takes 15–40 min on 2 CPU cores; do not overlap it with other CPU-heavy work.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from ark.agent import Agent, AgentOptions, Retriever, ToolConfig
from ark.agent._prompt import PROMPT_VARIANTS
from ark.eval import RetrieverMethod, RunStore, run_queries
from ark.eval.datasets import default_metaqa_dir, load_metaqa, sample
from ark.index import build_index, open_index

HERE = Path(__file__).resolve().parent
BASELINE = HERE / "quality_baseline.json"
MEASURES = ("hit@1", "hit@5", "recall@20", "mrr")


def agent_factory(options: AgentOptions):  # type: ignore[no-untyped-def]
    """A strategy factory building ARK's agent with ``options``."""

    def factory(ctx):  # type: ignore[no-untyped-def]
        return Agent.from_context(ctx, options=options)

    factory.strategy_name = "ark"  # type: ignore[attr-defined]
    return factory


def run_hop(args: argparse.Namespace, index, llm, hop: int) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    queries = sample(
        load_metaqa(args.data_dir, hop, split="dev", index=index), args.limit, args.sample_seed
    )
    options = AgentOptions(example=args.example, hints=args.hints)
    tools = ToolConfig(multi_neighborhood=args.multi_neighborhood)
    retriever = Retriever(
        index,
        llm,
        strategy=agent_factory(options),
        n_agents=args.agents,
        max_steps=args.max_steps,
        temperature=args.temperature,
        fusion=args.fusion,
        tools=tools,
        seed=args.seed,
        prompt=args.prompt,
        on_event=_print_event if args.verbose else None,
    )
    config = {
        "dataset": f"metaqa:{hop}-hop",
        "index": str(args.index),
        "split": "dev",
        "limit": args.limit,
        "sample_seed": args.sample_seed,
        "method": "ark",
        "mode": "strict",
        "agents": args.agents,
        "max_steps": args.max_steps,
        "fusion": args.fusion,
        "temperature": args.temperature,
        "seed": args.seed,
        "tools": tools.to_dict(),
        "agent_options": options.to_dict(),
        "model": llm.name,
        "concurrency": 1,
        **({"prompt": args.prompt} if args.prompt != "full" else {}),
        **({"adapter": str(args.adapter)} if args.adapter else {}),
    }
    store = RunStore(args.out / args.label / f"hop{hop}")
    resume = store.results.exists()

    def progress(done: int, total: int) -> None:
        print(f"\r  {hop}-hop: {done}/{total}", end="", file=sys.stderr, flush=True)

    summary = asyncio.run(
        run_queries(
            queries,
            RetrieverMethod(retriever),
            store,
            config,
            resume=resume,
            mode="strict",
            n_nodes=index.graph.n_nodes,
            progress=progress,
        )
    )
    print(file=sys.stderr)
    return summary


def _print_event(event) -> None:  # type: ignore[no-untyped-def]
    print(
        f"    agent {event.agent} step {event.step}: {event.tool}({event.arguments}) -> "
        f"{event.summary[:100]}",
        file=sys.stderr,
        flush=True,
    )


def table(results: dict[int, dict[str, Any]], baseline: dict[str, Any] | None) -> str:
    lines = [
        "| hop | n | Hit@1 | Hit@5 | R@20 | MRR | s/query (p50) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for hop, summary in sorted(results.items()):
        m = summary["metrics"]
        base = (baseline or {}).get("hops", {}).get(str(hop))
        cells = []
        for key in MEASURES:
            cell = f"{m.get(key, 0.0):.1f}"
            if base is not None:
                cell += f" ({m.get(key, 0.0) - base['metrics'].get(key, 0.0):+.1f})"
            cells.append(cell)
        wall = summary["wall_s_per_query"]
        lines.append(
            f"| {hop} | {summary['queries']} | {' | '.join(cells)} | "
            f"{wall['mean']:.1f} ({wall['p50']:.1f}) |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--hops", type=int, nargs="+", default=[1, 2, 3])
    p.add_argument("--limit", type=int, default=30)
    p.add_argument("--sample-seed", type=int, default=0)
    p.add_argument("--label", default="current", help="run name under --out")
    p.add_argument("--out", type=Path, default=Path(".bench/quality"))
    p.add_argument("--index", type=Path, default=Path(".bench/metaqa.idx"))
    p.add_argument("--data-dir", type=Path, default=default_metaqa_dir())
    p.add_argument("--agents", type=int, default=1)
    p.add_argument("--max-steps", type=int, default=8)
    p.add_argument("--seed", type=int, default=0, help="agent sampling seed")
    p.add_argument("--temperature", type=float, default=0.7)
    p.add_argument("--fusion", default="vote")
    defaults = AgentOptions()
    p.add_argument("--prompt", default="full", choices=list(PROMPT_VARIANTS))
    p.add_argument(
        "--example",
        action=argparse.BooleanOptionalAction,
        default=defaults.example,
        help="a worked example in the system prompt",
    )
    p.add_argument(
        "--hints",
        action=argparse.BooleanOptionalAction,
        default=defaults.hints,
        help="observations that name types and onward relations",
    )
    p.add_argument(
        "--multi-neighborhood",
        action=argparse.BooleanOptionalAction,
        default=ToolConfig().multi_neighborhood,
        help="search_in_neighborhood over a set of nodes",
    )
    p.add_argument("--model", default=None, help="0.5b, 1.5b or a GGUF path (default: 1.5b)")
    p.add_argument("--adapter", default=None, help="a LoRA GGUF from `ark distill export`")
    p.add_argument(
        "--threads",
        type=int,
        default=None,
        help="llama.cpp threads (default: all cores; 1 is faster on an oversubscribed machine)",
    )
    p.add_argument("--verbose", action="store_true", help="print every tool call")
    p.add_argument("--save-baseline", action="store_true")
    args = p.parse_args(argv)
    if not (args.data_dir / "kb.txt").exists():
        sys.exit(f"MetaQA not found in {args.data_dir}; pass --data-dir")
    if not (args.index / "meta.json").exists():
        build_index(args.data_dir / "kb.txt", args.index)
    index = open_index(args.index)
    from ark.llm import make_chat_model

    extra: dict[str, Any] = {"n_threads": args.threads} if args.threads else {}
    if args.adapter:  # the student's LoRA, with the prompt variant it was trained on
        from ark.distill.export import adapter_settings

        student = adapter_settings(args.adapter, None)
        args.prompt = student.prompt
        args.multi_neighborhood = args.multi_neighborhood or student.tools.multi_neighborhood
        extra.update(student.llm_kwargs)
    llm = make_chat_model(model=args.model, **extra)
    started = time.perf_counter()
    results = {hop: run_hop(args, index, llm, hop) for hop in args.hops}
    baseline = json.loads(BASELINE.read_text()) if BASELINE.exists() else None
    title = f"MetaQA dev, {args.limit}/hop (sample seed {args.sample_seed}), run {args.label!r}"
    if baseline:
        title += f"; in brackets: difference to baseline {baseline.get('label')!r}"
    print(f"\n{title}\n")
    print(table(results, baseline))
    print(f"\n({time.perf_counter() - started:.0f} s)")
    if args.save_baseline:
        old = baseline if baseline and baseline.get("label") == args.label else {"hops": {}}
        old["label"] = args.label
        for hop, summary in results.items():
            old["hops"][str(hop)] = {
                "metrics": summary["metrics"],
                "queries": summary["queries"],
                "wall_s_per_query": summary["wall_s_per_query"],
                "config": summary["config"],
            }
        BASELINE.write_text(json.dumps(old, indent=2) + "\n")
        print(f"baseline saved to {BASELINE}")


if __name__ == "__main__":
    main()
