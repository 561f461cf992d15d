"""Build the ``geo`` dev set: GeoQuery's questions over its US geography database as a graph.

    python benchmarks/devsets/make_geo.py [--source DIR_OR_GIT_DIR] [--commit SHA]
        [--out /work/devdata/geo] [--n 300] [--seed 0]

Why this set: a small, closed domain none of the other sets touches (US states,
cities, rivers, lakes, mountains), named the way a hand-made database names it —
lower case and bare (``texas``, ``rio grande``, ``mount mckinley``), relations that
are its columns (``border``, ``traverse``, ``state_name``, ``highest_point``,
``population``) — and questions people wrote to a geography system (Zelle and Mooney,
1996): "what states neighbor maine", "where is san diego", "which rivers run through
the state with the largest city in the us". They ask for chains, numbers and
superlatives in words no template chose.

Source: GeoQuery in the SQL form of Finegan-Dollak et al. ("Improving Text-to-SQL
Evaluation Methodology", ACL 2018), https://github.com/jkkummerfeld/text2sql-data,
files ``data/geography.json`` (each query's SQL and its questions, with their
question split and the values of their variables) and ``data/geography-db.sql`` (the
database, a MySQL dump of geobase). ``--source`` is a folder holding those two files
or a git directory (the fetched mirror) read at ``--commit``.

What it writes under ``--out``:

- ``kb.tsv`` — ``head<TAB>relation<TAB>tail``: every row of the database as facts of
  its entity, a relation being the column's name (``texas border oklahoma``,
  ``austin state_name texas``, ``texas population 14229191``); numbers are nodes
  named by their digits. A state is named by its name; another entity too, unless
  two entities share the name: then a city is named ``name (state)`` and a river,
  lake, mountain or highest/lowest point ``name (river)`` and so on
  (``mississippi (river)``, ``portland (maine)``).
- ``dev.jsonl`` — the questions of the dev question split whose SQL, run on the
  database, names entities or numbers of the graph (one that counts or sums, fails or
  answers nothing is left out), for ``ark eval --dataset jsonl:...``; ``answer_names``
  the nodes of the first column of the SQL's answer; ``qtype`` ``lookup`` (joins and
  conditions only), ``superlative`` (MAX, MIN) or ``constraint`` (a comparison, a
  NOT IN).
- ``README.md`` — provenance, licence and counts.
"""

from __future__ import annotations

import json
import random
import re
import sqlite3
import sys
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import most_used, parse_args, read_source, relation_counts, sample, write_set

DEFAULT_MIRROR = Path("/work/.mirror/jkkummerfeld+text2sql-data/repo")
DEFAULT_COMMIT = "5050bad2309a93636ea4788d3660c9202bf11e0e"
DEFAULT_OUT = Path("/work/devdata/geo")
QUESTIONS = "data/geography.json"
DATABASE = "data/geography-db.sql"
SPLIT = "dev"

# an entity of the database: (kind, name, state), the state "" but for a city
Key = tuple[str, str, str]

# the kind of entity a column holds, in whichever table; a column not listed holds a number
ENTITY_COLUMNS = {
    "state_name": "state",
    "border": "state",
    "traverse": "state",
    "capital": "city",
    "city_name": "city",
    "river_name": "river",
    "lake_name": "lake",
    "mountain_name": "mountain",
    "highest_point": "point",
    "lowest_point": "point",
    "country_name": "country",
}
# each table's own entity (the head of its row's facts)
TABLE_KEYS = {
    "state": "state_name",
    "city": "city_name",
    "river": "river_name",
    "lake": "lake_name",
    "mountain": "mountain_name",
    "highlow": "state_name",
    "border_info": "state_name",
}


def load_database(dump: str) -> sqlite3.Connection:
    """The MySQL dump as an in-memory SQLite database: its CREATE TABLE statements less
    MySQL's table options, and its INSERT statements as they are."""
    db = sqlite3.connect(":memory:")
    for create in re.findall(r"CREATE TABLE .*?\n\)[^;]*;", dump, flags=re.S):
        db.execute(re.sub(r"\n\)[^;]*;", "\n)", create))
    for insert in re.findall(r"^INSERT INTO .*;$", dump, flags=re.M):
        db.execute(insert)
    if not db.execute("SELECT name FROM sqlite_master").fetchall():
        raise SystemExit("no CREATE TABLE in the database dump")
    return db


