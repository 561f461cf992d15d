"""Labels from relation names, the described schema, and the user's schema file."""

import json

import pytest

from ark.errors import ArkError
from ark.graph import DescribedSchema, read_schema_file, relation_label
from ark.index import build_index, open_index, save_described, verify_index


@pytest.mark.parametrize(
    ("name", "words", "inverse"),
    [
        ("directed_by", ("directed", "by"), False),
        ("__people__person__spouse", ("spouse",), False),
        ("people.person.place_of_birth", ("place", "of", "birth"), False),
        ("author___affiliated_with___institution", ("affiliated", "with"), False),
        ("playsFor", ("plays", "for"), False),
        ("plays_in_club_inverse", ("plays", "in", "club"), True),
        ("~parentOf", ("parent", "of"), True),
        ("indication", ("indication",), False),
        # Letters of every script are letters: not "pr d cesseur", "ville d part".
        ("prédécesseur", ("prédécesseur",), False),
        ("villeDépart", ("ville", "départ"), False),
        ("ÉtatMembre_inverse", ("état", "membre"), True),
        ("dbo:hiérarchie+_", ("dbo", "hiérarchie"), False),
    ],
)
def test_relation_labels_read_every_naming_shape(name, words, inverse):
    label = relation_label(name)
    assert (label.words, label.inverse) == (words, inverse)


def test_a_stark_name_carries_its_types():
    label = relation_label("author___writes___paper")
    assert (label.source_hint, label.target_hint) == ("author", "paper")


def test_described_from_names_has_labels_examples_and_reverse_pairs(freebase, tmp_path):
    index = build_index(freebase, tmp_path / "idx")
    spouse = index.described.relation("__people__person__spouse")
    assert spouse.label == "spouse"
    assert spouse.examples == (("Franklin_D_Roosevelt", "Eleanor_Roosevelt"),)
    reverse = index.described.relation("located_in_inverse")
    assert reverse.inverse and reverse.inverse_of == "located_in"
    # Stored in the index, checksummed like every other file.
    assert (tmp_path / "idx" / "described.json").is_file()
    assert "described.json" in index.meta["checksums"]


def test_a_schema_file_adds_words_and_a_model_layer_never_overrides_it(freebase, tmp_path):
    from ark.graph import with_layer

    schema = tmp_path / "schema.yaml"
    schema.write_text(
        "relations:\n"
        "  __people__person__spouse:\n"
        "    label: spouse\n"
        "    description: the person someone is married to\n"
        "    aliases: [wife, husband, married to]\n",
        encoding="utf-8",
    )
    index = build_index(freebase, tmp_path / "idx", schema_file=schema)
    spouse = index.described.relation("__people__person__spouse")
    assert spouse.aliases == ("wife", "husband", "married to")
    assert index.described.sources == ("name", "file:schema.yaml")
    # A model's layer fills what the file leaves, and the file's words stay first.
    model = {
        "relations": {
            "__people__person__spouse": {"description": "model says", "aliases": ["partner"]},
            "__people__person__children": {"description": "a person's kids", "aliases": ["kid"]},
        }
    }
    base = DescribedSchema.from_names(index.schema, index.graph)
    merged = with_layer(index.described, "model:test", model, base)
    spouse = merged.relation("__people__person__spouse")
    assert spouse.description == "the person someone is married to"
    assert spouse.aliases == ("wife", "husband", "married to", "partner")
    assert merged.relation("__people__person__children").aliases == ("kid",)
    save_described(index, merged)
    reopened = open_index(tmp_path / "idx")
    assert reopened.described.relation("__people__person__children").description == (
        "a person's kids"
    )
    assert verify_index(tmp_path / "idx")["ok"]  # meta.json's checksums follow the change


def test_schema_file_errors_name_the_file_and_entry(freebase, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("relations:\n  x: [1, 2\n", encoding="utf-8")
    with pytest.raises(ArkError, match=r"bad\.yaml"):
        read_schema_file(bad)
    unknown = tmp_path / "unknown.json"
    unknown.write_text(json.dumps({"relations": {"nope": {"label": "x"}}}), encoding="utf-8")
    with pytest.raises(ArkError, match="nope"):
        build_index(freebase, tmp_path / "idx", schema_file=unknown)
    field = tmp_path / "field.json"
    field.write_text(json.dumps({"relations": {"located_in": {"colour": "x"}}}), "utf-8")
    with pytest.raises(ArkError, match=r"located_in: unknown field"):
        read_schema_file(field)
    aliases = tmp_path / "aliases.json"
    aliases.write_text(json.dumps({"types": {"entity": {"aliases": "thing"}}}), "utf-8")
    with pytest.raises(ArkError, match="list of strings"):
        read_schema_file(aliases)


def test_a_described_schema_file_types_triples_when_it_gives_every_end(tmp_path):
    kb = tmp_path / "kb.txt"
    kb.write_text("Big|directed_by|Penny Marshall\nBig|has_genre|Comedy\n", encoding="utf-8")
    schema = tmp_path / "schema.json"
    ends = {
        "directed_by": {"source_type": "movie", "target_type": "person"},
        "has_genre": {"source_type": "movie", "target_type": "genre"},
    }
    schema.write_text(json.dumps({"relations": ends}), encoding="utf-8")
    index = build_index(kb, tmp_path / "idx", schema_file=schema)
    assert sorted(index.schema.node_type_names) == ["genre", "movie", "person"]
