"""How a database source is named and laid out: known before anything is read, so that
the loaders' dispatch (``_loaders.py``) and the database readers (``_databases.py``)
share it without importing each other."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import ClassVar

from ark.errors import ArkError

#: The prefixes that make a source a PostgreSQL connection URI.
POSTGRES_SCHEMES = ("postgresql://", "postgres://")
#: The first bytes of a LadybugDB database file.
LADYBUG_MAGIC = b"LBUG"


@dataclass(frozen=True)
class TableLayout:
    """Which tables and columns hold the graph: by default the names the table files
    use (``nodes``: ``id, name, type, properties``; ``edges``: ``from, to, type``).

    ``properties`` is optional in the table: a JSON object whose entries become the
    node's text, as in ``nodes.csv``. A table may be schema-qualified
    (``graph.nodes``); a view serves as well as a table (to join text columns into
    ``properties``, say).
    """

    nodes_table: str = "nodes"
    edges_table: str = "edges"
    id: str = "id"
    name: str = "name"
    type: str = "type"
    properties: str = "properties"
    source: str = "from"
    target: str = "to"
    relation: str = "type"

    #: The keys ``--column KEY=NAME`` takes, and the field each sets.
    COLUMN_KEYS: ClassVar[dict[str, str]] = {
        "id": "id",
        "name": "name",
        "type": "type",
        "properties": "properties",
        "from": "source",
        "to": "target",
        "relation": "relation",
    }

    @classmethod
    def parse(
        cls,
        columns: Iterable[str] = (),
        *,
        nodes_table: str | None = None,
        edges_table: str | None = None,
    ) -> TableLayout:
        """A layout from ``KEY=COLUMN`` pairs (keys: ``id, name, type, properties``
        of the nodes table, ``from, to, relation`` of the edges table)."""
        changes: dict[str, str] = {}
        for item in columns:
            key, sep, value = item.partition("=")
            key, value = key.strip(), value.strip()
            if not sep or not value or key not in cls.COLUMN_KEYS:
                raise ArkError(
                    f"--column {item!r}: expected KEY=COLUMN with KEY one of "
                    f"{', '.join(cls.COLUMN_KEYS)}"
                )
            changes[cls.COLUMN_KEYS[key]] = value
        if nodes_table:
            changes["nodes_table"] = nodes_table
        if edges_table:
            changes["edges_table"] = edges_table
        return replace(cls(), **changes)

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


def is_postgres_source(source: str | Path) -> bool:
    """Whether ``source`` is a PostgreSQL connection URI."""
    return isinstance(source, str) and source.startswith(POSTGRES_SCHEMES)


def is_ladybug_file(path: Path) -> bool:
    """Whether ``path`` is a LadybugDB database file (by its first bytes)."""
    try:
        with path.open("rb") as f:
            return f.read(len(LADYBUG_MAGIC)) == LADYBUG_MAGIC
    except OSError:
        return False
