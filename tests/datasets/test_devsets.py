"""benchmarks/devsets/make_wdsq.py and make_geo.py on small folders of their source
files: the facts each writes the right way round, the gold answers it gives, and what
it leaves out."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

DEVSETS = Path(__file__).resolve().parents[2] / "benchmarks" / "devsets"


def _load(name: str):  # type: ignore[no-untyped-def]
    """A dev-set script as a module (its dataclasses look their module up by name)."""
    spec = importlib.util.spec_from_file_location(name, DEVSETS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def wdsq():  # type: ignore[no-untyped-def]
    yield _load("make_wdsq")
    del sys.modules["make_wdsq"]


@pytest.fixture(scope="module")
def geo():  # type: ignore[no-untyped-def]
    yield _load("make_geo")
    del sys.modules["make_geo"]


def _read(out: Path) -> tuple[list[list[str]], list[dict]]:
    kb = [line.split("\t") for line in (out / "kb.tsv").read_text().splitlines()]
    dev = [json.loads(line) for line in (out / "dev.jsonl").read_text().splitlines()]
    return kb, dev


# SimpleQuestionsWikidata: subject, property (R = read from the object), object, question
WD_LINES = {
    "train": "Q1\tP19\tQ9\twhere was ann born\nQ2\tP19\tQ9\twhere was bob born\n",
    "valid": "Q9\tR19\tQ1\twho was born in york?\nQ3\tP106\tQ8\twhat does cy do\n",
    "test": "Q4\tP19\tQ7\twhere was dee born\n",
}
WD_LABELS = {  # the label rows, matched by question text (the file's own order aside)
    "train": [
        ("Bob", "place of birth", "York", "where was bob born"),
        ("Ann", "place of birth", "York", "where was ann born"),
    ],
    "valid": [("York", "place of birth", "Ann", "who was born in york?\n")],  # Q3's row is missing
    "test": [("Dee", "place of birth", "Hull", "where was dee born")],
}


def _wdsq_source(tmp_path: Path) -> tuple[Path, Path]:
    source, labels = tmp_path / "src", tmp_path / "labels"
    source.mkdir()
    labels.mkdir()
    for split, text in WD_LINES.items():
        (source / f"annotated_wd_data_{split}_answerable.txt").write_text(text)
        rows = "".join(
            f'{i},{e1},{p},{e2},"{q}"\n' for i, (e1, p, e2, q) in enumerate(WD_LABELS[split])
        )
        (labels / f"n_annotated_wd_data_{split}_answerable.csv").write_text(",e1,p,e2,q\n" + rows)
    return source, labels


def test_a_reversed_property_is_stated_from_its_object(wdsq):
    (line,) = wdsq.parse_lines("Q880963\tR19\tQ270657\twho was born in blackwater?\n", "f")
    assert line.reverse and line.pid == "P19"
    assert line.fact() == ("Q270657", "P19", "Q880963")
    with pytest.raises(SystemExit):
        wdsq.parse_lines("Q1\tX19\tQ2\tq\n", "f")


def test_a_question_text_on_two_lines_gives_no_label(wdsq):
    lines = wdsq.parse_lines("Q1\tP19\tQ2\tsame\nQ3\tP19\tQ4\tsame\nQ5\tP21\tQ6\tother\n", "f")
    rows = [["0", "A", "place of birth", "B", "same"], ["1", "E", "sex or gender", "F", "other"]]
    entity, prop = wdsq.label_votes(lines, rows)
    assert set(entity) == {"Q5", "Q6"} and dict(prop) == {"P21": {"sex or gender": 1}}


def test_wdsq_writes_facts_the_right_way_and_answers_from_the_object(wdsq, tmp_path):
    source, labels = _wdsq_source(tmp_path)
    out = tmp_path / "out"
    wdsq.main(["--source", str(source), "--labels", str(labels), "--out", str(out)])
    kb, dev = _read(out)
    assert ["Ann", "place of birth", "York"] in kb  # the R19 line, turned back
    assert ["Bob", "place of birth", "York"] in kb and len(kb) == 3
    (record,) = dev  # Q3/Q8 has no labels: left out
    assert record["query"] == "who was born in york?"
    assert record["answer_names"] == ["Ann", "Bob"]  # all born there, from the graph
    assert record["qtype"] == "1-hop reverse"
    assert "1 of its\n  2 lines were left out" in (out / "README.md").read_text()


GEO_DUMP = """
CREATE TABLE `state` (
  `state_name` text,
  `population` int(11) DEFAULT NULL,
  `area` double DEFAULT NULL,
  `country_name` varchar(3) NOT NULL DEFAULT '',
  `capital` text,
  `density` double DEFAULT NULL
) ENGINE=InnoDB DEFAULT CHARSET=latin1;
CREATE TABLE `city` (
  `city_name` text,
  `population` int(11) DEFAULT NULL,
  `country_name` varchar(3) NOT NULL DEFAULT '',
  `state_name` text
) ENGINE=InnoDB DEFAULT CHARSET=latin1;
CREATE TABLE `border_info` (
  `state_name` text,
  `border` text
) ENGINE=InnoDB DEFAULT CHARSET=latin1;
CREATE TABLE `river` (
  `river_name` text,
  `length` int(11) DEFAULT NULL,
  `country_name` varchar(3) NOT NULL DEFAULT '',
  `traverse` text
) ENGINE=InnoDB DEFAULT CHARSET=latin1;
CREATE TABLE `lake` (
  `lake_name` text, `area` double, `country_name` varchar(3), `state_name` text
) ENGINE=InnoDB DEFAULT CHARSET=latin1;
CREATE TABLE `mountain` (
  `mountain_name` text, `mountain_altitude` int(11), `country_name` varchar(3), `state_name` text
) ENGINE=InnoDB DEFAULT CHARSET=latin1;
CREATE TABLE `highlow` (
  `state_name` text, `highest_elevation` int(11), `lowest_point` text, `highest_point` text,
  `lowest_elevation` int(11)
) ENGINE=InnoDB DEFAULT CHARSET=latin1;
INSERT INTO `state` VALUES ('maine',1125000,33265,'usa','augusta',33.8),('georgia',5463000,58876,\
'usa','atlanta',92.8),('missouri',4916700,69697,'usa','jefferson city',70.5);
INSERT INTO `city` VALUES ('portland',61572,'usa','maine'),('augusta',47532,'usa','georgia'),\
('atlanta',425022,'usa','georgia');
INSERT INTO `border_info` VALUES ('maine','new hampshire');
INSERT INTO `river` VALUES ('missouri',3968,'usa','missouri');
"""


def _where(table: str, column: str, sql_from: str = "") -> str:
    """``SELECT T.COLUMN FROM T WHERE T.STATE_NAME = "state_name0"`` in GeoQuery's SQL."""
    alias = f"{table}alias0"
    select = sql_from or f"{alias}.{column}"
    return f'SELECT {select} FROM {table} AS {alias} WHERE {alias}.STATE_NAME = "state_name0" ;'


