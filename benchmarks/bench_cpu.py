"""What the installed llama.cpp build gives the local model on this CPU, per model file:
prompt tokens read and tokens written a second, and what a file's quantisation costs
in quality against the first file.

    python benchmarks/bench_cpu.py [--models 1.5b FILE.gguf ...] [--threads 2]
        [--flash-attn] [--json OUT.json]
    python benchmarks/bench_cpu.py --requantize q4_0 iq4_nl --to DIR [--from 1.5b]

Why: prompt evaluation is most of an offline answer's seconds, and it runs 4-6 times
slower on a CPU with AVX2 only than on one with AVX-512 (issue 63); which build flags
and which quantisation read fastest there is measured, not assumed. Run it once in
each build's virtual environment (``build_report`` names the build above the table);
``--requantize`` writes the shipped file in other llama.cpp types
(``llama_model_quantize`` with ``allow_requantize``: from the Q4_K_M weights, not from
the original ones, so the quality columns say what that costs).

Per file, like ``llama-bench``'s pp and tg and ``llama-perplexity``'s KL mode:

- **read 2000**: prompt tokens a second over a 2,000-token prompt from an empty cache
  (the batch size ARK uses); **read 400 after 2000**: 400 more tokens after it, as an
  agent's step reads its new observation; **write**: 32 one-token decodes after that.
  Best of two for the last two.
- **perplexity** of a fixed text (``--text``, default this repository's
  ``docs/getting-started.md``, its first 512 tokens), **same top-1**: the share of its
  positions where the file's most likely next token is the first file's, and **KL**:
  the mean KL divergence of the first file's next-token distribution to this one's.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
#: llama.cpp file types by the names ``--requantize`` takes.
TYPES = {
    "q4_0": 2,
    "q4_1": 3,
    "q8_0": 7,
    "q4_k_s": 14,
    "q4_k_m": 15,
    "q5_k_m": 17,
    "iq4_nl": 25,
    "iq4_xs": 30,
}
N_CTX = 4096


def model_path(spec: str) -> Path:
    """A packaged model's file by short name (``1.5b``), else the path given."""
    from ark.llm.local import LOCAL_MODELS, local_model_path

    if spec in LOCAL_MODELS:
        return local_model_path(spec)
    path = Path(spec)
    if not path.is_file():
        raise SystemExit(f"bench_cpu: {spec} is neither a packaged model nor a file")
    return path


def text_tokens(llm: Any, path: Path, n: int) -> list[int]:
    tokens = llm.tokenize(path.read_text(encoding="utf-8").encode())
    return tokens[:n]


def load(path: Path, threads: int, **options: Any) -> Any:
    """``path`` in llama.cpp as ARK's local model loads it (context, threads)."""
    from llama_cpp import Llama

    return Llama(
        str(path),
        n_ctx=N_CTX,
        n_threads=threads,
        n_threads_batch=threads,
        verbose=False,
        **options,
    )


def rates(path: Path, threads: int, flash_attn: bool, text: Path) -> dict[str, float]:
    """Prompt read and decode rates of ``path`` (see the module docstring)."""
    from bench_latency import measure_rates

    llm = load(path, threads, flash_attn=flash_attn)
    prefix, read, write = 2000, 400, 32
    tokens = text_tokens(llm, text, prefix + read + write)
    while len(tokens) < prefix + read + write:  # a short text is read again
        tokens += tokens[: prefix + read + write - len(tokens)]
    out = measure_rates(llm, tokens, prefix, read, write)
    del llm
    return {"read_2000": out["read_prefix"], "read_400": out["read"], "write": out["write"]}


