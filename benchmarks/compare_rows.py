"""Rows of a bench_documents.py run compared on the questions they all answered (a row
stopped early is compared on what it finished).

    python benchmarks/compare_rows.py .bench/documents/LABEL ROW [ROW ...]
"""

import json
import sys
from pathlib import Path

KEYS = ("recall@2", "recall@5", "hit@1", "em", "f1")


def main() -> None:
    run, names = Path(sys.argv[1]), sys.argv[2:]
    rows = {}
    for row in names:
        lines = (run / row / "results.jsonl").read_text().splitlines()
        rows[row] = {json.loads(x)["query_id"]: json.loads(x) for x in lines if x.strip()}
    common = set.intersection(*(set(r) for r in rows.values()))
    print(f"{len(common)} questions in common\n")
    print("| row | " + " | ".join(KEYS) + " | s/question |")
    print("|---|" + "---:|" * (len(KEYS) + 1))
    for row, res in rows.items():
        ms = [res[q]["metrics"] for q in common]
        cells = [f"{100 * sum(m.get(k, 0) for m in ms) / len(ms):.1f}" for k in KEYS]
        wall = sum(res[q].get("wall_s", 0) for q in common) / len(common)
        print(f"| {row} | " + " | ".join(cells) + f" | {wall:.1f} |")


if __name__ == "__main__":
    main()
