"""Run BM25 over MetaQA queries slowly (a test double delays each query), so that a
test can kill this process mid-run and resume it. Usage: slow_run.py INDEX OUT DELAY RESUME"""

import asyncio
import sys

from _helpers import metaqa_dir
from ark.datasets import load_metaqa, sample
from ark.eval import BM25Method, MethodOutput, RunStore, run_queries
from ark.index import open_index


class DelayedMethod:
    """Test double: the real BM25 baseline, slowed down."""

    name = "bm25"

    def __init__(self, inner: BM25Method, delay: float) -> None:
        self.inner = inner
        self.delay = delay

    async def __call__(self, question_id: str, question: str) -> MethodOutput:
        await asyncio.sleep(self.delay)
        return await self.inner(question_id, question)


def queries(index):
    return sample(load_metaqa(metaqa_dir(), 2, index=index), 60, 0)


def main() -> None:
    index_dir, out, delay, resume = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4] == "1"
    index = open_index(index_dir)
    method = DelayedMethod(BM25Method(index), delay)
    config = {"method": "bm25", "dataset": "metaqa:2-hop"}
    asyncio.run(
        run_queries(queries(index), method, RunStore(out), config, resume=resume, concurrency=3)
    )


if __name__ == "__main__":
    main()
