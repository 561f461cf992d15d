"""Convert STaRK's knowledge bases (as ``stark-qa`` unpacks them) to ARK's tables.

Reads ``processed/`` once — ``node_info.pkl`` (a pickle: only ever opened by this
explicit conversion, never at run time), ``edge_index.pt``, ``edge_types.pt``,
``node_types.pt`` and the type dictionaries — and writes ``nodes.parquet`` and
``edges.parquet`` (node index = STaRK's index, so gold answer ids stay valid) plus
``stark.json`` naming the candidate node types. Then ``ark index build`` builds the
index from them. Node text follows the documents STaRK's BM25 baseline indexes
(``get_doc_info``) for each graph. Reading ``.pt`` files needs torch: the
``[stark]`` extra.
"""

from __future__ import annotations

import json
import math
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

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


def convert_stark(kb_dir: str | Path, out_dir: str | Path, graph: StarkGraph) -> dict[str, Any]:
    """Write ``nodes.parquet``, ``edges.parquet`` and ``stark.json`` into ``out_dir``."""
    if graph not in CANDIDATE_TYPES:
        raise ArkError(f"unknown STaRK graph {graph!r}; use amazon, mag or prime")
    processed = _processed_dir(Path(kb_dir), graph)
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

    describe = {"amazon": _amazon, "mag": _mag, "prime": _prime}[graph]
    names, types, props = [], [], []
    for i in range(n):
        t = type_dict[int(node_types[i])]
        name, fields = describe(info[i], t)
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


def _load_pickle(path: Path) -> Any:
    if not path.exists():
        raise GraphFormatError(path, "file not found")
    with path.open("rb") as f:
        return pickle.load(f)  # STaRK ships pickles; only this explicit command reads them


def _load_tensor(path: Path) -> np.ndarray:
    try:
        import torch
    except ImportError as exc:
        raise ArkError(
            "reading STaRK's .pt files needs torch: pip install 'ark-retriever[stark]'"
        ) from exc
    if not path.exists():
        raise GraphFormatError(path, "file not found")
    return torch.load(path, map_location="cpu").numpy()


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
    describe: dict[str, Callable[[Any], Any]] = {
        "interpro": lambda v: [x.get("desc", "") for x in ([v] if isinstance(v, dict) else v)],
        "generif": lambda v: " ".join("; ".join(x.get("text", "") for x in v).split(" ")[:50_000]),
        "genomic_pos": lambda v: v[0] if isinstance(v, list) and v else v,
    }
    try:
        return describe.get(key, lambda v: v)(value)
    except (AttributeError, TypeError):
        return value
