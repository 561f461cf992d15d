"""Index directories under faults: a build never removes what is not an index, and
damage is found (structure on open, everything with verify)."""

import json

import pytest

from ark.errors import ArkError
from ark.index import build_index, open_index

KB = "Forrest Gump|directed_by|Robert Zemeckis\nCast Away|directed_by|Robert Zemeckis\n"


@pytest.fixture()
def src(tmp_path):
    path = tmp_path / "kb.txt"
    path.write_text(KB)
    return path


@pytest.mark.parametrize(
    "meta",
    [
        '{"title": "my project"}',
        '{"format": "something-else"}',
        "not json at all",
        "[1, 2]",
    ],
)
def test_a_folder_with_a_foreign_meta_json_is_left_alone(src, tmp_path, meta):
    project = tmp_path / "project"
    project.mkdir()
    (project / "meta.json").write_text(meta)
    (project / "notes.md").write_text("my notes")
    with pytest.raises(ArkError, match="not an ARK index"):
        build_index(src, project)
    assert (project / "notes.md").read_text() == "my notes"
    assert (project / "meta.json").read_text() == meta


def test_an_index_and_an_empty_folder_are_written(src, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    build_index(src, empty)
    build_index(src, empty)  # an existing index is replaced
    assert json.loads((empty / "meta.json").read_text())["format"] == "ark-index"
    assert open_index(empty).graph.n_nodes == 3


def test_a_file_is_not_replaced(src, tmp_path):
    target = tmp_path / "target"
    target.write_text("data")
    with pytest.raises(ArkError, match="not an ARK index"):
        build_index(src, target)
    assert target.read_text() == "data"
