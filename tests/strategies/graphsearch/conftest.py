"""The GraphSearch tests' document graph (``tests/_graphsearch_docs.py``) as an index."""

import pytest

from _graphsearch_docs import write_document_graph
from ark.index import Index, build_index


@pytest.fixture(scope="session")
def docs_index(tmp_path_factory: pytest.TempPathFactory) -> Index:
    root = tmp_path_factory.mktemp("documents")
    return build_index(write_document_graph(root / "tables"), root / "idx")