def _geo_question(text: str, sql: str, split: str = "dev", **variables: str) -> dict:
    return {
        "sql": [sql],
        "sentences": [{"question-split": split, "text": text, "variables": variables}],
    }


GEO_QUESTIONS = [
    _geo_question(
        "what is the capital of state_name0",
        _where("STATE", "CAPITAL"),
        state_name0="maine",
    ),
    _geo_question(
        "which cities are in state_name0",
        _where("CITY", "CITY_NAME"),
        state_name0="georgia",
    ),
    _geo_question(
        "how many cities are in state_name0",
        _where("CITY", "CITY_NAME", "COUNT( CITYalias0.CITY_NAME )"),
        state_name0="georgia",
    ),
    _geo_question(
        "what is the longest river",
        "SELECT RIVERalias0.RIVER_NAME FROM RIVER AS RIVERalias0 WHERE RIVERalias0.LENGTH = "
        "( SELECT MAX( RIVERalias1.LENGTH ) FROM RIVER AS RIVERalias1 ) ;",
    ),
    _geo_question(
        "how big is state_name0",
        _where("STATE", "AREA"),
        state_name0="maine",
    ),
    _geo_question(
        "what cities are in state_name0",
        _where("CITY", "CITY_NAME"),
        split="train",
        state_name0="maine",
    ),
]


def test_the_dump_loads_and_shared_names_are_told_apart(geo):
    db = geo.load_database(GEO_DUMP)
    assert db.execute("SELECT area FROM state WHERE state_name = 'maine'").fetchone() == (33265.0,)
    names = geo.node_names(k for h, _, t in geo.facts(db) for k in (h, t))
    assert names[("state", "missouri", "")] == "missouri"  # a state keeps its name
    assert names[("river", "missouri", "")] == "missouri (river)"
    assert names[("city", "augusta", "georgia")] == "augusta (georgia)"
    assert names[("city", "augusta", "maine")] == "augusta (maine)"  # maine's capital
    assert names[("city", "atlanta", "georgia")] == "atlanta"
    assert names[("number", "33265", "")] == "33265"


def test_geo_gives_the_sql_answers_as_nodes_of_the_graph(geo, tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    (source / "geography-db.sql").write_text(GEO_DUMP)
    (source / "geography.json").write_text(json.dumps(GEO_QUESTIONS))
    out = tmp_path / "out"
    geo.main(["--source", str(source), "--out", str(out)])
    kb, dev = _read(out)
    assert ["maine", "capital", "augusta (maine)"] in kb
    assert ["augusta (georgia)", "state_name", "georgia"] in kb
    assert ["maine", "border", "new hampshire"] in kb
    assert ["maine", "area", "33265"] in kb
    got = {r["query"]: (r["answer_names"], r["qtype"]) for r in dev}
    assert got == {  # the COUNT is left out, and so is the train question
        "what is the capital of maine": (["augusta (maine)"], "lookup"),
        "which cities are in georgia": (["atlanta", "augusta (georgia)"], "lookup"),
        "what is the longest river": (["missouri (river)"], "superlative"),
        "how big is maine": (["33265"], "lookup"),
    }
    assert "Left out: 1 computed answer" in (out / "README.md").read_text()
