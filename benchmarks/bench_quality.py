"""Agent quality on fixed dev samples of several graphs, with the differences to a baseline.

    python benchmarks/bench_quality.py [--sets metaqa-1 metaqa-2 metaqa-3 metaqa-ntm
        wc-2hop wc-conj | --hops 1 2 3] [--limit 30] [--label NAME]
        [--agents 1] [--max-steps 8] [--seed 0] [--temperature 0.7] [--fusion vote]
        [--prompt full|short] [--model 0.5b|1.5b|GGUF] [--adapter LORA.gguf]
        [--[no-]example] [--[no-]hints] [--[no-]multi-neighborhood]
        [--[no-]grouped-observations]
        [--describe] [--plan-threshold P] [--plan-choice] [--save-baseline]
        [--decoders ark llama --seeds 0 1 2 [--stored]]

The generality table: a change is judged on MetaQA dev 1/2/3-hop, MetaQA's
paraphrased one-hop questions (``metaqa-ntm``, split ``dev_ntm``) and WC2014's
two-hop and conjunctive sets (a second real graph with other relation names and no
node types), never on MetaQA alone. A set is one of :data:`SETS` or
``NAME=KB::DATASET[::SPLIT]`` for any graph file and dataset spec ``ark eval`` takes
(``mine=data/kb.tsv::jsonl:data/dev.jsonl``).

Every run goes through the evaluation API (``ark.eval.Evaluation``, the same code
as ``ark eval``) with the local model and a fixed agent seed, so a change
to the agent is judged on the same questions with the same sampling. Each set is
written to ``OUT/LABEL/SET`` and is resumable: rerunning the same command continues
where an interrupted run stopped (the runner refuses to resume with other settings).
The table printed at the end compares each set with ``benchmarks/quality_baseline.json``
(``--save-baseline`` stores this run there).

``--decoders ark llama --seeds 0 1 2`` judges a decoder where users run it: every set
under ARK's decoder (``ARK_LOOKUP`` on, the default) and llama-cpp-python's
``create_completion`` (``ARK_LOOKUP=off``), at each agent seed, on the same questions
(``OUT/LABEL-DECODER-sSEED/SET``), then one table: Hit@1 per seed, the mean, and the
seconds per question of each decoder, and a paired table: the (question, seed) pairs
only one decoder answers at rank 1, with the exact sign test on them. ``--stored``
prints those tables from the finished runs under ``--out`` without running anything.
A speed change that lowers the mean beyond one question of a set does not become the
default (issue 39). Needs the ``[local]`` extra and the data folder (``$ARK_DATA_DIR``
or ``../shared/data``). One 30-question set takes 15–60 min on 2 CPU cores; do not
overlap it with other CPU-heavy work.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ark.eval import Evaluation
from ark.index import build_index, open_index
from ark.probes import PROMPT_VARIANTS
from ark.strategies import Agent, AgentOptions, GuidedAgent, GuidedOptions
from ark.strategies.guided.plans import DEFAULT_THRESHOLD, threshold_setting
from ark.tools import ToolConfig

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from compare_trajectories import first_difference, load  # noqa: E402

BASELINE = HERE / "quality_baseline.json"
MEASURES = ("hit@1", "hit@5", "recall@20", "mrr")


def default_data_dir() -> Path:
    """``$ARK_DATA_DIR``, else ``../shared/data`` beside the repository."""
    return Path(os.environ.get("ARK_DATA_DIR", HERE.parents[1] / "shared" / "data"))


def agent_factory(options: AgentOptions, guided: GuidedOptions | None):  # type: ignore[no-untyped-def]
    """A strategy factory building ARK's agent with ``options``; with ``guided``, the
    agent of ``ark-guided`` (its hints and plans) with those options."""

    def factory(ctx):  # type: ignore[no-untyped-def]
        if guided is not None:
            return GuidedAgent.from_context(ctx, options=options, guided=guided)
        return Agent.from_context(ctx, options=options)

    factory.strategy_name = "ark"  # type: ignore[attr-defined]
    return factory


@dataclass(frozen=True)
class QuestionSet:
    """A graph file (relative to the data folder) and a dataset spec of ``ark eval``."""

    kb: str
    dataset: str
    split: str = "dev"


#: The generality table's sets (relative to ``--data-dir``).
SETS: dict[str, QuestionSet] = {
    "metaqa-1": QuestionSet("metaqa/kb.txt", "metaqa:1-hop"),
    "metaqa-2": QuestionSet("metaqa/kb.txt", "metaqa:2-hop"),
    "metaqa-3": QuestionSet("metaqa/kb.txt", "metaqa:3-hop"),
    "metaqa-ntm": QuestionSet("metaqa/kb.txt", "metaqa:1-hop", "dev_ntm"),
    "wc-2hop": QuestionSet("wc2014/kb.tsv", "jsonl:wc2014/2-hop.jsonl"),
    "wc-conj": QuestionSet("wc2014/kb.tsv", "jsonl:wc2014/conjunctive.jsonl"),
}


def parse_set(spec: str, data_dir: Path) -> tuple[str, Path, str, str]:
    """(name, graph file, dataset spec, split) of a ``--sets`` entry: a name of
    :data:`SETS`, or ``NAME=KB::DATASET[::SPLIT]`` with paths as given."""
    if spec in SETS:
        s = SETS[spec]
        kind, _, arg = s.dataset.partition(":")
        dataset = f"jsonl:{data_dir / arg}" if kind == "jsonl" else s.dataset
        return spec, data_dir / s.kb, dataset, s.split
    name, eq, rest = spec.partition("=")
    parts = rest.split("::")
    if not eq or len(parts) not in (2, 3) or not all(parts):
        sys.exit(f"--sets: {spec!r} is neither one of {sorted(SETS)} nor NAME=KB::DATASET[::SPLIT]")
    return name, Path(parts[0]), parts[1], parts[2] if len(parts) == 3 else "dev"


def index_for(kb: Path, cache: Path, describe_with=None):  # type: ignore[no-untyped-def]
    """The index of ``kb``, built once under ``cache`` (one directory per graph file);
    with ``describe_with`` (a model), described once by it (``ark index describe``)."""
    if not kb.exists():
        sys.exit(f"{kb} not found; pass --data-dir (or set ARK_DATA_DIR)")
    where = cache / f"{kb.parent.name}-{kb.stem}{'-described' if describe_with else ''}.idx"
    if not (where / "meta.json").exists():
        build_index(kb, where)
    index = open_index(where)
    if describe_with is not None and not any(
        s.startswith("model:") for s in index.described.sources
    ):
        from ark.describe import describe_index

        print(f"  describing {where} with {describe_with.name}", file=sys.stderr)
        describe_index(index, describe_with)
    return index, where


def agent_options(options: AgentOptions, guided: GuidedOptions | None) -> dict[str, object]:
    """The agent's switches as a run records them (a rerun resumes only alike): the
    loop's and, with ``hints``, the guided strategy's."""
    plans = guided or GuidedOptions()
    return {
        "example": options.example,
        "hints": guided is not None,
        "choose_plans": plans.choose_plans,
        "hand_over_plans": plans.hand_over_plans,
        "texts_once": options.texts_once,
    }


def run_set(args: argparse.Namespace, llm, spec: str) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    name, kb, dataset, split = parse_set(spec, args.data_dir)
    index, _ = index_for(kb, args.index_cache, llm if args.describe else None)
    options = AgentOptions(example=args.example)
    guided = GuidedOptions(choose_plans=args.plan_choice) if args.hints else None
    out = args.out / args.label / name
    run = Evaluation(
        dataset,
        index,
        out,
        split=split,
        limit=args.limit,
        sample_seed=args.sample_seed,
        strategy=agent_factory(options, guided),
        agents=args.agents,
        max_steps=args.max_steps,
        fusion=args.fusion,
        temperature=args.temperature,
        tools=ToolConfig(
            multi_neighborhood=args.multi_neighborhood,
            grouped_observations=args.grouped_observations,
        ),
        prompt=args.prompt,
        seed=args.seed,
        data_dir=kb.parent,
        plan_threshold=threshold_setting(args.plan_threshold),
        # recorded beside the settings ark eval records, so a rerun resumes only alike
        extra_config={
            "agent_options": agent_options(options, guided),
            **({"described": index.described.sources} if args.describe else {}),
            **({"adapter": str(args.adapter)} if args.adapter else {}),
        },
    )

    def progress(done: int, total: int) -> None:
        print(f"\r  {name}: {done}/{total}", end="", file=sys.stderr, flush=True)

    summary = run.run(
        llm=llm,
        resume=(out / "results.jsonl").exists(),
        progress=progress,
        on_event=_print_event if args.verbose else None,
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


def _baseline_of(baseline: dict[str, Any] | None, name: str) -> dict[str, Any] | None:
    """The baseline's entry for a set (older baselines keyed MetaQA by hop number)."""
    if not baseline:
        return None
    found = baseline.get("sets", {}).get(name)
    if found is None and name.startswith("metaqa-") and name[7:].isdigit():
        found = baseline.get("hops", {}).get(name[7:])
    return found


