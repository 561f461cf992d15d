"""The prompts and tool specs of small-schema graphs, as the code wrote them before the
schema summary was bounded (``data/small_schema_prompts.json``): the test checks that
graphs with few relations still get them byte for byte.

Regenerate only on purpose (a deliberate change of the small-schema prompt):
``python tests/strategies/_prompt_golden.py`` from the repository root.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from ark.index import Index, build_index
from ark.probes import short_system_prompt, worked_example
from ark.strategies import system_prompt
from ark.tools import ToolConfig, tool_specs

GOLDEN = Path(__file__).resolve().parent / "data" / "small_schema_prompts.json"

CONFIGS = {
    "default": ToolConfig(),
    "multi": ToolConfig(multi_neighborhood=True),
    "no_filters": ToolConfig(neighbor_filters=False),
    "no_query": ToolConfig(neighbor_query=False),
    "no_neighbors": ToolConfig(neighbors=False),
}
#: Kept as text (readable diffs); every other entry as its sha256.
AS_TEXT = ("schema_text", "full/default", "short", "specs/default")

#: A WC2014-shaped graph: one node type, ``_inverse`` copies, ten relations.
WC_TRIPLES = """\
Ann_A\tplays_in_club\tClub_X
Club_X\tplays_in_club_inverse\tAnn_A
Ann_A\tplays_for_country\tLand_L
Land_L\tplays_for_country_inverse\tAnn_A
Ann_A\tplays_position\tForward
Forward\tplays_position_inverse\tAnn_A
Ann_A\twears_number\t9
Ann_A\tis_aged\t27
Club_X\tis_in_country\tLand_L
Land_L\tis_in_country_inverse\tClub_X
Bob_B\tplays_in_club\tClub_X
Club_X\tplays_in_club_inverse\tBob_B
"""


def prompts(index: Index, max_steps: int = 10) -> dict[str, Any]:
    """Every prompt and spec text a small-schema graph gets, by configuration."""
    out: dict[str, Any] = {"schema_text": index.schema.render()}
    for name, cfg in CONFIGS.items():
        example = worked_example(index, cfg)
        out[f"example/{name}"] = example or ""
        out[f"full/{name}"] = system_prompt(index.schema, cfg, max_steps, example=example)
        out[f"full_noex/{name}"] = system_prompt(index.schema, cfg, max_steps)
        out[f"specs/{name}"] = json.dumps(
            tool_specs(index.schema, cfg, answer_tools=True), sort_keys=True
        )
        out[f"mcp_specs/{name}"] = json.dumps(tool_specs(index.schema, cfg), sort_keys=True)
    out["short"] = short_system_prompt(index.schema, max_steps)
    return {
        k: v if k in AS_TEXT else hashlib.sha256(v.encode()).hexdigest() for k, v in out.items()
    }


def wc_index(root: Path) -> Index:
    """The WC2014-shaped graph, built."""
    (root / "wc").mkdir(parents=True, exist_ok=True)
    (root / "wc" / "kb.tsv").write_text(WC_TRIPLES, encoding="utf-8")
    return build_index(root / "wc" / "kb.tsv", root / "wc" / "idx")


def build_graphs(root: Path) -> dict[str, Index]:
    """The graphs the golden file covers: the bundled MetaQA graph, the agent tests'
    movie graph, and a WC2014-shaped one (built as the tests' fixtures build them)."""
    import importlib.util

    here = Path(__file__).resolve().parent
    sys.path.insert(0, str(here.parent))
    from _helpers import write_metaqa_kb

    spec = importlib.util.spec_from_file_location("agent_conftest", here / "conftest.py")
    assert spec is not None and spec.loader is not None
    agent_conftest = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(agent_conftest)
    TRIPLES = agent_conftest.TRIPLES

    (root / "movies").mkdir(parents=True, exist_ok=True)
    (root / "movies" / "kb.txt").write_text(TRIPLES, encoding="utf-8")
    kb = write_metaqa_kb(root / "metaqa-kb.txt")
    return {
        "metaqa": build_index(kb, root / "metaqa"),
        "movies": build_index(root / "movies" / "kb.txt", root / "movies" / "idx"),
        "wc": wc_index(root),
    }


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        graphs = build_graphs(Path(tmp))
        data = {name: prompts(index) for name, index in graphs.items()}
    GOLDEN.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {GOLDEN}")
