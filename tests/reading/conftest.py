"""A small graph named the Freebase way, for the linker's tests."""

import pytest

from ark.index import build_index

FREEBASE = "\n".join(
    [
        "Anna_E_Roosevelt|__people__person__parents|Franklin_D_Roosevelt",
        "Franklin_D_Roosevelt|__people__person__profession|Politician",
        "Franklin_D_Roosevelt|__people__person__spouse|Eleanor_Roosevelt",
        "Eleanor_Roosevelt|__people__person__gender|Female",
        "Franklin_D_Roosevelt|__people__person__children|Anna_E_Roosevelt",
        "Franklin_D_Roosevelt|__people__person__place_of_birth|Hyde_Park",
        "Hyde_Park|located_in|United_States",
        "United_States|located_in_inverse|Hyde_Park",
    ]
)


@pytest.fixture
def freebase(tmp_path):
    """The triple file."""
    kb = tmp_path / "kb.txt"
    kb.write_text(FREEBASE, encoding="utf-8")
    return kb


@pytest.fixture(scope="module")
def people(tmp_path_factory):
    """Its index."""
    root = tmp_path_factory.mktemp("people")
    (root / "kb.txt").write_text(FREEBASE, encoding="utf-8")
    return build_index(root / "kb.txt", root / "idx")
