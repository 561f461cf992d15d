"""Agent orchestration overhead, and the real local model's speed.

    python benchmarks/bench_agents.py [--delay 0.2] [--steps 8] [--repeats 3] [--local]
        [--local-steps 8] [--local-backends plain states batched] [--threads N]

Part 1 replaces the model with ``FixedDelayBackend`` (a benchmark double that
sleeps a fixed time, then scripts a realistic search -> explore -> add -> finish
trajectory over the real MetaQA index) and measures, for n = 1 and n = 3 agents:
wall time, the share of wall time spent outside the backend (ARK's own work: tool
calls, prompt and trajectory bookkeeping), and n = 3 / n = 1. Targets: overhead
<= 2 %, n = 3 within 1.2x of n = 1.

Part 2 (``--local``, needs ``pip install 'ark-retriever[local]'``) runs the real
local model on the demo question with 1 and 3 agents, for the plain backend, the one
that keeps a KV cache per conversation (``make_chat_model(local_states=True)``) and
the one that decodes the agents' calls in one batch (``make_chat_model(parallel=True)``),
and reports wall time, the n = 3 / n = 1 ratio (target <= 1.5x) and the per-phase
numbers: prompt tokens sent, evaluated, and shared between sequences, tokens
generated, decode batches, and seconds decoding and sampling.

Part 3 (``--decode-cost``) measures what bounds part 2: the time of one
``llama_decode`` carrying the next token of k sequences (k = 1..4), each after the
same shared prompt, on the batched backend's own context. If k tokens cost k times
one, decoding three agents together saves nothing over decoding them in turn, and
n = 3 / n = 1 is bounded below by the share of generated tokens in one agent's time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ark.index import Index, build_index
from ark.llm import Completion, Message, ToolCall, Usage
from ark.retrieval import Retriever

DEFAULT_KB = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "metaqa" / "kb.txt"


class FixedDelayBackend:
    """Benchmark double: answers after ``delay`` seconds with a scripted trajectory."""

    name = "fixed-delay-benchmark-double"

    def __init__(self, index: Index, delay: float, steps: int) -> None:
        self.delay = delay
        self.steps = steps
        self.index = index
        self.backend_s = 0.0
        names = index.graph.names.to_pylist()
        self.person = names.index("Tom Hanks")
        # One film per exploring step: each call differs, so the session runs every one
        # (an identical call would be answered from the session without the tool).
        films = index.graph.neighborhood(self.person).neighbors.tolist()
        self.films = films[: max(1, steps)]

    async def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]],
        *,
        temperature: float = 0.7,
        max_tokens: int | None = None,
        seed: int | None = None,
    ) -> Completion:
        t0 = time.perf_counter()
        await asyncio.sleep(self.delay)
        turn = sum(1 for m in messages if m.role == "assistant")
        if turn == 0:
            name, args = "search_in_graph", {"query": "Tom Hanks", "k": 5}
        elif turn < self.steps - 2:
            film = self.films[(turn - 1) % len(self.films)]
            name, args = "search_in_neighborhood", {"node_index": film, "query": "drama"}
        elif turn == self.steps - 2:
            name, args = "add_to_answer", {"node_indices": [self.person]}
        else:
            name, args = "finish", {}
        call = ToolCall(f"c{turn}", name, args, json.dumps(args))
        self.backend_s += time.perf_counter() - t0
        return Completion(
            Message(role="assistant", tool_calls=(call,)), Usage(1000, 20), self.name, self.delay
        )


def overhead(index: Index, delay: float, steps: int, repeats: int) -> list[dict[str, float]]:
    rows = []
    walls: dict[int, float] = {}
    # One untimed run first: the tools' first call compiles (numba) for seconds, which
    # would otherwise land on the first measured row.
    Retriever(index, FixedDelayBackend(index, 0.0, steps), max_steps=steps + 2).retrieve(
        "which films did Tom Hanks act in"
    )
    for n in (1, 3):
        samples = []
        shares = []
        for _ in range(repeats):
            backend = FixedDelayBackend(index, delay, steps)
            retriever = Retriever(index, backend, n_agents=n, max_steps=steps + 2)
            t0 = time.perf_counter()
            result = retriever.retrieve("which films did Tom Hanks act in")
            wall = time.perf_counter() - t0
            assert all(t.stop_reason == "finish" for t in result.trajectories)
            assert all(c.ok for t in result.trajectories for s in t.steps for c in s.tool_calls)
            samples.append(wall)
            # Backend time per agent overlaps across agents: the critical path is one
            # agent's backend time.
            shares.append(1 - (backend.backend_s / n) / wall)
        walls[n] = statistics.median(samples)
        rows.append({"agents": n, "wall_s": walls[n], "outside_backend": statistics.median(shares)})
    rows.append({"agents": 0, "ratio_3_to_1": walls[3] / walls[1]})
    return rows


DEMO_QUESTION = "Which genres do the films directed by Robert Zemeckis belong to?"


def _make_local(
    backend: str, threads: int | None, model: str | None = None, batch_sequences: int | None = None
) -> Any:
    """A fresh local model of one backend: ``plain`` (one sequence, llama-cpp-python's
    prefix cache), ``states`` (plus a KV snapshot per conversation) or ``batched``
    (parallel sequences decoded together, ``make_chat_model(parallel=True)``)."""
    from ark.llm import make_chat_model

    kw: dict[str, Any] = {"n_threads": threads} if threads else {}
    if backend == "batched":
        return make_chat_model(model, parallel=True, batch_sequences=batch_sequences, **kw)
    # The plain backend is the states backend with no snapshots: identical decoding,
    # and the same counters.
    return make_chat_model(
        model, local_states=True, max_states=8 if backend == "states" else 0, **kw
    )


def _counters(llm: Any) -> dict[str, float]:
    """The backend's cumulative counters under one set of names (per-phase numbers)."""
    st = llm.stats
    if hasattr(st, "prefilled_tokens"):  # batched
        return {
            "prompt": st.prompt_tokens,
            "evaluated": st.prefilled_tokens,
            "copied": st.copied_tokens,
            "generated": st.generated_tokens,
            "batches": st.batches,
            "decode_s": st.decode_s,
            "sample_s": st.sample_s,
            "model_s": st.decode_s + st.sample_s,
        }
    return {
        "prompt": st.prompt_tokens,
        "evaluated": st.evaluated_tokens,
        "generated": st.generated_tokens,
        "model_s": st.model_s,
    }


