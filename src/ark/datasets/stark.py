"""STaRK (Wu et al., 2024): its knowledge bases converted to ARK's tables, the node types
it scores, and its question files (:func:`load_stark_qa`).

Reads ``processed/`` once — ``node_info.pkl`` (a pickle: only ever opened by this
explicit conversion, never at run time, and then as plain data unless the user
passes ``--trust-pickle``), ``edge_index.pt``, ``edge_types.pt``,
``node_types.pt`` and the type dictionaries — and writes ``nodes.parquet`` and
``edges.parquet`` (node index = STaRK's index, so gold answer ids stay valid) plus
``stark.json`` naming the candidate node types. Then ``ark index build`` builds the
index from them. Node text follows the documents STaRK's BM25 baseline indexes
(``get_doc_info``) for each graph. Reading ``.pt`` files needs torch: the
``[stark]`` extra.
"""

from __future__ import annotations

import ast
import csv
import json
import math
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ark.datasets._queries import Query
from ark.errors import ArkError, GraphFormatError

StarkGraph = Literal["amazon", "mag", "prime"]

#: STaRK scores only these node types (None: every node).
CANDIDATE_TYPES: dict[str, list[str] | None] = {
    "amazon": ["product"],
    "mag": ["paper"],
    "prime": None,
}
#: MAG's type dictionaries are constants of stark-qa's MagSKB, not files.
MAG_NODE_TYPES = {0: "author", 1: "institution", 2: "field_of_study", 3: "paper"}
MAG_EDGE_TYPES = {
    0: "author___affiliated_with___institution",
    1: "paper___cites___paper",
    2: "paper___has_topic___field_of_study",
    3: "author___writes___paper",
}
MAX_ENTRIES = 25  # reviews and Q&A pairs per product, as STaRK
GENE_FIELDS = {
    "type_of_gene": "gene types",
    "alias": "other gene names",
    "other_names": "extended other gene names",
    "genomic_pos": "genomic position",
    "generif": "PubMed text",
    "interpro": "protein family and classification information",
    "summary": "protein summary text",
}


STARK_META_FILE = "stark.json"


def read_stark_meta(tables_dir: str | Path) -> dict[str, Any] | None:
    """The ``stark.json`` that conversion wrote beside the tables, if there is one."""
    path = Path(tables_dir) / STARK_META_FILE
    if not path.is_file():
        return None
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise GraphFormatError(path, f"not a readable stark.json ({exc})") from exc
    if not isinstance(meta, dict) or meta.get("graph") not in CANDIDATE_TYPES:
        raise GraphFormatError(path, "not a stark.json written by `ark convert-stark`")
    return meta


def stark_candidate_types(graph: str, index_meta: dict[str, Any] | None = None) -> list[str] | None:
    """The node types STaRK scores for ``graph`` (None: every node).

    An index built from converted tables carries their ``stark.json``; its candidate
    types win over the built-in table, so conversion and scoring cannot disagree.
    """
    if graph not in CANDIDATE_TYPES:
        raise ArkError(f"unknown STaRK graph {graph!r}; use amazon, mag or prime")
    stark = (index_meta or {}).get("stark")
    if isinstance(stark, dict) and stark.get("graph") == graph:
        return stark.get("candidate_types")
    return CANDIDATE_TYPES[graph]


