"""Moved to :mod:`ark.datasets.stark` (STaRK is a dataset adapter; the graph package
knows no dataset). Kept so ``from ark.graph._stark import convert_stark`` — still used
by ``ark convert-stark`` in ``cli/_graph_cmds.py`` — works; import from
``ark.datasets`` in new code."""

from ark.datasets.stark import (  # noqa: F401
    CANDIDATE_TYPES,
    STARK_META_FILE,
    convert_stark,
    load_pickle,
    read_stark_meta,
    stark_candidate_types,
)