def table(results: dict[str, dict[str, Any]], baseline: dict[str, Any] | None) -> str:
    lines = [
        "| set | n | Hit@1 | Hit@5 | R@20 | MRR | s/query (p50) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, summary in results.items():
        m = summary["metrics"]
        base = _baseline_of(baseline, name)
        cells = []
        for key in MEASURES:
            cell = f"{m.get(key, 0.0):.1f}"
            if base is not None:
                cell += f" ({m.get(key, 0.0) - base['metrics'].get(key, 0.0):+.1f})"
            cells.append(cell)
        wall = summary["wall_s_per_query"]
        lines.append(
            f"| {name} | {summary['queries']} | {' | '.join(cells)} | "
            f"{wall['mean']:.1f} ({wall['p50']:.1f}) |"
        )
    return "\n".join(lines)


#: The local decoders ``--decoders`` compares: ``ARK_LOOKUP``'s value for each.
DECODERS = {"ark": "on", "llama": "off"}


def compare_decoders(args: argparse.Namespace, sets: list[str], extra: dict[str, Any]) -> None:
    """Every set under each decoder at each seed (same questions, same index), then
    one table of Hit@1 per seed, the mean and the seconds per question."""
    from ark.llm import make_chat_model

    seeds = args.seeds or [args.seed]
    label = args.label
    rows: dict[tuple[str, str], dict[int, dict[str, Any]]] = {}
    started = time.perf_counter()
    for decoder in args.decoders:
        os.environ["ARK_LOOKUP"] = DECODERS[decoder]
        llm = make_chat_model(model=args.model, **extra)
        for seed in seeds:
            args.seed, args.label = seed, f"{label}-{decoder}-s{seed}"
            for spec in sets:
                rows.setdefault((spec.split("=")[0], decoder), {})[seed] = run_set(args, llm, spec)
        del llm
    args.label = label
    print(f"\n{decoder_table(rows, seeds, args)}")
    if len(args.decoders) >= 2:
        names = [spec.split("=")[0] for spec in sets]
        print(f"\n{paired_table(args, names, seeds)}")
    print(f"\n({time.perf_counter() - started:.0f} s)")


def decoder_table(
    rows: dict[tuple[str, str], dict[int, dict[str, Any]]],
    seeds: list[int],
    args: argparse.Namespace,
) -> str:
    """Hit@1 of each (set, decoder) per seed and on average over the seeds it has (a
    seed not run yet shows "–"), with seconds per question."""
    head = " | ".join(f"seed {s}" for s in seeds)
    lines = [
        f"Dev samples, {args.limit}/set (sample seed {args.sample_seed}), temperature "
        f"{args.temperature}, {args.agents} agent(s), max {args.max_steps} steps",
        "",
        f"| set | decoder | {head} | mean Hit@1 | s/question |",
        "|---|---|" + "---:|" * (len(seeds) + 2),
    ]
    for (name, decoder), by_seed in rows.items():
        done = [s for s in seeds if s in by_seed]
        hits = [by_seed[s]["metrics"].get("hit@1", 0.0) for s in done]
        walls = [by_seed[s]["wall_s_per_query"]["mean"] for s in done]
        cells = " | ".join(
            f"{by_seed[s]['metrics'].get('hit@1', 0.0):.1f}" if s in by_seed else "–" for s in seeds
        )
        mean = f"{sum(hits) / len(hits):.1f}" if hits else "–"
        wall = f"{sum(walls) / len(walls):.1f}" if walls else "–"
        lines.append(f"| {name} | {decoder} | {cells} | {mean} | {wall} |")
    return "\n".join(lines)


def _hits_at_1(run_dir: Path) -> dict[str, float]:
    """Hit@1 of each question of a stored run (``results.jsonl``), by query id."""
    out: dict[str, float] = {}
    with (run_dir / "results.jsonl").open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            out[str(row["query_id"])] = float(row.get("metrics", {}).get("hit@1", 0.0))
    return out


def paired_table(args: argparse.Namespace, names: list[str], seeds: list[int]) -> str:
    """Question by question, the first two decoders on the runs both finished: how
    many (question, seed) pairs only one of them answers at rank 1, with the exact
    two-sided sign test on those (a gap read against chance, not against the mean
    alone), and how many pairs made the very same tool calls and answer
    (``compare_trajectories.py``'s test: at one seed an exact sampler draws what the
    reference draws until float noise in a batched draft check tips a near tie)."""
    from scipy.stats import binomtest

    first, second = args.decoders[:2]
    lines = [
        f"| set | seeds | pairs | same calls | both right | only {first} | only {second} "
        "| sign test p |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name in names:
        both = only_a = only_b = pairs = same = 0
        used: list[str] = []
        for seed in seeds:
            dirs = [args.out / f"{args.label}-{d}-s{seed}" / name for d in (first, second)]
            if not all((d / "summary.json").exists() for d in dirs):
                continue
            a, b = (_hits_at_1(d) for d in dirs)
            runs_a, runs_b = (load(d) for d in dirs)
            used.append(str(seed))
            for qid in a.keys() & b.keys():
                pairs += 1
                if qid in runs_a and qid in runs_b:
                    same += first_difference(runs_a[qid], runs_b[qid]) is None
                both += a[qid] > 0 and b[qid] > 0
                only_a += a[qid] > 0 and not b[qid] > 0
                only_b += b[qid] > 0 and not a[qid] > 0
        if not used:
            continue
        differ = only_a + only_b
        p = binomtest(only_a, differ).pvalue if differ else 1.0
        lines.append(
            f"| {name} | {' '.join(used)} | {pairs} | {same} | {both} | {only_a} | {only_b} "
            f"| {p:.2f} |"
        )
    return "\n".join(lines)


def stored_decoders(args: argparse.Namespace, sets: list[str]) -> None:
    """The decoder tables of the runs already stored under ``--out`` (finished ones:
    those with a ``summary.json``), running nothing: a long comparison is read while
    it is still going, or after, without a model."""
    seeds = args.seeds or [args.seed]
    names = [spec.split("=")[0] for spec in sets]
    rows: dict[tuple[str, str], dict[int, dict[str, Any]]] = {}
    for name in names:
        for decoder in args.decoders:
            for seed in seeds:
                summary = args.out / f"{args.label}-{decoder}-s{seed}" / name / "summary.json"
                if summary.exists():
                    by_seed = rows.setdefault((name, decoder), {})
                    by_seed[seed] = json.loads(summary.read_text(encoding="utf-8"))
    if not rows:
        sys.exit(f"no finished runs under {args.out}/{args.label}-DECODER-sSEED/SET")
    print(decoder_table(rows, seeds, args))
    if len(args.decoders) >= 2:
        print(f"\n{paired_table(args, names, seeds)}")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument(
        "--sets", nargs="+", default=None, help=f"from {sorted(SETS)} or NAME=KB::DATASET"
    )
    p.add_argument(
        "--hops", type=int, nargs="+", default=None, help="MetaQA hops (--sets metaqa-N)"
    )
    p.add_argument("--limit", type=int, default=30)
    p.add_argument("--sample-seed", type=int, default=0)
    p.add_argument("--label", default="current", help="run name under --out")
    p.add_argument("--out", type=Path, default=Path(".bench/quality"))
    p.add_argument(
        "--index-cache", type=Path, default=Path(".bench"), help="where indexes are built"
    )
    p.add_argument("--data-dir", type=Path, default=default_data_dir())
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
        default=False,
        help="observations that name types and onward relations",
    )
    p.add_argument(
        "--multi-neighborhood",
        action=argparse.BooleanOptionalAction,
        default=ToolConfig().multi_neighborhood,
        help="search_in_neighborhood over a set of nodes",
    )
    p.add_argument(
        "--grouped-observations",
        action=argparse.BooleanOptionalAction,
        default=ToolConfig().grouped_observations,
        help="a neighborhood's neighbors grouped by relation and type",
    )
    p.add_argument("--model", default=None, help="0.5b, 1.5b or a GGUF path (default: 1.5b)")
    p.add_argument("--adapter", default=None, help="a LoRA GGUF from `ark distill export`")
    p.add_argument(
        "--threads",
        type=int,
        default=None,
        help="llama.cpp threads (default: all cores; 1 is faster on an oversubscribed machine)",
    )
    p.add_argument(
        "--describe",
        action="store_true",
        help="describe each index once with the model (ark index describe) before the run",
    )
    p.add_argument(
        "--plan-threshold",
        type=float,
        default=DEFAULT_THRESHOLD,
        help="run the reading's plan without the model at this fitted confidence "
        "(ark.strategies.guided.plans; above 1: never, the model runs every step)",
    )
    p.add_argument(
        "--plan-choice",
        action="store_true",
        help="ask the model to choose between a plan and its rival where the two are sure "
        "only together (GuidedOptions.choose_plans=True)",
    )
    p.add_argument("--verbose", action="store_true", help="print every tool call")
    p.add_argument(
        "--decoders",
        nargs="+",
        choices=list(DECODERS),
        default=None,
        help="compare local decoders on the same questions (see --seeds)",
    )
    p.add_argument(
        "--seeds", type=int, nargs="+", default=None, help="agent seeds (with --decoders)"
    )
    p.add_argument(
        "--stored",
        action="store_true",
        help="with --decoders: print the tables of the finished runs under --out, run nothing",
    )
    p.add_argument("--save-baseline", action="store_true")
    args = p.parse_args(argv)
    sets = list(args.sets or []) + [f"metaqa-{h}" for h in args.hops or []]
    sets = sets or [f"metaqa-{h}" for h in (1, 2, 3)]
    if args.stored:
        if not args.decoders:
            sys.exit("--stored reads a decoder comparison: give --decoders (and --seeds)")
        stored_decoders(args, sets)
        return
    from ark.llm import make_chat_model

    extra: dict[str, Any] = {"n_threads": args.threads} if args.threads else {}
    if args.adapter:  # the student's LoRA, with the prompt variant it was trained on
        from ark.strategies import adapter_settings

        student = adapter_settings(args.adapter, None)
        args.prompt = student.prompt
        args.multi_neighborhood = args.multi_neighborhood or student.tools.multi_neighborhood
        args.grouped_observations = args.grouped_observations or student.tools.grouped_observations
        extra.update(student.llm_kwargs)
    if args.decoders:
        compare_decoders(args, sets, extra)
        return
    llm = make_chat_model(model=args.model, **extra)
    started = time.perf_counter()
    results = {name: run_set(args, llm, spec) for spec in sets for name in [spec.split("=")[0]]}
    baseline = json.loads(BASELINE.read_text()) if BASELINE.exists() else None
    title = f"Dev samples, {args.limit}/set (sample seed {args.sample_seed}), run {args.label!r}"
    if baseline:
        title += f"; in brackets: difference to baseline {baseline.get('label')!r}"
    print(f"\n{title}\n")
    print(table(results, baseline))
    print(f"\n({time.perf_counter() - started:.0f} s)")
    if args.save_baseline:
        old = baseline if baseline and baseline.get("label") == args.label else {}
        old["label"] = args.label
        for name, summary in results.items():
            old.setdefault("sets", {})[name] = {
                "metrics": summary["metrics"],
                "queries": summary["queries"],
                "wall_s_per_query": summary["wall_s_per_query"],
                "config": summary["config"],
            }
        BASELINE.write_text(json.dumps(old, indent=2) + "\n")
        print(f"baseline saved to {BASELINE}")


if __name__ == "__main__":
    main()
