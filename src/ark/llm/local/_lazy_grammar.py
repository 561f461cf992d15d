"""A llama.cpp sampler that samples exactly as ``create_completion`` does, grammar
first, while asking the grammar about few tokens.

``create_completion`` (``Llama._init_sampler``) runs one chain: the grammar masks the
151k-token vocabulary, then top-k (40), top-p (0.95), min-p (0.05), the temperature and
the draw. Masking every candidate costs a large share of decoding a token
(docs/decisions/local-model.md).

The first speed-up (llama.cpp's server order: sample without the grammar, mask the
whole vocabulary only when the grammar refuses the sampled token) is exact greedily but
not when sampling: top-k and top-p then truncate the *unconstrained* distribution, so a
token the grammar allows keeps only the share it had among all tokens, plus a share of
the rejections. Where the model would rather write prose than a call, that shifts the
choice of tool and arguments (issue 39; docs/decisions/local-model.md). This sampler
is the chain's own arithmetic on a short candidate list instead:

- min-p keeps only tokens whose logit is within ``ln(1/min_p)`` (3.0) of the best token
  the grammar allows, whatever the others, and top-k keeps at most ``k`` tokens;
- so the chain's result depends only on the allowed tokens whose logit is within a
  margin of that best one. The allowed tokens further below can only have entered
  top-p's normalisation, by at most ``k * exp(-MARGIN)`` of it (below float32's
  resolution at ``MARGIN = 18``), and are dropped by min-p anyway.

The grammar is asked about the tokens above ``best logit - MARGIN`` (a few hundred,
usually), and the whole vocabulary only when none of those is allowed; the chain (the
same ``Llama._init_sampler`` chain, seed included) then samples from the allowed ones.
Greedy output is the best allowed token, as before.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

#: Allowed tokens more than this many nats below the best allowed token are left out of
#: the candidates: together they hold under ``40 * exp(-18)`` (6e-7) of top-p's mass.
MARGIN = 18.0
#: The first window asked about: the tokens within this of the best logit overall.
FIRST_WINDOW = 6.0

_TOKEN_DATA = np.dtype([("id", np.int32), ("logit", np.float32), ("p", np.float32)], align=True)


class LazyGrammarSampler:
    """One sequence's sampler: ``Llama``'s own chain (``Llama._init_sampler``: penalties,
    top-k, typical, top-p, min-p, temperature, the seeded draw, or greedy), applied to the
    tokens the grammar allows among those that can matter (module docstring), so its
    draws follow ``create_completion``'s distribution.

    ``resamples`` counts the steps that had to ask the grammar about the whole
    vocabulary (no allowed token near the best one); ``checked`` the tokens asked about.
    """

    def __init__(
        self, llm: Any, temperature: float, grammar: Any, *, margin: float = MARGIN
    ) -> None:
        import llama_cpp
        from llama_cpp import _internals

        self.chain = llm._init_sampler(temp=temperature, repeat_penalty=1.0)
        self.grammar = None
        if grammar is not None:
            self.grammar = _internals.LlamaSampler()
            self.grammar.add_grammar(llm._model, grammar)
        self.n_vocab = llm.n_vocab()
        self.margin = margin
        self._data = np.zeros(self.n_vocab, dtype=_TOKEN_DATA)
        self._array = llama_cpp.llama_token_data_array(
            data=self._data.ctypes.data_as(ctypes.POINTER(llama_cpp.llama_token_data)),
            size=0,
            selected=-1,
            sorted=False,
        )
        self.resamples = 0
        self.checked = 0

    def _allowed(self, ids: np.ndarray, logits: np.ndarray) -> np.ndarray:
        """The ids among ``ids`` that the grammar allows next."""
        import llama_cpp

        n = len(ids)
        data = self._data
        data["id"][:n] = ids
        data["logit"][:n] = logits[ids]
        data["p"][:n] = 0.0
        arr = self._array
        arr.size, arr.selected, arr.sorted = n, -1, False
        llama_cpp.llama_sampler_apply(self.grammar.sampler, ctypes.byref(arr))
        self.checked += n
        return ids[np.isfinite(data["logit"][:n])]

    def sample(self, ctx: Any, index: int) -> int:
        import llama_cpp

        if self.grammar is None:
            return self.chain.sample(ctx, index)
        ptr = llama_cpp.llama_get_logits_ith(ctx.ctx, index)
        logits = np.ctypeslib.as_array(ptr, shape=(self.n_vocab,))
        top = float(logits.max())
        near = np.flatnonzero(logits >= top - FIRST_WINDOW)
        allowed = self._allowed(near, logits)
        if allowed.size:
            best = float(logits[allowed].max())
            floor = best - self.margin
            if floor < top - FIRST_WINDOW:  # more tokens can matter: ask about them too
                more = np.flatnonzero((logits >= floor) & (logits < top - FIRST_WINDOW))
                if more.size:
                    allowed = np.concatenate([allowed, self._allowed(more, logits)])
        else:  # nothing near the best token is allowed: ask about every token
            self.resamples += 1
            rest = np.flatnonzero(logits < top - FIRST_WINDOW)
            allowed = self._allowed(rest, logits)
            if allowed.size:
                floor = float(logits[allowed].max()) - self.margin
                allowed = allowed[logits[allowed] >= floor]
        if not allowed.size:
            raise RuntimeError("the grammar allows no token here")
        token = self._draw(allowed, logits)
        self.chain.accept(token)
        self.grammar.accept(token)
        return token

    def _draw(self, allowed: np.ndarray, logits: np.ndarray) -> int:
        """The chain's choice among ``allowed`` (as the full masked vocabulary gives)."""
        import llama_cpp

        n = len(allowed)
        data = self._data
        data["id"][:n] = allowed
        data["logit"][:n] = logits[allowed]
        data["p"][:n] = 0.0
        arr = self._array
        arr.size, arr.selected, arr.sorted = n, -1, False
        llama_cpp.llama_sampler_apply(self.chain.sampler, ctypes.byref(arr))
        return int(data["id"][arr.selected])

    def close(self) -> None:
        self.chain.close()
        if self.grammar is not None:
            self.grammar.close()