def convert_stark(
    kb_dir: str | Path,
    out_dir: str | Path,
    graph: StarkGraph,
    *,
    trust_pickle: bool = False,
    warn: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Write ``nodes.parquet``, ``edges.parquet`` and ``stark.json`` into ``out_dir``.

    STaRK ships ``node_info.pkl`` and type dictionaries as pickles, and unpickling
    can run code from the file. They are read with a data-only unpickler (plain
    containers, strings, numbers, numpy arrays; anything else is refused) unless
    ``trust_pickle``; ``warn`` is told, before each pickle is read, which file it
    is and where it comes from.
    """
    if graph not in CANDIDATE_TYPES:
        raise ArkError(f"unknown STaRK graph {graph!r}; use amazon, mag or prime")
    processed = _processed_dir(Path(kb_dir), graph)

    def _load_pickle(path: Path) -> Any:
        if warn is not None:
            how = "fully (--trust-pickle)" if trust_pickle else "as plain data only"
            warn(
                f"reading the pickle {path} (from the STaRK knowledge base in {kb_dir}) "
                f"{how}; a pickle can run code, so convert only STaRK data from its "
                "official source (stark-qa / Hugging Face snap-stanford/stark)"
            )
        return load_pickle(path, trust=trust_pickle)

    info = _load_pickle(processed / "node_info.pkl")
    edge_index = _load_tensor(processed / "edge_index.pt")
    edge_types = _load_tensor(processed / "edge_types.pt")
    node_types = _load_tensor(processed / "node_types.pt")
    if graph == "mag":
        type_dict, rel_dict = MAG_NODE_TYPES, MAG_EDGE_TYPES
    else:
        type_dict = _load_pickle(processed / "node_type_dict.pkl")
        rel_dict = _load_pickle(processed / "edge_type_dict.pkl")

    n = len(node_types)
    if edge_index.ndim != 2 or edge_index.shape[0] != 2:
        raise GraphFormatError(
            processed / "edge_index.pt", f"expected shape [2, E], got {list(edge_index.shape)}"
        )
    if len(edge_types) != edge_index.shape[1]:
        raise GraphFormatError(processed / "edge_types.pt", "length differs from edge_index")
    missing = [i for i in range(n) if i not in info]
    if missing:
        raise GraphFormatError(processed / "node_info.pkl", f"no entry for node {missing[0]}")

    read_node = {"amazon": _amazon, "mag": _mag, "prime": _prime}[graph]
    names, types, props = [], [], []
    for i in range(n):
        t = type_dict[int(node_types[i])]
        name, fields = read_node(info[i], t)
        names.append(name or f"{t} {i}")
        types.append(t)
        props.append(json.dumps(fields, ensure_ascii=False, default=str))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    pq.write_table(
        pa.table(
            {"id": np.arange(n, dtype=np.int64), "name": names, "type": types, "properties": props}
        ),
        out / "nodes.parquet",
    )
    pq.write_table(
        pa.table(
            {
                "from": edge_index[0].astype(np.int64),
                "to": edge_index[1].astype(np.int64),
                "type": [rel_dict[int(r)] for r in edge_types],
            }
        ),
        out / "edges.parquet",
    )
    meta = {
        "graph": graph,
        "candidate_types": CANDIDATE_TYPES[graph],
        "nodes": n,
        "edges": int(edge_index.shape[1]),
        "source": str(processed.resolve()),
    }
    (out / STARK_META_FILE).write_text(json.dumps(meta, indent=2), encoding="utf-8")
    return meta


def _processed_dir(kb_dir: Path, graph: str) -> Path:
    candidates = [kb_dir / "processed", kb_dir]
    if graph == "amazon":
        candidates.insert(0, kb_dir / "processed" / "cache" / "brand-category-color")
    for c in candidates:
        if (c / "node_info.pkl").exists():
            return c
    raise GraphFormatError(
        kb_dir, "no node_info.pkl under processed/ (is this a STaRK knowledge base?)"
    )


#: What a data-only pickle may name: containers and numpy arrays, nothing callable
#: beyond their own reconstruction.
SAFE_PICKLE_GLOBALS = {
    *(
        ("builtins", name)
        for name in ("dict", "list", "tuple", "set", "frozenset", "str", "bytes", "int")
    ),
    ("builtins", "float"),
    ("builtins", "bool"),
    ("builtins", "complex"),
    ("collections", "OrderedDict"),
    ("numpy", "ndarray"),
    ("numpy", "dtype"),
    ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "scalar"),
    ("numpy._core.multiarray", "scalar"),
}


class _DataOnlyUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in SAFE_PICKLE_GLOBALS:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"it names {module}.{name}, which is not plain data")


def load_pickle(path: Path, *, trust: bool = False) -> Any:
    """A STaRK pickle: plain data only (the default), or anything (``trust``)."""
    if not path.exists():
        raise GraphFormatError(path, "file not found")
    with path.open("rb") as f:
        if trust:
            return pickle.load(f)  # the user vouched for the file (--trust-pickle)
        try:
            return _DataOnlyUnpickler(f).load()
        except pickle.UnpicklingError as exc:
            raise GraphFormatError(
                path,
                f"refused to unpickle: {exc}. A pickle can run code; if this file comes "
                "from STaRK's official release, rerun with --trust-pickle",
            ) from None
        except (EOFError, ValueError, TypeError, AttributeError) as exc:
            raise GraphFormatError(path, f"not a readable pickle ({exc})") from None


def _load_tensor(path: Path) -> np.ndarray:
    try:
        import torch
    except ImportError as exc:
        raise ArkError(
            "reading STaRK's .pt files needs torch: pip install 'ark-retriever[stark]'"
        ) from exc
    if not path.exists():
        raise GraphFormatError(path, "file not found")
    try:  # weights_only: tensors and plain containers, never code from the file
        return torch.load(path, map_location="cpu", weights_only=True).numpy()
    except (RuntimeError, pickle.UnpicklingError, EOFError, AttributeError) as exc:
        raise GraphFormatError(path, f"not a readable tensor file ({exc})") from None


def _present(value: Any) -> bool:
    if value is None:
        return False
    if isinstance(value, float) and math.isnan(value):
        return False
    if isinstance(value, int | float) and value == -1:  # MAG's missing value
        return False
    return str(value).strip() not in ("", "nan", "-1", "[]")


# -- per-graph documents ----------------------------------------------------------------


def _amazon(node: dict[str, Any], node_type: str) -> tuple[str, dict[str, Any]]:
    if node_type != "product":
        return str(node.get(f"{node_type}_name", "")), {}
    fields: dict[str, Any] = {}
    if _present(node.get("brand")):
        fields["brand"] = node["brand"]
    try:
        dims = node["details"]["dictionary"]["product_dimensions"]
        dimensions, weight = dims.split(" ; ")
        fields["dimensions"], fields["weight"] = dimensions, weight
    except (KeyError, TypeError, ValueError, AttributeError):
        pass
    description = " ".join(node.get("description") or []).strip()
    if description:
        fields["description"] = description
    features = [f for f in node.get("feature") or [] if f and "asin" not in f.lower()]
    if features:
        fields["features"] = features
    reviews = node.get("review") or []
    if reviews:
        votes = [_votes(r.get("vote")) for r in reviews]
        order = np.argsort(-np.asarray(votes), kind="stable")[:MAX_ENTRIES]
        fields["reviews"] = [
            f"{reviews[i].get('summary', '')}: {reviews[i].get('reviewText', '')}" for i in order
        ]
    qa = node.get("qa") or []
    if qa:
        fields["Q&A"] = [f"{q.get('question', '')} {q.get('answer', '')}" for q in qa[:MAX_ENTRIES]]
    return str(node.get("title", "")), fields


def _votes(vote: Any) -> int:
    if not _present(vote):
        return 0
    try:
        return int(str(vote).replace(",", ""))
    except ValueError:
        return 0


def _mag(node: dict[str, Any], node_type: str) -> tuple[str, dict[str, Any]]:
    if node_type == "paper":
        fields: dict[str, Any] = {}
        if _present(node.get("abstract")):
            fields["abstract"] = str(node["abstract"]).replace("\r", "").strip()
        if _present(node.get("Date")):
            fields["publication date"] = node["Date"]
        for key, label in (
            ("OriginalVenue", "venue"),
            ("JournalDisplayName", "journal"),
            ("ConferenceSeriesDisplayName", "conference"),
            ("ConferenceInstancesDisplayName", "conference"),
        ):
            if _present(node.get(key)):
                fields[label] = node[key]
                break
        return str(node.get("title", "")), fields
    fields = {}
    for key, label in (("PaperCount", "paper count"), ("CitationCount", "citation count")):
        if _present(node.get(key)):
            fields[label] = node[key]
    return str(node.get("DisplayName", node.get("name", ""))), fields


def _prime(node: dict[str, Any], node_type: str) -> tuple[str, dict[str, Any]]:
    fields: dict[str, Any] = {}
    if _present(node.get("source")):
        fields["source"] = node["source"]
    for key, value in (node.get("details") or {}).items():
        if not _present(value) or key.startswith("_") or "_id" in key:
            continue
        if node_type == "gene/protein" and key in GENE_FIELDS:
            value = _gene_value(key, value)
            key = f"{key} ({GENE_FIELDS[key]})"
        fields[key] = value
    return str(node.get("name", "")), fields


def _gene_value(key: str, value: Any) -> Any:
    readable: dict[str, Callable[[Any], Any]] = {
        "interpro": lambda v: [x.get("desc", "") for x in ([v] if isinstance(v, dict) else v)],
        "generif": lambda v: " ".join("; ".join(x.get("text", "") for x in v).split(" ")[:50_000]),
        "genomic_pos": lambda v: v[0] if isinstance(v, list) and v else v,
    }
    try:
        return readable.get(key, lambda v: v)(value)
    except (AttributeError, TypeError):
        return value


def load_stark_qa(qa_dir: str | Path, split: str = "test", *, human: bool = False) -> list[Query]:
    """STaRK's ``stark_qa.csv`` (``id, query, answer_ids``) restricted to a split file.

    ``split`` is one of ``train``, ``val``, ``test``, ``test-0.1`` (query ids, one per
    line, in ``split/``); ``human=True`` reads the human-generated set instead.
    """
    root = Path(qa_dir)
    csv_path = root / ("stark_qa_human_generated_eval.csv" if human else "stark_qa.csv")
    if not csv_path.exists():
        nested = root / "stark_qa" / csv_path.name
        csv_path = nested if nested.exists() else csv_path
    if not csv_path.exists():
        raise ArkError(f"STaRK QA file {csv_path} not found")
    wanted: set[str] | None = None
    if not human:
        split_file = root / "split" / f"{split}.index"
        if not split_file.exists():
            raise ArkError(f"STaRK split file {split_file} not found")
        wanted = {s.strip() for s in split_file.read_text().split() if s.strip()}
    queries = []
    with csv_path.open(encoding="utf-8", newline="") as f:
        for lineno, row in enumerate(csv.DictReader(f), start=2):
            try:
                qid = str(int(row["id"]))
                answers = ast.literal_eval(row["answer_ids"])
                text = row["query"]
            except (KeyError, ValueError, SyntaxError) as exc:
                raise ArkError(f"{csv_path}:{lineno}: bad row ({exc})") from exc
            if wanted is not None and qid not in wanted:
                continue
            queries.append(Query(qid, text, frozenset(int(a) for a in answers)))
    return queries
