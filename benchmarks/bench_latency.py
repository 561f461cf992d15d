"""Seconds per offline answer with a decoding option off and on, on the same questions.

    python benchmarks/bench_latency.py [--set metaqa-2] [--limit 10] [--sample-seed 0]
        [--model 1.5b] [--adapter LORA.gguf] [--compare lookup|grouped|engine] [--lookup 4]
        [--plan-threshold 0.6]
        [--max-steps 8] [--temperature 0.7 --seeds 0 1 2]
        [--threads 2] [--describe] [--out .bench/latency/NAME.jsonl]
    python benchmarks/bench_latency.py --decode-cost [--model 1.5b] [--threads 2]
    python benchmarks/bench_latency.py --rates [--model 1.5b] [--threads 2]
    python benchmarks/bench_latency.py --against BASE.jsonl OTHER.jsonl
    python benchmarks/bench_latency.py --observation-tokens 200 [--sets metaqa-1 wc-2hop]
    python benchmarks/bench_latency.py --demo [--model 1.5b]
    python benchmarks/bench_latency.py --replay SFT.jsonl [--costs MS,MS,MS,MS,MS,MS]

What a user waits for with the local model: one ``ark-guided`` agent (the hop over a
set, as the students run) per question of a fixed dev sample, decoded token by token
by llama-cpp-python's own ``create_completion`` ("off": the path before issue 31, and
``ARK_LOOKUP=off`` now) and by ARK's decoder ("on", the default: prompt-lookup and
format drafts, the grammar checked on the sampled token first;
``LocalChatModel(lookup=N)``, see ``ark/llm/local/_lookup.py``), or (``--compare grouped``,
both decoded by ARK's) with observations in the line form
and grouped by relation and type (``ToolConfig(grouped_observations=True)``, a change
the model reads, so answers may change too: Hit@1 is in the table). Greedy
(temperature 0), so with lookup both settings should write the same trajectory and
the difference is speed alone; ``--compare engine`` sets the engine before issue 63
("off": each reply re-tokenized from the template, the last step offered the answer
tools alone, the model asked for the finish the reading knows, no prediction) against
today's ("on": the last step's prompt kept and its reply restricted by the grammar;
that finish run without the model; the hinted call drafted as the reply's prediction;
with ``--keep-replies`` also the replies kept as the tokens sampled, ``_replies.py``,
on by default until 2026-12-07), so the
model reads slightly other tokens and answers may change: Hit@1 is in the table. Sure
plans (issue 62) are off unless ``--plan-threshold`` is given, so the model's own
steps are what is timed. A question whose ranking differs is
counted and listed (llama.cpp's logits move slightly with the batch a token is decoded
in, so a near tie can go the other way). ``--temperature 0.7 --seeds 0 1 2`` runs each
question at the temperature users run, once per seed (the same seed for both
settings): there the decoders must draw from one distribution (issue 39), so the table
adds Hit@1 per seed; ``bench_quality.py --decoders`` is the same comparison on whole
dev sets.

The two settings are two models in one process, and each question runs under both
back to back, in alternating order, so a change in the machine's speed during the run
falls on both. Per setting the table gives mean and p50 seconds per question, the
prompt and decode seconds of the model calls (``ark.profile``), tokens generated,
draft tokens checked and kept (each kept one is a decode saved). Each question's
record is appended to ``--out`` (JSON lines), and a rerun skips questions already
there. ``--decode-cost`` times one decode of k tokens against k decodes of one, the
number that decides whether a draft can pay on this CPU; ``--rates`` times this
llama.cpp build reading and writing tokens at an agent's context (run it under two
builds to compare them; every timed mode prints the build's instruction sets), and
``--against BASE.jsonl OTHER.jsonl`` sets two runs' records of the same questions (two
builds) against the first run's "off".
``--observation-tokens N``
counts the tokens the agent reads in tool observations, one neighbor a line against
grouped by relation and type (``ToolConfig(grouped_observations=True)``), over N
synthetic trajectories of each graph (no model run, no question set). Run the timed
modes on an idle machine: the whole point is seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ark import Retriever, ToolConfig
from ark.datasets import load_dataset, sample
from ark.profile import query_profile
from bench_quality import SETS, default_data_dir, index_for, parse_set

SETTINGS = ("off", "on")
COLUMNS = (
    "prompt_s",
    "decode_s",
    "profiled_steps",
    "evaluated_tokens",
    "generated_tokens",
    "draft_tokens",
    "accepted_tokens",
    "forced_tokens",
    "predicted_tokens",
)


def run_question(retriever: Retriever, question: str, qid: str) -> dict[str, Any]:
    started = time.perf_counter()
    result = asyncio.run(retriever.aretrieve(question, qid))
    wall = time.perf_counter() - started
    prof = query_profile(result.trajectories)
    return {
        "wall_s": round(wall, 3),
        "ranking": [r.index for r in result.ranking[:20]],
        "steps": prof["steps"],
        **{k: prof[k] for k in COLUMNS},
    }


def decode_cost(llm: Any, sizes: tuple[int, ...] = (1, 2, 3, 5, 9, 17), repeats: int = 5) -> str:
    """Milliseconds of one ``llama_decode`` of k tokens of one sequence (logits at every
    position, as a checked draft has them) after a 600-token context: what a draft of
    k - 1 tokens costs against decoding them one by one."""
    inner = llm._llm
    context = inner.tokenize(b"the films directed by Robert Zemeckis " * 100)[:600]
    inner.reset()
    inner.eval(context)
    base = inner.n_tokens
    lines = ["| tokens per decode | ms per decode (median) | ms per token | vs k × one |"]
    lines.append("|---:|---:|---:|---:|")
    one = None
    for k in sizes:
        times = []
        for _ in range(repeats):
            inner._batch.set_batch(batch=context[:k], n_past=base, logits_all=True)
            started = time.perf_counter()
            inner._ctx.decode(inner._batch)
            times.append(time.perf_counter() - started)
            inner._ctx.kv_cache_seq_rm(-1, base, -1)
        ms = statistics.median(times) * 1000
        one = one or ms
        lines.append(f"| {k} | {ms:.1f} | {ms / k:.1f} | {ms / (k * one):.2f} |")
    inner.reset()
    return "\n".join(lines)


def against_table(
    base: list[dict[str, Any]], other: list[dict[str, Any]], labels: tuple[str, str]
) -> str:
    """Two runs of the same questions (e.g. two llama.cpp builds), each setting of each
    against ``base``'s "off": mean seconds, prompt and decode seconds, Hit@1, the mean's
    ratio, the median per-question ratio, and the rankings equal to ``base``'s "off"."""
    ref = {r["id"]: r["off"] for r in base}
    if not ref or any(r["id"] not in ref for r in other) or len(other) != len(base):
        sys.exit("--against: the two record files must hold the same questions")
    lines = [
        "| run | setting | n | s/question mean | p50 | prompt s | decode s | Hit@1 | "
        "x base off | p50 x | rankings as base off |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    base_mean = statistics.mean(r["wall_s"] for r in ref.values())
    for label, records in zip(labels, (base, other), strict=True):
        for setting in SETTINGS:
            rows = {r["id"]: r[setting] for r in records}
            walls = [r["wall_s"] for r in rows.values()]
            ratios = [rows[i]["wall_s"] / ref[i]["wall_s"] for i in rows if ref[i]["wall_s"]]
            same = sum(rows[i]["ranking"] == ref[i]["ranking"] for i in rows)
            lines.append(
                f"| {label} | {setting} | {len(rows)} | {statistics.mean(walls):.1f} | "
                f"{statistics.median(walls):.1f} | "
                f"{statistics.mean(r['prompt_s'] for r in rows.values()):.1f} | "
                f"{statistics.mean(r['decode_s'] for r in rows.values()):.1f} | "
                f"{100 * sum(bool(r.get('hit1')) for r in rows.values()) / len(rows):.1f} | "
                f"{statistics.mean(walls) / base_mean:.2f} | {statistics.median(ratios):.2f} | "
                f"{same}/{len(rows)} |"
            )
    return "\n".join(lines)


def build_line() -> str:
    """The installed llama.cpp's instruction sets and what it leaves out of this CPU,
    printed above every timed table: seconds depend on the build."""
    from ark.llm.local import build_report

    info, missing = build_report()
    return f"llama.cpp {info}; leaves out of this CPU: {', '.join(missing) or 'nothing'}"


def read_write_rates(llm: Any, prefix: int = 2000, read: int = 400, write: int = 32) -> str:
    """Tokens per second this llama.cpp build reads (one ``eval`` of ``read`` prompt
    tokens) and writes (``write`` one-token decodes) after a ``prefix``-token context,
    as an agent's step does after the system prompt; best of two."""
    inner = llm._llm
    text = (Path(__file__).parents[1] / "journal" / "results-diary.md").read_text()
    tokens = inner.tokenize(text.encode())[: prefix + read + write]
    out = measure_rates(inner, tokens, prefix, read, write)
    return (
        f"| prompt tokens read / s | tokens written / s |\n|---:|---:|\n"
        f"| {out['read']:.1f} | {out['write']:.1f} |"
    )


def measure_rates(inner: Any, tokens: list[int], prefix: int, read: int, write: int) -> dict:
    """On a ``llama_cpp.Llama``: tokens a second over the first ``prefix`` of
    ``tokens`` from an empty cache (``read_prefix``), over ``read`` more after them
    (``read``) and in ``write`` one-token decodes after those (``write``); the last two
    best of two. The cache is emptied after."""
    inner.reset()
    started = time.perf_counter()
    inner.eval(tokens[:prefix])
    cold = prefix / (time.perf_counter() - started)
    reads, writes = [], []
    for _ in range(2):
        inner._ctx.kv_cache_seq_rm(-1, prefix, -1)
        inner.n_tokens = prefix
        started = time.perf_counter()
        inner.eval(tokens[prefix : prefix + read])
        reads.append(read / (time.perf_counter() - started))
        started = time.perf_counter()
        for token in tokens[prefix + read : prefix + read + write]:
            inner.eval([token])
        writes.append(write / (time.perf_counter() - started))
    inner.reset()
    return {"read_prefix": cold, "read": max(reads), "write": max(writes)}


def observation_tokens(index: Any, tokenize: Any, n: int, seed: int = 0) -> dict[str, float]:
    """Tokens of the observations the guided agent reads, in the line form and the
    grouped one (``ToolConfig(grouped_observations=...)``), over ``n`` teacher-free
    trajectories of the graph (``ark distill synthesize``, hints and the hop over a set
    on): every call is replayed through a session in each form, so both read the same
    tool results, hints included. Per trajectory and per neighborhood call."""
    from ark.distill.synthesize import SynthConfig, synthesize
    from ark.session import ToolSession
    from ark.strategies import ChainHints

    totals = {False: 0, True: 0}
    hoods = {False: 0, True: 0}
    n_hoods = trajectories = 0
    for t in synthesize(index, SynthConfig(n=n, seed=seed, multi_neighborhood=True, hints=True)):
        trajectories += 1
        sessions = {
            g: ToolSession(
                index,
                config=ToolConfig(multi_neighborhood=True, grouped_observations=g),
                question=t.question,
                observers=[ChainHints(index, t.question)],
            )
            for g in (False, True)
        }
        for step in t.steps:
            for call in step.tool_calls:
                hood = call.name == "search_in_neighborhood"
                n_hoods += hood
                for g, session in sessions.items():
                    text = session.call(call.name, call.arguments, call.raw_arguments).observation
                    count = len(tokenize(text))
                    totals[g] += count
                    hoods[g] += count if hood else 0
    return {
        "trajectories": trajectories,
        "neighborhood_calls": n_hoods,
        "lines_per_trajectory": totals[False] / trajectories,
        "grouped_per_trajectory": totals[True] / trajectories,
        "lines_per_neighborhood": hoods[False] / max(1, n_hoods),
        "grouped_per_neighborhood": hoods[True] / max(1, n_hoods),
    }


#: Decode sizes of ``--decode-cost``; ``--costs`` gives milliseconds for each of them.
DECODE_SIZES = (1, 2, 3, 5, 9, 17)


def replay(path: Path, costs: dict[int, float], every: int = 20) -> str:
    """Replay recorded assistant turns (an ``ark distill sft`` file: token ids and the
    loss mask, i.e. exactly the tokens the model writes) under the lookup rule with
    several ``max_draft``, with and without drafts of what the tool-call format fixes
    (``_skeleton.py``), outputs held equal: decodes per generated token, the share of
    generated tokens the format fixed, and the decode cost against token-by-token
    decoding with ``costs`` (ms per decode of k tokens, from ``--decode-cost``). Every
    ``every``-th conversation is read; the tokenizer and tools come from its meta."""
    from llama_cpp import Llama

    from ark.probes import local_drafters

    lookup_draft, format_drafter, MAX_FORCED = local_drafters()
    from ark.tools import tool_specs

    meta = json.loads(Path(f"{path}.meta.json").read_text())
    vocab = Llama(meta["base"], vocab_only=True, verbose=False)
    tools = tool_specs(None, ToolConfig(**meta["tools"]), answer_tools=True)

    sizes = sorted(costs)

    def cost(k: int) -> float:  # linear between measured sizes
        for a, b in itertools.pairwise(sizes):
            if a <= k <= b:
                return costs[a] + (costs[b] - costs[a]) * (k - a) / (b - a)
        return costs[sizes[-1]] * k / sizes[-1]

    records = [json.loads(line) for i, line in enumerate(path.open()) if i % every == 0]
    rows = [
        f"{len(records)} conversations of {path} (every {every}th)",
        "",
        "| drafts | decodes per token | format's share of tokens | decode cost vs token by token |",
        "|---|---:|---:|---:|",
    ]
    policies = [(m, False) for m in (1, 2, 4)] + [(0, True), (4, True)]
    for max_draft, with_format in policies:
        tokens = turns = decodes = fixed = 0
        spent = 0.0
        for r in records:
            ids, mask = r["input_ids"], r["mask"]
            i = 0
            while i < len(ids):
                if mask[i] != 1:
                    i += 1
                    continue
                end = i
                while end < len(ids) and mask[end] == 1:
                    end += 1
                tokens, turns = tokens + end - i, turns + 1
                pos = i  # the first token comes from the prompt's decode
                drafter = format_drafter(vocab, tools, ids[:i]) if with_format else None
                while pos < end - 1:
                    draft = drafter(ids[i : pos + 1])[:MAX_FORCED] if drafter else []
                    ours = bool(draft)
                    if not draft and max_draft:
                        draft = lookup_draft(ids[: pos + 1], max_draft=max_draft)
                    kept = 0
                    for k, t in enumerate(draft):
                        if pos + 1 + k >= end or ids[pos + 1 + k] != t:
                            break
                        kept += 1
                    decodes += 1
                    fixed += kept if ours else 0
                    spent += cost(len(draft) + 1)
                    pos += kept + 1
                i = end
        plain = tokens - turns
        name = " + ".join(
            ([f"conversation, up to {max_draft}"] if max_draft else [])
            + (["the format's"] if with_format else [])
        )
        rows.append(
            f"| {name} | {decodes / plain:.2f} | {fixed / tokens:.2f} | "
            f"{spent / (plain * cost(1)):.2f} |"
        )
    return "\n".join(rows)


def demo_runs(model: str | None, repeats: int = 2) -> str:
    """``ark demo`` (greedy) in fresh processes: with no saved system-prompt state
    (``ARK_KV_CACHE=off``, the path before the disk cache), then with a fresh cache
    directory ``repeats`` times — the first run saves the state (cold), the next load it
    (warm). Wall seconds of each process, the model's load included."""
    import os
    import subprocess
    import tempfile

    ark = Path(sys.executable).with_name("ark")  # the console script beside this Python
    command = [str(ark), "demo", "--temperature", "0", "--json"]
    if model:
        command += ["--model", model]
    env = dict(os.environ)  # llama.cpp threads: every core, as a user's `ark demo` runs
    rows = ["| run | ARK_KV_CACHE | wall s | answer (top 3) |", "|---|---|---:|---|"]

    def run(label: str, cache: str) -> None:
        started = time.perf_counter()
        done = subprocess.run(
            command, env={**env, "ARK_KV_CACHE": cache}, capture_output=True, text=True
        )
        wall = time.perf_counter() - started
        if done.returncode:
            sys.exit(f"ark demo failed ({done.returncode}): {done.stderr[-2000:]}")
        ranking = json.loads(done.stdout).get("ranking", [])[:3]
        names = ", ".join(str(r.get("name")) for r in ranking)
        rows.append(
            f"| {label} | {'off' if cache == 'off' else 'fresh dir'} | {wall:.1f} | {names} |"
        )
        print(f"  {label}: {wall:.1f} s", file=sys.stderr, flush=True)

    run("no saved state", "off")
    with tempfile.TemporaryDirectory() as cache:
        for i in range(repeats):
            run("cold (saves the state)" if i == 0 else f"warm #{i}", cache)
    return "\n".join(rows)


def table(records: list[dict[str, Any]]) -> str:
    lines = [
        "| setting | n | s/question mean | p50 | prompt s | decode s | model calls | "
        "evaluated | generated | drafted | kept | of them the format's | predicted | Hit@1 |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    means: dict[str, float] = {}
    for setting in SETTINGS:
        rows = [r[setting] for r in records]
        if not rows:
            continue
        walls = [r["wall_s"] for r in rows]
        means[setting] = statistics.mean(walls)
        sums = {k: sum(r.get(k, 0) for r in rows) / len(rows) for k in COLUMNS}
        lines.append(
            f"| {setting} | {len(rows)} | {means[setting]:.1f} | {statistics.median(walls):.1f} | "
            f"{sums['prompt_s']:.1f} | {sums['decode_s']:.1f} | {sums['profiled_steps']:.1f} | "
            f"{sums['evaluated_tokens']:.0f} | {sums['generated_tokens']:.0f} | "
            f"{sums['draft_tokens']:.0f} | {sums['accepted_tokens']:.0f} | "
            f"{sums['forced_tokens']:.0f} | {sums['predicted_tokens']:.0f} | "
            f"{100 * sum(bool(r.get('hit1')) for r in rows) / len(rows):.1f} |"
        )
    if len(means) == 2:
        ratios = [r["on"]["wall_s"] / r["off"]["wall_s"] for r in records if r["off"]["wall_s"]]
        differ = [
            f"{r['id']}" + (f" (seed {r['seed']})" if r.get("seed") else "")
            for r in records
            if r["on"]["ranking"] != r["off"]["ranking"]
        ]
        lines.append("")
        lines.append(
            f"on/off: mean {means['on'] / means['off']:.2f}, per-question p50 "
            f"{statistics.median(ratios):.2f}; rankings differ on {len(differ)} of "
            f"{len(records)}{': ' + ', '.join(differ) if differ else ''}"
        )
    seeds = sorted({r.get("seed", 0) for r in records})
    if len(seeds) > 1:
        lines.append("")
        for setting in means:
            right = [
                sum(bool(r[setting].get("hit1")) for r in records if r.get("seed", 0) == seed)
                for seed in seeds
            ]
            counts = ", ".join(f"seed {s}: {n}" for s, n in zip(seeds, right, strict=True))
            lines.append(f"Hit@1 ({setting}), right at rank 1 by seed: {counts}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--set", default="metaqa-2", help=f"one of {sorted(SETS)} or NAME=KB::DATASET")
    p.add_argument("--limit", type=int, default=10)
    p.add_argument("--sample-seed", type=int, default=0)
    p.add_argument("--data-dir", type=Path, default=default_data_dir())
    p.add_argument("--index-cache", type=Path, default=Path(".bench"))
    p.add_argument("--describe", action="store_true", help="use (or make) the described index")
    p.add_argument("--model", default=None, help="0.5b, 1.5b or a GGUF path (default: 1.5b)")
    p.add_argument("--adapter", default=None, help="a LoRA GGUF from `ark distill export`")
    p.add_argument(
        "--compare",
        choices=("lookup", "grouped", "engine"),
        default="lookup",
        help="what 'on' turns on: prompt-lookup decoding, grouped observations, or the "
        "engine of issue 63 (the last step's prompt kept, the finish the reading knows "
        "run without the model, the hinted call predicted; with --keep-replies also the "
        "replies kept as sampled, off by default since 2026-12-07)",
    )
    p.add_argument(
        "--keep-replies",
        action="store_true",
        help="with --compare engine: 'on' also reads each reply back as the tokens sampled "
        "(LocalChatModel(keep_replies=True)), as the engine tables before 2026-12-07 did",
    )
    p.add_argument(
        "--plan-threshold",
        type=float,
        default=None,
        help="run sure plans without the model at this confidence (default: off, so the "
        "model's own steps are timed)",
    )
    p.add_argument("--lookup", type=int, default=4, help="most draft tokens per decode when on")
    p.add_argument("--max-steps", type=int, default=8)
    p.add_argument(
        "--temperature",
        type=float,
        default=0.0,
        help="0 (greedy: the settings differ in speed alone) or the users' 0.7",
    )
    p.add_argument(
        "--seeds", type=int, nargs="+", default=[0], help="one run of each question per seed"
    )
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--out", type=Path, default=None, help="JSON lines, one per question and seed")
    p.add_argument(
        "--decode-cost", action="store_true", help="only time a decode of k tokens, k = 1..17"
    )
    p.add_argument(
        "--against",
        nargs=2,
        type=Path,
        metavar=("BASE.jsonl", "OTHER.jsonl"),
        help="only compare two runs' records of the same questions (e.g. two builds)",
    )
    p.add_argument(
        "--rates",
        action="store_true",
        help="only time this llama.cpp build reading and writing tokens (compare builds)",
    )
    p.add_argument(
        "--observation-tokens",
        type=int,
        default=0,
        metavar="N",
        help="only count observation tokens, lines vs grouped, over N synthetic "
        "trajectories of each graph in --sets",
    )
    p.add_argument("--sets", nargs="+", default=["metaqa-1", "wc-2hop"])
    p.add_argument(
        "--replay",
        type=Path,
        default=None,
        metavar="SFT.jsonl",
        help="only replay recorded assistant turns under the lookup rule (no model run)",
    )
    p.add_argument(
        "--costs",
        default="70.4,104.8,132.1,166.6,313.1,445.3",
        help="ms per decode of 1,2,3,5,9,17 tokens (--decode-cost; default: the 1.5B's)",
    )
    p.add_argument(
        "--demo",
        action="store_true",
        help="only time `ark demo` in fresh processes: no saved state, cold, warm",
    )
    args = p.parse_args(argv)

    from ark.llm import make_chat_model

    extra: dict[str, Any] = {"n_threads": args.threads} if args.threads else {}
    prompt = "full"
    if args.adapter:
        from ark.strategies import adapter_settings

        student = adapter_settings(args.adapter, None)
        prompt = student.prompt
        extra.update(student.llm_kwargs)
    if args.replay:
        costs = [float(c) for c in args.costs.split(",")]
        if len(costs) != len(DECODE_SIZES):
            sys.exit(f"--costs takes {len(DECODE_SIZES)} numbers (ms for k = {DECODE_SIZES})")
        print(replay(args.replay, dict(zip(DECODE_SIZES, costs, strict=True))))
        return
    if args.demo:
        print(f"\n`ark demo` in fresh processes, model {args.model or '1.5b'}\n")
        print(demo_runs(args.model))
        return
    if args.observation_tokens:
        from llama_cpp import Llama

        from ark.llm.local import local_model_path

        vocab = Llama(str(local_model_path(args.model or "1.5b")), vocab_only=True, verbose=False)
        print(
            f"\nObservation tokens ({args.model or '1.5b'} tokenizer), "
            f"{args.observation_tokens} synthetic trajectories per graph (seed 0)\n"
        )
        print(
            "| graph | neighborhood calls | tokens/trajectory, lines | grouped | ratio | "
            "tokens/neighborhood, lines | grouped | ratio |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for name in args.sets:
            _, kb, _, _ = parse_set(name, args.data_dir)
            index, _ = index_for(kb, args.index_cache)
            r = observation_tokens(
                index, lambda t: vocab.tokenize(t.encode(), add_bos=False), args.observation_tokens
            )
            print(
                f"| {kb.parent.name} | {r['neighborhood_calls']} | "
                f"{r['lines_per_trajectory']:.0f} | {r['grouped_per_trajectory']:.0f} | "
                f"{r['grouped_per_trajectory'] / r['lines_per_trajectory']:.2f} | "
                f"{r['lines_per_neighborhood']:.0f} | {r['grouped_per_neighborhood']:.0f} | "
                f"{r['grouped_per_neighborhood'] / r['lines_per_neighborhood']:.2f} |",
                flush=True,
            )
        return
    if args.against:
        base_path, other_path = args.against
        runs = [[json.loads(line) for line in path.open()] for path in args.against]
        print(against_table(runs[0], runs[1], (base_path.stem, other_path.stem)))
        return
    if args.rates:
        llm = make_chat_model(model=args.model, parallel=False, **extra)
        print(f"\n{build_line()}")
        print(f"model {args.model or '1.5b'}, threads {args.threads}, after 2,000 tokens\n")
        print(read_write_rates(llm))
        return
    if args.decode_cost:
        llm = make_chat_model(model=args.model, parallel=False, **extra)
        print(f"\nOne decode of k tokens, model {args.model or '1.5b'}, threads {args.threads}\n")
        print(decode_cost(llm))
        return
    # --compare grouped: both settings decode alike (--lookup), only observations differ.
    lookups = {"off": 0 if args.compare == "lookup" else args.lookup, "on": args.lookup}
    engine = args.compare == "engine"
    kept = {"on": {"keep_replies": True}} if engine and args.keep_replies else {}
    models = {
        s: make_chat_model(model=args.model, parallel=False, lookup=n, **extra, **kept.get(s, {}))
        for s, n in lookups.items()
    }
    tools = student.tools if args.adapter else ToolConfig(multi_neighborhood=True)
    grouped = args.compare == "grouped"
    settings = {"off": tools, "on": replace(tools, grouped_observations=grouped)}
    if engine:  # "off": the engine before issue 63, in the same process
        models["off"].restricts_tools = False
        models["off"].accepts_prediction = False
    name, kb, dataset, split = parse_set(args.set, args.data_dir)
    index, _ = index_for(kb, args.index_cache, models["off"] if args.describe else None)
    queries, _ = load_dataset(dataset, index, split, kb.parent)
    queries = sample(queries, args.limit, args.sample_seed)

    def retriever(setting: str, seed: int) -> Retriever:
        made = Retriever(
            index,
            models[setting],
            strategy="ark-guided",
            n_agents=1,
            max_steps=args.max_steps,
            temperature=args.temperature,
            tools=settings[setting],
            seed=seed,
            prompt=prompt,
            plan_threshold=args.plan_threshold,
        )
        if engine and setting == "off":
            made.config = replace(made.config, finish_when_read=False)
        return made

    sampled = f"-t{args.temperature:g}" if args.temperature else ""
    variant = "-grouped" if grouped else "-engine" if engine else ""
    stem = f"{name}-{Path(args.model or '1.5b').stem}{variant}{sampled}"
    out = args.out or Path(".bench/latency") / f"{stem}.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    records = [json.loads(line) for line in out.open()] if out.exists() else []
    # A record of an earlier run without "seed" was seed 0; a rerun skips what is there.
    done = {(r["id"], r.get("seed", 0)) for r in records}
    total = len(queries) * len(args.seeds)
    if queries and len(done) < total:  # each model reads its system prompt once, untimed
        for setting in SETTINGS:
            run_question(retriever(setting, args.seeds[0]), queries[0].text, queries[0].id)
    for seed in args.seeds:
        retrievers = {s: retriever(s, seed) for s in SETTINGS}
        for i, q in enumerate(queries):
            if (q.id, seed) in done:
                continue
            order = SETTINGS if i % 2 == 0 else SETTINGS[::-1]
            record: dict[str, Any] = {"id": q.id, "seed": seed, "question": q.text}
            for setting in order:
                record[setting] = run_question(retrievers[setting], q.text, q.id)
                record[setting]["hit1"] = bool(record[setting]["ranking"][:1]) and (
                    record[setting]["ranking"][0] in q.gold
                )
            records.append(record)
            with out.open("a") as f:
                f.write(json.dumps(record) + "\n")
            print(
                f"  {name} {len(records)}/{total} (seed {seed}): off "
                f"{record['off']['wall_s']:.1f} s, on {record['on']['wall_s']:.1f} s",
                file=sys.stderr,
                flush=True,
            )
    print(f"\n{build_line()}")
    on_label = (
        "grouped observations"
        if grouped
        else "the engine of issue 63"
        if engine
        else f"lookup {args.lookup}"
    )
    print(
        f"\n{name}, {len(records)} runs (questions x seeds), model {args.model or '1.5b'}"
        f"{' + ' + args.adapter if args.adapter else ''}, temperature {args.temperature:g}, "
        f"on = {on_label}, "
        f"plans {'off' if args.plan_threshold is None else f'at {args.plan_threshold:g}'}\n"
    )
    print(table(records))


if __name__ == "__main__":
    main()