def log_probs(path: Path, threads: int, text: Path, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The next-token log-probabilities of ``path`` at each of the text's first ``n``
    tokens but the last (float32, positions by vocabulary), and the tokens that came."""
    llm = load(path, threads, logits_all=True)
    tokens = text_tokens(llm, text, n)
    llm.reset()
    llm.eval(tokens)
    logits = np.array(llm.scores[: len(tokens) - 1], dtype=np.float32)
    del llm
    logits -= logits.max(axis=1, keepdims=True)
    logits -= np.log(np.exp(logits).sum(axis=1, keepdims=True))
    return logits, np.array(tokens[1:])


def quality(lp: np.ndarray, targets: np.ndarray, ref: np.ndarray | None) -> dict[str, float | None]:
    ppl = float(np.exp(-lp[np.arange(len(targets)), targets].mean()))
    if ref is None:
        return {"perplexity": ppl, "same_top1": None, "kl": None}
    same = float((lp.argmax(axis=1) == ref.argmax(axis=1)).mean())
    kl = float((np.exp(ref) * (ref - lp)).sum(axis=1).mean())
    return {"perplexity": ppl, "same_top1": same, "kl": kl}


def file_type(path: Path) -> str:
    """The file's llama.cpp type as its metadata names it."""
    from gguf import GGUFReader

    reader = GGUFReader(str(path))
    field = reader.fields.get("general.file_type")
    code = int(field.parts[field.data[0]][0]) if field is not None else -1
    names = {v: k for k, v in TYPES.items()}
    return names.get(code, f"type {code}")


def requantize(source: Path, kinds: list[str], out_dir: Path, threads: int) -> None:
    import llama_cpp

    out_dir.mkdir(parents=True, exist_ok=True)
    for kind in kinds:
        if kind not in TYPES:
            raise SystemExit(f"bench_cpu: unknown type {kind!r}; choose from {sorted(TYPES)}")
        target = out_dir / f"{source.stem.rsplit('-', 1)[0]}-{kind}.gguf"
        params = llama_cpp.llama_model_quantize_default_params()
        params.ftype = TYPES[kind]
        params.allow_requantize = True
        params.nthread = threads
        started = time.perf_counter()
        rc = llama_cpp.llama_model_quantize(
            str(source).encode(), str(target).encode(), ctypes.byref(params)
        )
        if rc != 0:
            raise SystemExit(f"bench_cpu: llama.cpp could not write {target} (code {rc})")
        print(f"{target}: {time.perf_counter() - started:.0f} s", flush=True)


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| build | file | type | GB | read 2000 (tok/s) | read 400 after 2000 | write (tok/s) "
        "| perplexity | same top-1 | KL |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        same = "–" if r["same_top1"] is None else f"{100 * r['same_top1']:.1f} %"
        kl = "–" if r["kl"] is None else f"{r['kl']:.4f}"
        lines.append(
            f"| {r['build']} | {r['file']} | {r['type']} | {r['gb']:.2f} | {r['read_2000']:.1f} "
            f"| {r['read_400']:.1f} | {r['write']:.1f} | {r['perplexity']:.3f} | {same} | {kl} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--models", nargs="+", default=["1.5b"], help="packaged names or GGUF files")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--flash-attn", action="store_true", help="llama.cpp's flash attention")
    p.add_argument("--text", type=Path, default=ROOT / "docs" / "getting-started.md")
    p.add_argument("--quality-tokens", type=int, default=512)
    p.add_argument("--requantize", nargs="+", metavar="TYPE", help=f"one of {sorted(TYPES)}")
    p.add_argument("--from", dest="source", default="1.5b", help="the file to requantize")
    p.add_argument("--to", type=Path, default=Path(".bench/models"))
    p.add_argument(
        "--build", default="installed", help="the build's name in the table (e.g. openblas)"
    )
    p.add_argument("--json", type=Path, default=None, help="also write the rows here")
    args = p.parse_args(argv)
    if args.requantize:
        requantize(model_path(args.source), args.requantize, args.to, args.threads)
        return
    from ark.llm.local import build_report

    info, missing = build_report()
    print(f"llama.cpp {info}; leaves out of this CPU: {', '.join(missing) or 'nothing'}")
    print(f"threads {args.threads}, flash attention {'on' if args.flash_attn else 'off'}\n")
    rows, ref = [], None
    for spec in args.models:
        path = model_path(spec)
        lp, targets = log_probs(path, args.threads, args.text, args.quality_tokens)
        row = {
            "build": args.build + (", flash attention" if args.flash_attn else ""),
            "file": path.name,
            "type": file_type(path),
            "gb": path.stat().st_size / 1e9,
            **rates(path, args.threads, args.flash_attn, args.text),
            **quality(lp, targets, ref),
        }
        if ref is None:
            ref = lp
        rows.append(row)
        print(table(rows[-1:]).splitlines()[-1], flush=True)
    print()
    print(table(rows))
    if args.json:
        args.json.write_text(
            json.dumps({"build": info, "flash_attn": args.flash_attn, "rows": rows}, indent=2)
        )


if __name__ == "__main__":
    main()
