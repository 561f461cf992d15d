"""The hand-made movie graph and the tiny chat template of the distillation tests."""

# A hand-made movie graph in MetaQA's triple format (the built-in schema types it),
# with enough chains for 1-, 2- and 3-hop paths.
TRIPLES = """\
Forrest Gump|directed_by|Robert Zemeckis
Forrest Gump|starred_actors|Tom Hanks
Forrest Gump|starred_actors|Robin Wright
Forrest Gump|has_genre|Drama
Forrest Gump|release_year|1994
Cast Away|directed_by|Robert Zemeckis
Cast Away|starred_actors|Tom Hanks
Cast Away|starred_actors|Helen Hunt
Cast Away|has_genre|Adventure
Cast Away|release_year|2000
Back to the Future|directed_by|Robert Zemeckis
Back to the Future|starred_actors|Michael J. Fox
Back to the Future|has_genre|Comedy
Back to the Future|release_year|1985
Big|starred_actors|Tom Hanks
Big|directed_by|Penny Marshall
Big|has_genre|Comedy
Big|release_year|1988
A League of Their Own|directed_by|Penny Marshall
A League of Their Own|starred_actors|Tom Hanks
A League of Their Own|starred_actors|Geena Davis
A League of Their Own|has_genre|Comedy
A League of Their Own|has_genre|Drama
Awakenings|directed_by|Penny Marshall
Awakenings|starred_actors|Robin Williams
Awakenings|has_genre|Drama
Awakenings|release_year|1990
Jumanji|starred_actors|Robin Williams
Jumanji|has_genre|Adventure
Jumanji|release_year|1995
What Women Want|starred_actors|Helen Hunt
What Women Want|has_genre|Comedy
What Women Want|release_year|2000
"""


def parse_triples() -> list[tuple[str, str, str]]:
    return [tuple(line.split("|")) for line in TRIPLES.splitlines()]  # type: ignore[misc]


#: A ChatML-style template (what Qwen models use), tool calls as JSON in tags.
TINY_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}"
    "{% for c in m.tool_calls or [] %}<tool_call>\n"
    '{"name": "{{ c.name }}", "arguments": {{ c.arguments | tojson }}}\n</tool_call>'
    "{% endfor %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
