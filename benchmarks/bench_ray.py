"""Throughput of `ark eval` in one process vs spread over Ray workers, when the model
is a server with a fixed latency per call: what the driver, the tools and Ray cost
next to the model, and how much memory a worker takes.

    python benchmarks/bench_ray.py --queries 60 --latency 0.3 --concurrency 8 --workers 2

The model is ``FixedLatencyServer`` (a benchmark double): an OpenAI-compatible HTTP
server on 127.0.0.1 that answers every call after ``--latency`` seconds with the
calls of a short trajectory (search the question, add the first node, finish), so
the run does the real tool work and the real agent loop, retriever and run store.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def reply(request: dict[str, Any]) -> dict[str, Any]:
    messages = request["messages"]
    turn = sum(1 for m in messages if m["role"] == "assistant")
    question = next(m["content"] for m in messages if m["role"] == "user")
    if turn == 0:
        name, args = "search_in_graph", {"query": question}
    elif turn == 1:
        found = re.search(r"^\[(\d+)\]", messages[-1]["content"], re.MULTILINE)
        name, args = "add_to_answer", {"node_indices": [int(found.group(1))] if found else []}
    else:
        name, args = "finish", {}
    call = {"id": f"call_{turn}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)}}  # fmt: skip
    return {
        "id": "x", "object": "chat.completion", "created": 0, "model": "fixed-latency",
        "choices": [{"index": 0, "finish_reason": "tool_calls",
                     "message": {"role": "assistant", "content": "", "tool_calls": [call]}}],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0},
    }  # fmt: skip


class FixedLatencyServer:
    """Benchmark double: an OpenAI-compatible server whose every call takes ``latency`` s."""

    def __init__(self, latency: float) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                time.sleep(latency)
                data = json.dumps(reply(body)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        ThreadingHTTPServer.request_queue_size = 256
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", type=Path, help="MetaQA index (built into a temp dir if absent)")
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--agents", type=int, default=3)
    ap.add_argument("--latency", type=float, default=0.3, help="seconds per model call")
    ap.add_argument("--concurrency", type=int, default=8, help="queries in flight in all")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()

    import psutil
    import ray

    sys.path.insert(0, str(REPO / "tests"))
    from _helpers import metaqa_dir
    from ark.datasets import load_metaqa, sample
    from ark.eval import MethodSpec, RayMethod, RetrieverMethod, RunStore, run_queries
    from ark.index import build_index, open_index
    from ark.llm import make_chat_model
    from ark.retrieval import Retriever

    tmp = Path(tempfile.mkdtemp(prefix="bench-ray-"))
    index = open_index(args.index) if args.index else build_index(
        metaqa_dir() / "kb.txt", tmp / "idx"
    )  # fmt: skip
    queries = sample(load_metaqa(metaqa_dir(), 1, index=index), args.queries, 0)
    server = FixedLatencyServer(args.latency)
    llm = {"model": "fixed-latency", "base_url": server.base_url}
    retriever = {"n_agents": args.agents, "max_steps": 5, "seed": 0}
    config = {"method": "ark"}
    rows = []

    def record(name: str, wall: float, summary: dict[str, Any]) -> None:
        cost = summary["cost"]
        rows.append({
            "setup": name,
            "queries/hour": round(len(queries) * 3600 / wall),
            "bound (concurrency / query latency)": round(
                args.concurrency * 3600 / (3 * args.latency)
            ),
            "model s/query": round(cost["per_query"]["llm_s"], 3),
            "tool s/query": round(cost["per_query"]["tool_s"], 4),
            "failed": summary["failed"],
        })  # fmt: skip

    method = RetrieverMethod(Retriever(index, make_chat_model(**llm), **retriever))
    t0 = time.perf_counter()
    summary = asyncio.run(
        run_queries(queries, method, RunStore(tmp / "local"), config, concurrency=args.concurrency)
    )
    record("one process", time.perf_counter() - t0, summary)

    t0 = time.perf_counter()
    ray.init(num_cpus=args.workers, include_dashboard=False, logging_level="WARNING")
    start = time.perf_counter() - t0
    t0 = time.perf_counter()
    ray_method = RayMethod(
        MethodSpec("ark", str(index.path), llm=llm, retriever=retriever),
        workers=args.workers,
        per_worker=max(1, args.concurrency // args.workers),
    )
    workers_up = time.perf_counter() - t0
    t0 = time.perf_counter()
    summary = asyncio.run(
        run_queries(
            queries, ray_method, RunStore(tmp / "ray"), config, concurrency=ray_method.slots
        )
    )
    record(f"Ray, {args.workers} workers", time.perf_counter() - t0, summary)
    rss = [psutil.Process(w["pid"]).memory_info() for w in ray_method.worker_info]
    ray_method.close()
    ray.shutdown()

    keys = list(rows[0])
    print(f"{len(queries)} MetaQA 1-hop queries, {args.agents} agents, {args.latency} s per "
          f"model call, {args.concurrency} queries in flight\n")  # fmt: skip
    print("| " + " | ".join(keys) + " |\n|" + "---|" * len(keys))
    for r in rows:
        print("| " + " | ".join(str(r[k]) for k in keys) + " |")
    print(f"\nRay start {start:.1f} s, {args.workers} workers ready in {workers_up:.1f} s; "
          f"worker memory after the run: RSS {', '.join(f'{m.rss / 1e6:.0f}' for m in rss)} MB "
          f"(of which shared {', '.join(f'{m.shared / 1e6:.0f}' for m in rss)} MB)")  # fmt: skip


if __name__ == "__main__":
    main()
