"""Tokenisation identical to ``bm25s.tokenize`` (checked by a parity test).

Lowercase, the scikit-learn token pattern (two or more word characters), bm25s's
English stop words, then an optional Snowball stemmer (PyStemmer). The default is
no stemming: node names (people, drugs, products) are matched verbatim, which is
what entity lookup needs; ``stemmer="english"`` helps long descriptive text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from bm25s.stopwords import STOPWORDS_EN

from ark.errors import ArkError

TOKEN_PATTERN = r"(?u)\b\w\w+\b"


class TokenizerSettingsError(ArkError):
    """The tokenizer settings themselves are unusable (a pattern that does not compile,
    an unknown stop word list or stemmer), as opposed to a missing optional package."""


@dataclass(frozen=True)
class TokenizerConfig:
    lower: bool = True
    token_pattern: str = TOKEN_PATTERN
    stopwords: str | None = "en"
    stemmer: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "lower": self.lower,
            "token_pattern": self.token_pattern,
            "stopwords": self.stopwords,
            "stemmer": self.stemmer,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TokenizerConfig:
        return cls(**{k: data[k] for k in ("lower", "token_pattern", "stopwords", "stemmer")})


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
        if self.config.lower:
            text = text.lower()
        stop = self._stop
        words = [w for w in self._findall(text) if w not in stop]
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
