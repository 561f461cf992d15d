"""One test says whether a graph's relations are too many to list (an open schema of
free-text relations): ``Schema.lists_relations``. The prompt and the tool schemas read
it, ``GraphTools.open_relations`` is its negation, and what ``ark eval`` records of the
phrase encoder's ``"auto"`` is what the tools resolved it to; checked on either side
of ``LISTING_LIMIT``, so that neither can drift to a test of its own."""

from __future__ import annotations

import pytest

from _phrase_graph import phrase_index
from ark.graph import LISTING_LIMIT
from ark.probes import phrase_encoder_record
from ark.probes import tools_phrases as _phrases
from ark.tools import GraphTools, ToolConfig


@pytest.mark.parametrize(("fillers", "open_"), [(LISTING_LIMIT - 1, False), (LISTING_LIMIT, True)])
def test_the_tools_and_ark_eval_read_one_open_schema_test(tmp_path, monkeypatch, fillers, open_):
    index = phrase_index(tmp_path, fillers, story=[])
    # the filler phrases and `mentions`: exactly LISTING_LIMIT, then one more
    assert len(index.graph.relation_names) == fillers + 1
    assert index.schema.lists_relations is not open_
    assert GraphTools(index, phrase_encoder="off").open_relations is open_
    # "auto" resolves as if the [dense] extra were installed (the name only: the
    # encoder is loaded on a phrase's first embedding, never here).
    monkeypatch.setattr(_phrases, "dense_available", lambda: True)
    resolved = GraphTools(index, phrase_encoder="auto").phrase_encoder
    assert (resolved is not None) is open_
    assert phrase_encoder_record(ToolConfig(), index).get("phrase_encoder") == resolved