def number(value: Any) -> str:
    """A number's node name: its digits, without a float's ``.0``."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def facts(db: sqlite3.Connection) -> list[tuple[Key, str, Key]]:
    """Every row of every table as facts of its entity: (head, column, tail)."""
    out: dict[tuple[Key, str, Key], None] = {}
    for table, key in TABLE_KEYS.items():
        cursor = db.execute(f"SELECT * FROM {table}")
        columns = [c[0].lower() for c in cursor.description]
        for row in cursor.fetchall():
            values = dict(zip(columns, row, strict=True))
            head = entity(key, values)
            for column, value in values.items():
                if column == key or value is None or value == "":
                    continue
                out[(head, column, entity(column, values))] = None
    return list(out)


def entity(column: str, values: dict[str, Any]) -> Key:
    """The entity a row's column holds: a city with its state (the row's, or the state's
    own for a capital), a number by its digits."""
    kind = ENTITY_COLUMNS.get(column)
    value = values[column]
    if kind is None:
        return ("number", number(value), "")
    if kind == "city":
        return ("city", value, values["state_name"])
    return (kind, value, "")


def node_names(keys: Iterable[Key]) -> dict[Key, str]:
    """A node name per entity: its name, or, when entities of the database share it, a
    city's ``name (state)`` and another's ``name (kind)``; a state keeps its name."""
    keys = set(keys)
    sharing = Counter(name for kind, name, _ in keys if kind != "number")
    names = {}
    for kind, name, state in keys:
        if kind in ("number", "state") or sharing[name] == 1:
            names[(kind, name, state)] = name
        else:
            names[(kind, name, state)] = f"{name} ({state if kind == 'city' else kind})"
    return names


SELECT = re.compile(r"^SELECT\s+(?:DISTINCT\s+)?(\w+?)alias(\d+)\.(\w+)", re.I)


def answer_column(sql: str) -> tuple[str, str, str] | None:
    """(table, alias, column) of the SQL's first answer column, lower case; None for an
    answer that is computed (COUNT, SUM, MAX of a column) or read from a derived table."""
    m = SELECT.match(sql.strip())
    if m is None or m.group(1).upper() == "DERIVED_TABLE":
        return None
    return m.group(1).lower(), f"{m.group(1)}alias{m.group(2)}", m.group(3).lower()


def with_state(sql: str, alias: str, column: str) -> str:
    """The SQL answering a city's state beside it (a city is known by its name and
    state): ``SELECT A.CITY_NAME`` becomes ``SELECT A.CITY_NAME , A.STATE_NAME``."""
    m = SELECT.match(sql.strip())
    assert m is not None
    return sql.strip()[: m.end()] + f" , {alias}.STATE_NAME" + sql.strip()[m.end() :]


def qtype(sql: str) -> str:
    """What beyond joins the SQL needs: ``superlative``, ``constraint`` or ``lookup``."""
    if re.search(r"\b(MAX|MIN)\s*\(", sql, flags=re.I):
        return "superlative"
    if re.search(r"[<>]|\bNOT\s+IN\b", sql, flags=re.I):
        return "constraint"
    return "lookup"


def fill(text: str, variables: dict[str, str]) -> str:
    """A question's text or SQL with its variables' values (longest names first, so
    ``city_name10`` is not read as ``city_name1``)."""
    for var in sorted(variables, key=len, reverse=True):
        value = variables[var]
        text = text.replace(f'"{var}"', f"'{value}'").replace(var, value)
    return text


def answers(
    db: sqlite3.Connection, sql: str, names: dict[Key, str]
) -> tuple[list[str] | None, str]:
    """The node names the SQL answers, or None and why not."""
    column = answer_column(sql)
    if column is None:
        return None, "computed answer"
    _, alias, col = column
    kind = ENTITY_COLUMNS.get(col)
    if kind == "city":
        sql = with_state(sql, alias, col)
    try:
        rows = db.execute(sql).fetchall()
    except sqlite3.Error:
        return None, "SQL fails"
    if not rows:
        return None, "no answer"
    keys: set[Key] = set()
    for row in rows:
        if kind is None:
            keys.add(("number", number(row[0]), ""))
        elif kind == "city":
            keys.add(("city", row[0], row[1]))
        else:
            keys.add((kind, row[0], ""))
    if not keys <= names.keys():
        return None, "answer not in the graph"
    return sorted(names[k] for k in keys), ""


def main(argv: list[str] | None = None) -> None:
    args = parse_args(
        __doc__, mirror=DEFAULT_MIRROR, commit=DEFAULT_COMMIT, out=DEFAULT_OUT, argv=argv
    )
    dump = read_source(args.source, args.commit, DATABASE)
    questions = read_source(args.source, args.commit, QUESTIONS)
    if dump is None or questions is None:
        raise SystemExit(f"{QUESTIONS} or {DATABASE}: not in {args.source} (at {args.commit})")
    db = load_database(dump)
    keyed = facts(db)
    names = node_names(k for h, _, t in keyed for k in (h, t))
    triples = list(dict.fromkeys((names[h], r, names[t]) for h, r, t in keyed))

    records, why = [], Counter()
    asked = 0
    for query in json.loads(questions):
        for sentence in query["sentences"]:
            if sentence["question-split"] != SPLIT:
                continue
            asked += 1
            sql = fill(query["sql"][0], sentence["variables"])
            gold, reason = answers(db, sql, names)
            if gold is None:
                why[reason] += 1
                continue
            records.append(
                {
                    "id": f"geo-dev/{asked - 1}",
                    "query": fill(sentence["text"], sentence["variables"]),
                    "answer_names": gold,
                    "qtype": qtype(sql),
                }
            )
    chosen = sample(random.Random(args.seed), records, min(args.n, len(records)))

    relations, nodes = relation_counts(triples)
    kinds = Counter(k for k, _, _ in names)
    qtypes = Counter(r["qtype"] for r in chosen)
    renamed = sorted(n for n in names.values() if n.endswith(")"))
    readme = README.format(
        commit=args.commit,
        triples=len(triples),
        nodes=len(nodes),
        kinds=", ".join(f"{v} {k}" for k, v in kinds.most_common()),
        relations=len(relations),
        top=most_used(relations, 12),
        renamed=", ".join(f"`{n}`" for n in renamed[:6]),
        n_renamed=len(renamed),
        asked=asked,
        kept=len(records),
        dropped=", ".join(f"{v} {k}" for k, v in why.most_common()) or "none",
        n=len(chosen),
        seed=args.seed,
        qtypes=", ".join(f"{k} {v}" for k, v in sorted(qtypes.items())),
    )
    write_set(args.out, triples, chosen, readme)


README = """# geo — GeoQuery over its US geography database as a graph

