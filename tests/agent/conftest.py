from pathlib import Path

import pytest

from ark.index import Index, build_index

# A tiny movie graph in MetaQA's triple format (so the built-in schema types it).
TRIPLES = """\
Forrest Gump|directed_by|Robert Zemeckis
Forrest Gump|starred_actors|Tom Hanks
Forrest Gump|has_genre|Drama
Cast Away|directed_by|Robert Zemeckis
Cast Away|starred_actors|Tom Hanks
Cast Away|has_genre|Adventure
Back to the Future|directed_by|Robert Zemeckis
Back to the Future|has_genre|Comedy
Big|starred_actors|Tom Hanks
Big|directed_by|Penny Marshall
Big|has_genre|Comedy
"""


@pytest.fixture(scope="session")
def movie_index(tmp_path_factory: pytest.TempPathFactory) -> Index:
    root: Path = tmp_path_factory.mktemp("movies")
    (root / "kb.txt").write_text(TRIPLES, encoding="utf-8")
    return build_index(root / "kb.txt", root / "idx")
