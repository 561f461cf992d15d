"""The described schema: every relation and node type with a label, a one-line
description, real example edges and the everyday words a question may use for it.

A relation's name is what the graph's builder typed (``__people__person__spouse``); a
question says "wife". What links the two is written down here, from three sources,
each filling what the one before it leaves and a user's word always winning:

1. the name itself (:func:`ark.graph.relation_label`): label, direction, examples;
2. ``ark index describe``: a model asked once per relation and type (aliases and a
   description), stored in the index;
3. the user's schema file (``ark index build --schema FILE``, YAML or JSON), which
   overrides both.

The prompt, the tool specs, the relation linker and synthetic questions all read it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from ark.errors import GraphFormatError
from ark.graph._labels import relation_label, type_label
from ark.graph._schema import Schema

#: Most aliases kept per relation or type.
MAX_ALIASES = 12
#: Longest label, alias and description accepted from a schema file or a model (in
#: characters): longer ones are someone's mistake, and every prompt would carry them.
MAX_LABEL_CHARS = 200
MAX_ALIAS_CHARS = 200
MAX_DESCRIPTION_CHARS = 2_000
#: Most aliases a schema file may list for one entry (the first MAX_ALIASES are kept).
MAX_FILE_ALIASES = 100
#: Largest schema file read (5,000 relations with full descriptions fit).
MAX_SCHEMA_FILE_BYTES = 32 << 20
#: Most YAML aliases (``*name``) in a schema file: a few are handy, thousands nested
#: are a "billion laughs" whose expansion never ends.
MAX_YAML_ALIASES = 100
#: Deepest nesting of a schema file (a valid one is 4 deep).
MAX_DEPTH = 32


def text_problem(value: Any, max_chars: int) -> str | None:
    """Why ``value`` is not an acceptable label, alias or description (None: it is):
    not a string, too long, or holding a NUL, another control character or a lone
    surrogate (which cannot be written as UTF-8)."""
    if not isinstance(value, str):
        return f"expected a string, got {type(value).__name__}"
    if len(value) > max_chars:
        return f"{len(value):,} characters, at most {max_chars:,} accepted"
    for ch in value:
        if ch < " " and ch not in "\t\n\r":
            return f"holds the control character {ch!r}"
        if "\ud800" <= ch <= "\udfff":
            return "holds a lone surrogate (not valid Unicode text)"
    return None


@dataclass(frozen=True, slots=True)
class RelationDoc:
    """One relation: ``label`` in words; ``inverse_of`` the relation this one stores
    in the reverse direction (``plays_in_club_inverse`` -> ``plays_in_club``), when the
    graph has both; ``examples`` real (head, tail) names."""

    name: str
    label: str
    description: str = ""
    aliases: tuple[str, ...] = ()
    examples: tuple[tuple[str, str], ...] = ()
    inverse: bool = False
    inverse_of: str | None = None
    source_type: str = ""
    target_type: str = ""

    def to_dict(self) -> dict[str, Any]:
        out = _words_dict(self)
        if self.examples:
            out["examples"] = [list(e) for e in self.examples]
        if self.inverse:
            out["inverse"] = True
        if self.inverse_of:
            out["inverse_of"] = self.inverse_of
        out["source_type"], out["target_type"] = self.source_type, self.target_type
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> RelationDoc:
        return cls(
            **_words_fields(d),
            examples=tuple((str(h), str(t)) for h, t in d.get("examples") or ()),
            inverse=bool(d.get("inverse", False)),
            inverse_of=d.get("inverse_of"),
            source_type=str(d.get("source_type") or ""),
            target_type=str(d.get("target_type") or ""),
        )


@dataclass(frozen=True, slots=True)
class TypeDoc:
    """One node type: its label, a description and other words for it."""

    name: str
    label: str
    description: str = ""
    aliases: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return _words_dict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TypeDoc:
        return cls(**_words_fields(d))


def _words_dict(doc: RelationDoc | TypeDoc) -> dict[str, Any]:
    """The fields relations and types share, as stored (empty ones left out)."""
    out: dict[str, Any] = {"name": doc.name, "label": doc.label}
    if doc.description:
        out["description"] = doc.description
    if doc.aliases:
        out["aliases"] = list(doc.aliases)
    return out


def _words_fields(d: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "name": str(d["name"]),
        "label": str(d.get("label") or d["name"]),
        "description": str(d.get("description") or ""),
        "aliases": tuple(str(a) for a in d.get("aliases") or ()),
    }


@dataclass(frozen=True)
class DescribedSchema:
    """Relations and node types with labels, descriptions and aliases, in schema order;
    ``sources`` says what filled them (``name``, ``model:NAME``, ``file:PATH``)."""

    relations: tuple[RelationDoc, ...]
    types: tuple[TypeDoc, ...]
    sources: tuple[str, ...] = ("name",)
    #: What each source beyond the names gave, as :func:`merge_described` takes it, so
    #: that a later source can be replaced without losing the others.
    layers: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: What was fitted to this reading of the graph, by name (the plan confidence of
    #: ``ark index fit-plans``); each fit records the reading it was made for.
    fits: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    _by_name: dict[str, RelationDoc] = field(default_factory=dict, repr=False, compare=False)
    _canonical: dict[str, str] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._by_name.update({r.name: r for r in self.relations})
        self._canonical.update({r.name: (r.inverse_of or r.name) for r in self.relations})

    @property
    def canonical(self) -> Mapping[str, str]:
        """Each relation's forward name: itself, or for a stored reverse
        (``plays_in_club_inverse``) the relation it reverses. Built once with the
        schema, because the reading, its step table and the hints all ask it for every
        relation they touch (do not modify it)."""
        return self._canonical

    def relation(self, name: str) -> RelationDoc | None:
        return self._by_name.get(name)

    def type(self, name: str) -> TypeDoc | None:
        return next((t for t in self.types if t.name == name), None)

    def phrases(self, relation: str) -> list[str]:
        """The label and aliases of a relation: the words a question may use for it."""
        doc = self._by_name.get(relation)
        if doc is None:
            return []
        return list(dict.fromkeys([doc.label, *doc.aliases]))

    def to_dict(self) -> dict[str, Any]:
        return {
            "sources": list(self.sources),
            "relations": [r.to_dict() for r in self.relations],
            "types": [t.to_dict() for t in self.types],
            "layers": {k: dict(v) for k, v in self.layers.items()},
            **({"fits": {k: dict(v) for k, v in self.fits.items()}} if self.fits else {}),
        }

    def with_fit(self, name: str, fit: Mapping[str, Any]) -> DescribedSchema:
        """This schema with ``fit`` stored under ``name`` (replacing an earlier one)."""
        return replace(self, fits={**self.fits, name: dict(fit)})

    @classmethod
    def from_names(cls, schema: Schema, graph: Any = None) -> DescribedSchema:
        """The described schema a graph's names give: labels, directions, the main type
        pair of each relation, and (with ``graph``) two real example edges each."""
        names = schema.relation_names
        labels = {n: relation_label(n) for n in names}
        by_label: dict[tuple[str, ...], str] = {}
        for n in names:
            if not labels[n].inverse:
                by_label.setdefault(labels[n].words, n)
        examples: dict[str, list[tuple[str, str]]] = {}
        if graph is not None:
            examples = _examples(
                graph.relation_names,
                graph.adj_node,
                graph.adj_code,
                graph.indptr,
                _NameReader(graph),
            )
        main: dict[str, Any] = {}  # each relation's most common type pair (first on ties)
        for r in schema.relations:  # one pass: a scan per relation was quadratic
            if r.name not in main or r.count > main[r.name].count:
                main[r.name] = r
        relations = []
        for n in names:
            lab = labels[n]
            top = main.get(n)
            src, dst = (top.source_type, top.target_type) if top is not None else ("", "")
            relations.append(
                RelationDoc(
                    name=n,
                    label=lab.text,
                    examples=tuple(examples.get(n, ())),
                    inverse=lab.inverse,
                    inverse_of=by_label.get(lab.words) if lab.inverse else None,
                    source_type=src,
                    target_type=dst,
                )
            )
        types = tuple(TypeDoc(t, type_label(t)) for t in schema.node_type_names)
        return cls(tuple(relations), types)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> DescribedSchema:
        return cls(
            relations=tuple(RelationDoc.from_dict(r) for r in d.get("relations") or ()),
            types=tuple(TypeDoc.from_dict(t) for t in d.get("types") or ()),
            sources=tuple(d.get("sources") or ("name",)),
            layers=dict(d.get("layers") or {}),
            fits=dict(d.get("fits") or {}),
        )

    def render(self, max_aliases: int = 4) -> str:
        """One line per relation for prompts and ``ark info``: the name, what it joins,
        its label when the name is not already plain words, a few aliases and the
        description."""
        lines = []
        for r in self.relations:
            ends = f"{r.source_type} -> {r.target_type}" if r.source_type else ""
            line = f"- {r.name}" + (f": {ends}" if ends else "")
            extra = []
            if r.label != r.name.replace("_", " "):
                extra.append(f'"{r.label}"')
            if r.aliases:
                extra.append("also: " + ", ".join(r.aliases[:max_aliases]))
            if r.description:
                extra.append(r.description)
            if extra:
                line += " — " + "; ".join(extra)
            lines.append(line)
        return "\n".join(lines)


def code_steps(graph: Any, canonical: Mapping[str, str]) -> list[tuple[str, str]]:
    """The step of every adjacency code of ``graph``: its forward relation (a stored
    reverse read as what it reverses, by ``canonical``: :attr:`DescribedSchema.canonical`)
    and the way along it, ``out`` or ``in``. The reading's chain search and
    ``ark index describe`` both walk the adjacency arrays by these steps."""
    steps: list[tuple[str, str]] = []
    for code in range(2 * len(graph.relation_names)):
        name, direction = graph.relation_names[code // 2], code % 2
        forward = canonical.get(name, name)
        out = (direction == 0) != (forward != name)  # a stored reverse flips it
        steps.append((forward, "out" if out else "in"))
    return steps


def _examples(
    schema_relations: Sequence[str],
    adj_node: np.ndarray,
    adj_code: np.ndarray,
    indptr: np.ndarray,
    names: Any,
    per_relation: int = 2,
) -> dict[str, list[tuple[str, str]]]:
    """Up to ``per_relation`` real (head, tail) name pairs per relation, from the first
    out-edges of each relation code in the adjacency (one vectorised pass per example)."""
    out: dict[str, list[tuple[str, str]]] = {r: [] for r in schema_relations}
    codes = np.asarray(adj_code)
    outgoing = np.flatnonzero(codes % 2 == 0)
    taken = np.zeros(len(outgoing), dtype=bool)
    for _ in range(per_relation):
        left = outgoing[~taken]
        if not len(left):
            break
        rel_codes, first = np.unique(codes[left] // 2, return_index=True)
        for r, pos in zip(rel_codes.tolist(), left[first].tolist(), strict=True):
            if r < len(schema_relations):
                head = int(np.searchsorted(indptr, pos, side="right")) - 1
                tail = int(adj_node[pos])
                out[schema_relations[r]].append((str(names[head]), str(names[tail])))
        taken[np.searchsorted(outgoing, left[first])] = True
    return out


class _NameReader:
    """``names[i]`` over a graph without materialising every name."""

    def __init__(self, graph: Any) -> None:
        self.graph = graph

    def __getitem__(self, i: int) -> str:
        return self.graph.name(i)


def merge_described(base: DescribedSchema, over: Mapping[str, Any], source: str) -> DescribedSchema:
    """``base`` with the fields ``over`` gives (``{"relations": {name: {...}}, "types":
    {name: {...}}}``): a given label or description replaces, aliases are put first and
    the rest kept. Names ``over`` gives that the graph does not have are refused."""
    rel_over = over.get("relations") or {}
    type_over = over.get("types") or {}
    unknown = [n for n in rel_over if base.relation(n) is None]
    unknown += [n for n in type_over if base.type(n) is None]
    if unknown:
        raise ValueError(f"not in the graph: {', '.join(map(str, unknown[:10]))}")

    def fields(doc: Any, given: Mapping[str, Any]) -> Any:
        changes: dict[str, Any] = {}
        if given.get("label"):
            changes["label"] = str(given["label"]).strip()
        if given.get("description"):
            changes["description"] = str(given["description"]).strip()
        if given.get("aliases"):
            changes["aliases"] = _aliases([*map(str, given["aliases"]), *doc.aliases])
        return replace(doc, **changes)

    return DescribedSchema(
        tuple(fields(r, rel_over.get(r.name) or {}) for r in base.relations),
        tuple(fields(t, type_over.get(t.name) or {}) for t in base.types),
        (*base.sources, source),
        {**base.layers, source: over},
    )


def with_layer(
    described: DescribedSchema, source: str, over: Mapping[str, Any], base: DescribedSchema
) -> DescribedSchema:
    """``described``'s layers with ``source``'s replaced by ``over``, applied to ``base``
    (the names' schema) in their order: a model's layer first, then a user's file,
    whose words win."""
    layers = {k: v for k, v in described.layers.items() if k.split(":")[0] != source.split(":")[0]}
    layers[source] = over
    out = base
    for name in sorted(layers, key=lambda k: k.startswith("file:")):
        out = merge_described(out, layers[name], name)
    return out


def _aliases(values: Iterable[str]) -> tuple[str, ...]:
    seen: dict[str, str] = {}
    for v in values:
        v = " ".join(v.split())
        if v and v.casefold() not in seen:
            seen[v.casefold()] = v
    return tuple(seen.values())[:MAX_ALIASES]


def read_schema_file(path: str | Path) -> dict[str, Any]:
    """A user's schema file (YAML or JSON): ``relations`` and ``types``, each a mapping
    from the graph's name to ``label``, ``description``, ``aliases`` (and, for triple
    files, a relation's ``source_type``/``target_type``). Errors name the file and entry.

    Everything is checked here, where it enters: types (a label is a string, not a
    list), sizes (:data:`MAX_DESCRIPTION_CHARS` and the others), text (no NUL or lone
    surrogates), the file's size, its nesting depth and its YAML aliases (a few KB of
    nested anchors expand without end)."""
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > MAX_SCHEMA_FILE_BYTES:
            raise GraphFormatError(
                p, f"the schema file has {size:,} bytes, at most {MAX_SCHEMA_FILE_BYTES:,} read"
            )
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise GraphFormatError(p, f"cannot read the schema file ({exc})") from None
    if p.suffix.lower() in (".yaml", ".yml"):
        data = _load_yaml(p, text)
    else:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise GraphFormatError(p, f"not valid JSON ({exc.msg})", exc.lineno) from None
        except RecursionError:
            raise GraphFormatError(p, f"nested too deeply (at most {MAX_DEPTH} levels)") from None
    if _depth(data) > MAX_DEPTH:
        raise GraphFormatError(p, f"nested too deeply (at most {MAX_DEPTH} levels)")
    if not isinstance(data, dict) or not set(data) <= {"relations", "types"}:
        raise GraphFormatError(p, "expected a mapping with 'relations' and/or 'types'")
    limits = {
        "label": MAX_LABEL_CHARS,
        "description": MAX_DESCRIPTION_CHARS,
        "source_type": MAX_LABEL_CHARS,
        "target_type": MAX_LABEL_CHARS,
    }
    for section in ("relations", "types"):
        entries = data.get(section) or {}
        if not isinstance(entries, dict):
            raise GraphFormatError(p, f"'{section}' must map names to their description")
        for name, entry in entries.items():
            if not isinstance(name, str):
                raise GraphFormatError(
                    p, f"{section}: the name {name!r} is not a string (quote it in YAML)"
                )
            if not isinstance(entry, dict):
                raise GraphFormatError(p, f"{section}.{name}: expected a mapping")
            extra = set(entry) - {"label", "description", "aliases", "source_type", "target_type"}
            if extra:
                raise GraphFormatError(
                    p, f"{section}.{name}: unknown field(s) {sorted(map(str, extra))}"
                )
            for key, limit in limits.items():
                if entry.get(key) is not None:
                    problem = text_problem(entry[key], limit)
                    if problem:
                        raise GraphFormatError(p, f"{section}.{name}.{key}: {problem}")
            aliases = entry.get("aliases")
            if aliases is None:
                continue
            if not isinstance(aliases, list):
                raise GraphFormatError(p, f"{section}.{name}.aliases: expected a list of strings")
            if len(aliases) > MAX_FILE_ALIASES:
                raise GraphFormatError(
                    p,
                    f"{section}.{name}.aliases: {len(aliases):,} aliases, at most "
                    f"{MAX_FILE_ALIASES} accepted",
                )
            for i, alias in enumerate(aliases):
                problem = text_problem(alias, MAX_ALIAS_CHARS)
                if problem:
                    raise GraphFormatError(p, f"{section}.{name}.aliases[{i}]: {problem}")
    return data


def _load_yaml(p: Path, text: str) -> Any:
    """``yaml.safe_load`` with at most :data:`MAX_YAML_ALIASES` alias references."""
    import yaml

    class Loader(yaml.SafeLoader):
        aliases = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.events.AliasEvent):
                self.aliases += 1
                if self.aliases > MAX_YAML_ALIASES:
                    mark = self.peek_event().start_mark
                    raise GraphFormatError(
                        p,
                        f"more than {MAX_YAML_ALIASES} YAML aliases (*name): refused, as "
                        "nested aliases can expand without end",
                        mark.line + 1,
                    )
            return super().compose_node(parent, index)

    loader = Loader(text)
    try:
        return loader.get_single_data()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise GraphFormatError(p, f"not valid YAML ({exc})", line) from None
    except RecursionError:
        raise GraphFormatError(p, f"nested too deeply (at most {MAX_DEPTH} levels)") from None
    finally:
        loader.dispose()


def _depth(data: Any, limit: int = MAX_DEPTH + 1) -> int:
    """Nesting depth of parsed JSON/YAML, counted up to ``limit``; iterative, and each
    container visited once (a YAML alias makes one object appear in many places)."""
    deepest, stack, seen = 0, [(data, 1)], set()
    while stack:
        value, level = stack.pop()
        if isinstance(value, dict | list) and id(value) not in seen:
            seen.add(id(value))
            deepest = max(deepest, level)
            if level >= limit:
                return level
            items = value.values() if isinstance(value, dict) else value
            stack.extend((v, level + 1) for v in items)
    return deepest


def is_described_schema_file(path: str | Path) -> bool:
    """Whether ``--schema`` names a described schema (YAML/JSON) rather than the
    ``relation<TAB>head_type<TAB>tail_type`` typing file."""
    return Path(path).suffix.lower() in (".yaml", ".yml", ".json")
