"""Shared fixtures: the real MetaQA graph, as bundled with the package (built once
per session)."""

from __future__ import annotations

from pathlib import Path

import pytest

from _helpers import write_metaqa_kb
from ark.index import Index, build_index


@pytest.fixture(scope="session", autouse=True)
def _kv_cache_in_a_temporary_directory(tmp_path_factory: pytest.TempPathFactory):
    """The local model's saved prompt states (``ARK_KV_CACHE``) go to a temporary
    directory, never the user's ``~/.cache/ark/kv``."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ARK_KV_CACHE", str(tmp_path_factory.mktemp("kv")))
        yield


@pytest.fixture(scope="session")
def metaqa_kb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_metaqa_kb(tmp_path_factory.mktemp("metaqa-kb") / "kb.txt")


@pytest.fixture(scope="session")
def metaqa_index(metaqa_kb: Path, tmp_path_factory: pytest.TempPathFactory) -> Index:
    return build_index(metaqa_kb, tmp_path_factory.mktemp("metaqa") / "idx")


@pytest.fixture(scope="session")
def metaqa_triples(metaqa_kb: Path) -> list[tuple[str, str, str]]:
    with metaqa_kb.open(encoding="utf-8") as f:
        return [tuple(line.rstrip("\n").split("|")) for line in f if line.strip()]  # type: ignore[misc]


@pytest.fixture(scope="session")
def pg():
    """A real PostgreSQL server for the session (``_postgres.py``): its URI."""
    pytest.importorskip("psycopg")
    from _postgres import postgres_server

    with postgres_server() as uri:
        yield uri


# A tiny movie graph in MetaQA's triple format (so the built-in schema types it).
MOVIE_TRIPLES = """\
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
    (root / "kb.txt").write_text(MOVIE_TRIPLES, encoding="utf-8")
    return build_index(root / "kb.txt", root / "idx")
