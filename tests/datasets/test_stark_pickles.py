"""STaRK's pickles are read as plain data: a pickle that would run code is refused,
the user is warned which file is read, and --trust-pickle is the explicit way out."""

import pickle

import pytest

pytest.importorskip("torch", reason="the [stark] extra is not installed")

from _stark_fixture import write_kb
from ark.datasets import convert_stark
from ark.errors import GraphFormatError


def make_kb(root):
    import numpy as np

    info = {0: {"name": "Aspirin", "details": {"score": np.float32(0.5)}}, 1: {"name": "pain"}}
    write_kb(
        root / "processed", info, edges=[(0, 1)], edge_types=[0], node_types=[0, 1],
        type_dict={0: "drug", 1: "disease"}, rel_dict={0: "indication"},
    )  # fmt: skip
    return root


class Payload:
    """Unpickling this creates a file: the stand-in for arbitrary code."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


def test_a_pickle_that_would_run_code_is_refused(tmp_path):
    kb = make_kb(tmp_path / "kb")
    marker = tmp_path / "pwned"
    info = kb / "processed" / "node_info.pkl"
    with info.open("wb") as f:
        pickle.dump({0: Payload(marker)}, f)
    warnings = []
    with pytest.raises(GraphFormatError, match=r"io\.open, which is not plain data") as err:
        convert_stark(kb, tmp_path / "out", "prime", warn=warnings.append)
    assert err.value.path == str(info) and "--trust-pickle" in str(err.value)
    assert not marker.exists()  # nothing ran
    assert len(warnings) == 1 and str(info) in warnings[0] and "can run code" in warnings[0]


def test_plain_data_pickles_convert_with_a_warning_per_file(tmp_path):
    kb = make_kb(tmp_path / "kb")
    warnings = []
    meta = convert_stark(kb, tmp_path / "out", "prime", warn=warnings.append)
    assert meta["nodes"] > 0
    assert [w.split()[3].rsplit("/", 1)[1] for w in warnings] == [
        "node_info.pkl",
        "node_type_dict.pkl",
        "edge_type_dict.pkl",
    ]
