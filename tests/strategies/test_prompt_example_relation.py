"""The full prompt's filter example names the relation's ends the right way round.

On a graph whose relation joins two different types (person -wrote-> book), the
example asks for the *sources* (persons) linked to a *target* (a book), starting from
the book: swapping the source and target anywhere between the schema and the text
would name the book as what is wanted and start from a person.
"""

from __future__ import annotations

from ark.graph import NodeTypeSummary, RelationSummary, Schema
from ark.probes import example_relation
from ark.strategies import system_prompt
from ark.tools import ToolConfig

#: One relation between two different types (the example's), one within one type.
SCHEMA = Schema(
    node_types=(NodeTypeSummary("person", 3), NodeTypeSummary("book", 2)),
    relations=(
        RelationSummary("wrote", "person", "book", 4),
        RelationSummary("knows", "person", "person", 9),
    ),
)


def test_the_example_relation_is_name_source_target():
    assert example_relation(SCHEMA) == ("wrote", "person", "book")


def test_the_prompt_example_starts_from_the_target_and_asks_for_the_sources():
    text = system_prompt(SCHEMA, ToolConfig(), 10)
    assert "Example: to get the person nodes linked to a book by wrote, call " in text
    assert (
        'search_in_neighborhood(node_index=<index of the book>, edge_type="wrote", '
        'node_type="person")'
    ) in text


def test_no_example_without_a_relation_between_two_types():
    only_within = Schema(
        node_types=(NodeTypeSummary("person", 3),),
        relations=(RelationSummary("knows", "person", "person", 9),),
    )
    assert example_relation(only_within) is None
    assert "Example: to get" not in system_prompt(only_within, ToolConfig(), 10)