def local_speed(
    index: Index,
    max_steps: int,
    agents: Sequence[int],
    backend: str,
    seed: int = 0,
    threads: int | None = None,
    aids: bool = False,
    model: str | None = None,
    batch_sequences: int | None = None,
) -> list[dict[str, Any]]:
    """The real local model on the demo question: wall time for each agent count, and
    where the model's time went — prompt tokens evaluated (not found in the KV cache,
    a conversation's snapshot or, batched, another sequence's cells), tokens shared
    between sequences, tokens generated, decode batches and seconds.

    Each agent count gets a fresh model, warmed on the exact system prompt of the
    measured runs (it names max_steps), so no row pays the one-off evaluation of the
    shared prefix and none reuses the histories of an earlier row (agent 1 has the
    same seed in every row and would replay its cached trajectory)."""
    from ark.strategies import Agent, AgentConfig, AgentOptions, GuidedAgent
    from ark.tools import ToolConfig

    options = AgentOptions(example=aids)
    tools = ToolConfig(multi_neighborhood=aids)

    def factory(ctx):  # type: ignore[no-untyped-def]
        return (GuidedAgent if aids else Agent).from_context(ctx, options=options)

    rows = []
    for n in agents:
        llm = _make_local(backend, threads, model, batch_sequences)
        warm = Agent(index, llm, AgentConfig(max_steps=max_steps, tools=tools), options=options)
        asyncio.run(
            llm.complete(
                [Message(role="system", content=warm.system), Message(role="user", content="Hi")],
                warm.specs,
                max_tokens=8,
            )
        )
        before = _counters(llm)
        retriever = Retriever(
            index,
            llm,
            strategy=factory,
            n_agents=n,
            max_steps=max_steps,
            seed=seed,
            tools=tools,
            fusion="late" if aids else "vote",
        )
        result = retriever.retrieve(DEMO_QUESTION)
        after = _counters(llm)
        steps = [s for t in result.trajectories for s in t.steps]
        rows.append(
            {
                "agents": n,
                "backend": backend,
                "wall_s": result.wall_s,
                "steps": len(steps),
                **{k: after[k] - before[k] for k in after},
                "top": [r.name for r in result.ranking[:3]],
            }
        )
        if hasattr(llm, "close"):
            llm.close()
    return rows