Made by `benchmarks/devsets/make_geo.py` (in the ARK repository); do not edit by hand.

Source: GeoQuery (John M. Zelle, Raymond J. Mooney, "Learning to Parse Database
Queries Using Inductive Logic Programming", AAAI 1996; the database is geobase), in
the SQL form of Catherine Finegan-Dollak, Jonathan K. Kummerfeld et al., "Improving
Text-to-SQL Evaluation Methodology" (ACL 2018), https://github.com/jkkummerfeld/text2sql-data
at commit `{commit}`, files `data/geography.json` and `data/geography-db.sql`.
Licence: none stated for these files (the repository's LICENSE.md covers its code,
`advising` and `wikisql` only); GeoQuery has been shared for research since 1996,
credit the authors above.

- `kb.tsv` — `head<TAB>relation<TAB>tail`, {triples} facts over {nodes} nodes
  ({kinds} entities of the database) and {relations} relations, the database's
  column names (most used: {top}). Every row of every table is facts of its entity;
  numbers (populations, areas, lengths, elevations) are nodes named by their digits,
  so "how big is texas" is a fact too. Entities sharing a name are told apart
  ({n_renamed} nodes: {renamed}, …); states keep their name.
- `dev.jsonl` — {n} of the {kept} kept questions of the {asked} of GeoQuery's dev
  question split (seeded sample, seed {seed}; {qtypes}), for `ark eval --dataset
  jsonl:dev.jsonl`. Left out: {dropped}. Gold answers: the nodes of the first column
  of what the question's SQL answers on the database. A `superlative` question
  ("what is the biggest city in arizona") has a gold answer that no chain of
  relations gives alone (the chain gives all of arizona's cities); a `constraint` one
  compares numbers. The questions are lower case, tokenised as the source has them.

The dev split is small: bench_linking's and bench_quality's `--limit 30` samples of
two seeds share most of their questions.

A development set: tune on it freely.
"""


if __name__ == "__main__":
    main()
