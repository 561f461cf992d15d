"""Tokenisation identical to ``bm25s.tokenize`` (checked by a parity test).

Lowercase, the scikit-learn token pattern (two or more word characters), bm25s's
English stop words, then an optional Snowball stemmer (PyStemmer). The default is
no stemming: node names (people, drugs, products) are matched verbatim, which is
what entity lookup needs; ``stemmer="english"`` helps long descriptive text.

Names written as one word (``prince_miguel_duke_of_viseu``, ``BarackObama``): the
token pattern keeps ``_`` inside a word and a camelCase word whole, so a user writing
the name with spaces and capitals ("Prince Miguel, Duke of Viseu") would share no
term with it. With ``split_names`` (the default for new indexes) such a word also
gives its parts, split on ``_``, ``-``, ``.`` and camelCase (``Jean-Luc_Picard``:
``jean``, ``luc``, ``picard``; the pattern itself splits words on ``-`` and ``.``):
the bm25s tokens come first, unchanged, and the extra terms after them, so an
exact-name search still matches the whole name and a search by the name's words
matches its parts. An index written before the option reads without it (its
postings were built so).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from bm25s.stopwords import STOPWORDS_EN

from ark.errors import ArkError

TOKEN_PATTERN = r"(?u)\b\w\w+\b"
#: A camelCase boundary inside a word.
_CAMEL = re.compile(r"[a-z][A-Z]")
#: Where a name word splits: separators, and camelCase boundaries (``XMLParser``).
_NAME_SPLIT = re.compile(r"[_\-.]+|(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


class TokenizerSettingsError(ArkError):
    """The tokenizer settings themselves are unusable (a pattern that does not compile,
    an unknown stop word list or stemmer), as opposed to a missing optional package."""


@dataclass(frozen=True)
class TokenizerConfig:
    lower: bool = True
    token_pattern: str = TOKEN_PATTERN
    stopwords: str | None = "en"
    stemmer: str | None = None
    #: Words written as names (``a_b``, ``a-b``, ``a.b``, ``aB``) also give their parts
    #: and themselves whole (see the module's docstring).
    split_names: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {
            "lower": self.lower,
            "token_pattern": self.token_pattern,
            "stopwords": self.stopwords,
            "stemmer": self.stemmer,
            "split_names": self.split_names,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TokenizerConfig:
        """Settings as ``meta.json`` records them; an index written before
        ``split_names`` existed was tokenized without it, and reads so."""
        own = {k: data[k] for k in ("lower", "token_pattern", "stopwords", "stemmer")}
        return cls(**own, split_names=bool(data.get("split_names", False)))


@dataclass
class Tokenizer:
    config: TokenizerConfig = field(default_factory=TokenizerConfig)

    def __post_init__(self) -> None:
        pattern = self.config.token_pattern
        if not isinstance(pattern, str):
            raise TokenizerSettingsError(f"token_pattern must be a string, got {pattern!r}")
        try:
            self._findall = re.compile(pattern).findall
        except (re.error, RecursionError, OverflowError) as exc:
            raise TokenizerSettingsError(
                f"token_pattern {pattern!r} is not a valid regular expression ({exc})"
            ) from None
        if self.config.stopwords in (None, ""):
            self._stop: frozenset[str] = frozenset()
        elif self.config.stopwords in ("en", "english"):
            self._stop = frozenset(STOPWORDS_EN)
        else:
            raise TokenizerSettingsError(
                f"unknown stop word list {self.config.stopwords!r}; use 'en' or none"
            )
        self._stem_cache: dict[str, str] = {}
        self._stem = None
        if self.config.stemmer:
            try:
                import Stemmer  # PyStemmer
            except ImportError as exc:
                raise ArkError(
                    "stemming needs PyStemmer: pip install 'ark-retriever[stem]'"
                ) from exc
            try:
                self._stem = Stemmer.Stemmer(self.config.stemmer).stemWord
            except (KeyError, TypeError) as exc:
                raise TokenizerSettingsError(
                    f"PyStemmer has no stemmer {self.config.stemmer!r}"
                ) from exc

    def tokens(self, text: str) -> list[str]:
        extra = self._name_parts(text) if self.config.split_names else []
        if self.config.lower:
            text = text.lower()
        stop = self._stop
        words = [w for w in self._findall(text) if w not in stop]
        words += [w for w in extra if w not in stop]
        if self._stem is None:
            return words
        cache = self._stem_cache
        out = []
        for w in words:
            s = cache.get(w)
            if s is None:
                s = cache[w] = self._stem(w)
            out.append(s)
        return out

    def _name_parts(self, text: str) -> list[str]:
        """The extra terms of words written as names (with ``_`` inside, or in
        camelCase), each once per text: each one's parts (split on ``_``, ``-``, ``.``
        and camelCase) that the token pattern did not already give, and the word
        whole. Case is read before lowering (camelCase needs it); a text with neither
        costs two scans."""
        underscore, camel = "_" in text, _CAMEL.search(text) is not None
        if not underscore and not camel:  # most text: two scans in C, nothing more
            return []
        runs = [
            w
            for w in self._findall(text)
            if ("_" in w and underscore) or (camel and _CAMEL.search(w) is not None)
        ]
        out: list[str] = []
        seen: set[str] = set()
        lower = self.config.lower
        for run in runs:
            base = self._findall(run.lower() if lower else run)
            run = run.strip("_.-")
            whole = run.lower() if lower else run
            pieces = [whole] if whole not in base else []
            pieces += (p.lower() if lower else p for p in _NAME_SPLIT.split(run))
            for piece in pieces:
                if len(piece) > 1 and piece not in base and piece not in seen:
                    seen.add(piece)
                    out.append(piece)
        return out
