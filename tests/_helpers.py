"""Small helpers shared by tests (importable thanks to pytest's pythonpath)."""

from __future__ import annotations

import gzip
import shutil
from importlib.resources import files
from pathlib import Path

from ark.graph import DescribedSchema, Graph
from ark.index import BM25Params, Index, TokenizerConfig, build_index
from ark.probes import write_index
from ark.session import ToolSession
from ark.strategies import ChainHints
from ark.tools import ToolConfig

REPO = Path(__file__).resolve().parents[1]


def metaqa_dir() -> Path:
    """The tests' MetaQA questions: the first 500 dev questions of each hop, in the
    layout ``ark eval --data-dir`` reads (``tests/data/metaqa/README.md``)."""
    return Path(__file__).resolve().parent / "data" / "metaqa"


def write_metaqa_kb(target: Path) -> Path:
    """The MetaQA graph bundled with the package, written to ``target`` as a plain
    ``head|relation|tail`` file (the same file as MetaQA's ``kb.txt``)."""
    packed = files("ark") / "data" / "metaqa_kb.txt.gz"
    with packed.open("rb") as raw, gzip.open(raw) as src, target.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    return target


def node(index: Index, name: str) -> int:
    """The index of the node called ``name``."""
    return index.graph.names.to_pylist().index(name)


def index_of_graph(graph: Graph, out: Path, source: str = "hand-made") -> Index:
    """A hand-made ``graph`` written as an index at ``out`` (names as its described
    schema, default tokenizer and BM25 parameters)."""
    return write_index(
        graph,
        DescribedSchema.from_names(graph.schema, graph),
        out,
        source_info={"path": source, "format": "test"},
        tokenizer=TokenizerConfig(),
        params=BM25Params(),
    )


def tsv_index(root: Path, lines: str) -> Index:
    """An index built from ``lines`` (``head<TAB>relation<TAB>tail`` rows) in ``root``."""
    (root / "kb.tsv").write_text(lines + "\n", encoding="utf-8")
    return build_index(root / "kb.tsv", root / "idx")


def hinted_session(
    index: Index,
    question: str,
    *,
    multi: bool | None = None,
    config: ToolConfig | None = None,
    refuse_unseen: bool = False,
) -> ToolSession:
    """A session with ``ark-guided``'s hints for ``question``, as the tests build it:
    ``multi`` sets the neighborhood tool's list-taking mode (else ``config``, else the
    default); ``refuse_unseen`` as the agent runs it."""
    if multi is not None:
        if config is not None:
            raise ValueError("give multi or config, not both")
        config = ToolConfig(multi_neighborhood=multi)
    return ToolSession(
        index,
        config=config,
        question=question,
        observers=[ChainHints(index, question)],
        refuse_unseen=refuse_unseen,
    )


def benchmark(name: str):  # type: ignore[no-untyped-def]
    """The benchmark script ``benchmarks/NAME.py`` loaded as a module (the scripts are
    run by path, not installed)."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
