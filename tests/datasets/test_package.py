"""ark.datasets is the one home of dataset adapters: MetaQA's schema reaches the graph
loader through registration, the old import paths still work (the public ones warn),
and MetaQA's default folder never depends on where the package is installed."""

import warnings
from pathlib import Path

import pytest

import ark.datasets
from ark.errors import ArkError


def test_metaqa_schema_is_registered_with_the_graph_loader(metaqa_index):
    from ark.graph import KNOWN_SCHEMAS

    assert KNOWN_SCHEMAS["metaqa"] == ark.datasets.METAQA_SCHEMA
    assert set(metaqa_index.graph.node_type_names) >= {"movie", "person", "genre"}


def test_moved_names_stay_importable_from_their_old_homes():
    import ark.eval.datasets as old_eval
    import ark.graph
    from ark.graph._stark import convert_stark

    assert convert_stark is ark.datasets.convert_stark
    assert old_eval.load_dataset is ark.datasets.load_dataset
    with pytest.warns(DeprecationWarning, match="ark.datasets"):
        assert ark.graph.stark_candidate_types is ark.datasets.stark_candidate_types
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # ark.index still reads it from ark.graph: no warning
        assert ark.graph.read_stark_meta is ark.datasets.read_stark_meta
    with pytest.raises(AttributeError):
        ark.graph.no_such_name  # noqa: B018


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