def decode_cost(
    threads: int | None,
    model: str | None = None,
    ks: Sequence[int] = (1, 2, 3, 4),
    prompt_tokens: int = 1500,
    repeats: int = 24,
) -> list[dict[str, float]]:
    """Median milliseconds of one ``llama_decode`` carrying one token for each of k
    sequences that share a ``prompt_tokens`` prefix (the agents' system prompt and
    question), on the batched backend's context."""
    import llama_cpp

    llm = _make_local("batched", threads, model)
    try:
        ctx, mem, batch = llm._ctx.ctx, llm._mem, llm._batch  # the backend's own context
        text = (DEMO_QUESTION + " ") * (prompt_tokens // 10 + 1)
        tokens = llm._llm.tokenize(text.encode())[:prompt_tokens]

        def decode(entries: list[tuple[int, int, int, bool]]) -> float:
            batch.n_tokens = 0
            for token, pos, seq, logits in entries:
                i = batch.n_tokens
                batch.token[i], batch.pos[i] = token, pos
                batch.n_seq_id[i], batch.seq_id[i][0] = 1, seq
                batch.logits[i] = logits
                batch.n_tokens += 1
            started = time.perf_counter()
            if llama_cpp.llama_decode(ctx, batch) != 0:
                raise RuntimeError("llama_decode failed")
            return time.perf_counter() - started

        for start in range(0, len(tokens), llm.n_batch):
            chunk = tokens[start : start + llm.n_batch]
            decode([(t, start + j, 0, False) for j, t in enumerate(chunk)])
        for seq in range(1, max(ks)):
            llama_cpp.llama_memory_seq_cp(mem, 0, seq, -1, -1)
        rows = []
        p = len(tokens)
        for k in ks:
            times = [
                decode([(tokens[(r + s) % p], p + r, s, True) for s in range(k)])
                for r in range(repeats)
            ]
            for seq in range(k):
                llama_cpp.llama_memory_seq_rm(mem, seq, p, -1)
            ms = 1000 * statistics.median(times[2:])  # the first two warm up
            rows.append({"k": k, "ms": ms, "ms_per_token": ms / k})
        return rows
    finally:
        llm.close()


def print_local(rows: list[dict[str, Any]], base: float) -> None:
    """One backend's rows as a Markdown table: n/1 against its own first row, and
    against ``base``, the first backend's first row (the batched backend also makes
    one agent faster, so its own n/1 understates what it saves)."""

    def cell(r: dict[str, Any], key: str, fmt: str) -> str:
        return format(r[key], fmt) if key in r else "–"

    for r in rows:
        print(
            f"| {r['backend']} | {r['agents']} | {r['wall_s']:.1f} | "
            f"{r['wall_s'] / rows[0]['wall_s']:.2f}x | {r['wall_s'] / base:.2f}x | "
            f"{r['steps']} | {r['prompt']} | "
            f"{r['evaluated']} | {cell(r, 'copied', 'd')} | {r['generated']} | "
            f"{cell(r, 'batches', 'd')} | {cell(r, 'decode_s', '.1f')} | "
            f"{cell(r, 'sample_s', '.1f')} | {r['model_s']:.1f} | {', '.join(r['top'])} |",
            flush=True,
        )


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--kb", type=Path, default=Path(os.environ.get("ARK_METAQA_KB", DEFAULT_KB)))
    p.add_argument("--delay", type=float, default=0.2, help="backend delay per call (s)")
    p.add_argument("--steps", type=int, default=8, help="steps per scripted trajectory")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--local", action="store_true", help="also time the real local model")
    p.add_argument("--local-steps", type=int, default=8)
    p.add_argument("--threads", type=int, default=None, help="llama.cpp threads")
    p.add_argument("--model", default=None, help="local model: 1.5b (default), 0.5b or a .gguf")
    p.add_argument(
        "--batch-sequences",
        type=int,
        default=None,
        help="batched backend: most generating sequences per llama_decode (default: all)",
    )
    p.add_argument("--local-agents", type=int, nargs="+", default=[1, 3])
    p.add_argument(
        "--aids", action="store_true", help="agents with example, hints and the hop over a set"
    )
    p.add_argument(
        "--local-backends",
        nargs="+",
        default=["plain", "batched"],
        choices=["plain", "states", "batched"],
        help="local backends to time (states: one KV cache per conversation; batched: "
        "parallel sequences decoded together)",
    )
    p.add_argument(
        "--decode-cost",
        action="store_true",
        help="only time one llama_decode carrying k = 1..4 sequences' tokens (local model)",
    )
    args = p.parse_args(argv)
    if args.decode_cost:
        rows = decode_cost(args.threads, args.model)
        print(
            "\nOne llama_decode with one token of each of k sequences "
            f"({args.threads or 'all'} threads)\n"
        )
        print("| k | ms per decode | ms per token | vs k = 1 |")
        print("|---:|---:|---:|---:|")
        for r in rows:
            print(
                f"| {r['k']} | {r['ms']:.1f} | {r['ms_per_token']:.1f} "
                f"| {r['ms'] / rows[0]['ms']:.2f}x |"
            )
        return
    if not args.kb.exists():
        sys.exit(f"MetaQA kb not found at {args.kb}; pass --kb")
    with tempfile.TemporaryDirectory() as tmp:
        index = build_index(args.kb, Path(tmp) / "idx")
        rows = overhead(index, args.delay, args.steps, args.repeats)
        print(
            f"\nOrchestration overhead (backend double, {args.delay}s per call, "
            f"{args.steps} steps, median of {args.repeats})\n"
        )
        print("| agents | wall (s) | share of wall outside backend | target |")
        print("|---:|---:|---:|---|")
        for r in rows[:2]:
            print(
                f"| {r['agents']:.0f} | {r['wall_s']:.3f} | {100 * r['outside_backend']:.2f} % "
                f"| <= 2 % |"
            )
        print(f"\nn = 3 / n = 1 wall time: {rows[2]['ratio_3_to_1']:.3f}x (target <= 1.2x)")
        if args.local:
            print(f"\nLocal model on the demo question ({args.local_steps} steps at most)\n")
            print(
                "| backend | agents | wall (s) | n/1 | vs first n/1 | steps | prompt tokens | "
                "evaluated | shared (seq_cp) | generated | batches | decode s | sample s | "
                "model s | top 3 |"
            )
            print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
            base = None
            for backend in args.local_backends:
                rows = local_speed(
                    index,
                    args.local_steps,
                    args.local_agents,
                    backend,
                    threads=args.threads,
                    aids=args.aids,
                    model=args.model,
                    batch_sequences=args.batch_sequences,
                )
                base = base or rows[0]["wall_s"]
                print_local(rows, base)


if __name__ == "__main__":
    main()
