"""ark.datasets is the one home of dataset adapters: MetaQA's schema reaches the graph
loader through registration, and MetaQA's default folder never depends on where the
package is installed."""

from pathlib import Path

import pytest

import ark.datasets
from ark.errors import ArkError


def test_metaqa_schema_is_registered_with_the_graph_loader(metaqa_index):
    from ark.graph import KNOWN_SCHEMAS

    assert KNOWN_SCHEMAS["metaqa"] == ark.datasets.METAQA_SCHEMA
    assert set(metaqa_index.graph.node_type_names) >= {"movie", "person", "genre"}


def test_default_metaqa_dir_from_the_environment_or_the_working_directory(tmp_path, monkeypatch):
    from ark.datasets import default_metaqa_dir

    monkeypatch.delenv("ARK_METAQA_DIR", raising=False)
    monkeypatch.setenv("ARK_DATA_DIR", str(tmp_path / "data"))
    assert default_metaqa_dir() == tmp_path / "data" / "metaqa"
    monkeypatch.delenv("ARK_DATA_DIR")
    (tmp_path / "shared" / "data" / "metaqa").mkdir(parents=True)
    (tmp_path / "repo").mkdir()
    monkeypatch.chdir(tmp_path / "repo")  # a checkout beside the shared data
    assert default_metaqa_dir() == (tmp_path / "shared" / "data" / "metaqa").resolve()
    monkeypatch.chdir("/")
    if not Path("/shared/data/metaqa").is_dir():
        with pytest.raises(ArkError, match="--data-dir"):
            default_metaqa_dir()
