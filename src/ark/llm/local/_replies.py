"""The model's own replies read back as the very tokens it sampled.

Why: after a call the KV cache holds the prompt and the reply's sampled tokens. The
next step's prompt renders that reply again from the parsed tool call, through the
chat template, and tokenizes it: the same text, other tokens. The 1.5B writes
``<tool_call>`` as four plain-text tokens (``<``, ``tool``, ``_call``, ``>\\n``) where
the template's text has one special token, so the cached reply was never reused and
every step read its last reply again (``docs/decisions/engine-steps.md``).

:class:`ReplyTokens` remembers each reply's text with its tokens; :func:`splice`
finds, in a rendered prompt, each assistant turn whose body is a remembered reply
(the text between the template's generation prompt and the end of the turn) and puts
its remembered tokens there. A reply the template renders otherwise than the model
wrote it (other JSON spacing, say) is not found, and is tokenized as before. Only the
model's own tokens are spliced, into the place the template puts the model's turn,
so graph text still cannot forge a turn (:func:`ark.llm.local._model.prompt_segments`).

Off by default, ``LocalChatModel(keep_replies=True)`` turns it on: the grammar spells
``<tool_call>`` in plain tokens, and past calls read back in that spelling cost the
small model answers (``docs/decisions/engine-steps.md``).
"""

from __future__ import annotations

import bisect
import itertools
from collections import OrderedDict
from collections.abc import Callable, Sequence

#: Replies remembered (least recently used out): a few agents' histories.
MAX_REPLIES = 1024


class ReplyTokens:
    """Reply text -> the tokens the model sampled for it, least recently used out."""

    def __init__(self, max_replies: int = MAX_REPLIES) -> None:
        self.max_replies = max_replies
        self._tokens: OrderedDict[str, tuple[int, ...]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._tokens)

    def remember(self, text: str, tokens: Sequence[int]) -> None:
        if not text or not tokens or self.max_replies <= 0:
            return
        self._tokens[text] = tuple(int(t) for t in tokens)
        self._tokens.move_to_end(text)
        while len(self._tokens) > self.max_replies:
            self._tokens.popitem(last=False)

    def get(self, text: str) -> tuple[int, ...] | None:
        tokens = self._tokens.get(text)
        if tokens is not None:
            self._tokens.move_to_end(text)
        return tokens


def reply_tokens(
    tokens: Sequence[int], text: str, detokenize: Callable[[Sequence[int]], str]
) -> list[int] | None:
    """The leading tokens of ``tokens`` (what was sampled, maybe with the end-of-turn
    token or text after the reply) that spell exactly ``text`` (the reply as returned);
    None when no prefix does (a token straddles the reply's end)."""
    ids = list(tokens)
    while ids and len(detokenize(ids)) > len(text):
        ids.pop()
    return ids if ids and detokenize(ids) == text else None


def splice(
    pieces: Sequence[tuple[str, bool]],
    replies: ReplyTokens,
    turn_open: str,
    turn_close: str,
) -> list[tuple[str, bool] | tuple[int, ...]]:
    """``pieces`` (``(text, is_template_text)``, in order) with each remembered reply cut
    out and replaced by its tokens (a tuple of ints). A reply is the text between an
    occurrence of ``turn_open`` (the template's generation prompt) and the next
    ``turn_close`` (the end of the assistant's turn)."""
    text = "".join(t for t, _ in pieces)
    starts = list(itertools.accumulate((len(t) for t, _ in pieces), initial=0))

    def template_at(lo: int, hi: int) -> bool:  # text[lo:hi] lies in one template piece
        i = bisect.bisect_right(starts, lo) - 1
        return 0 <= i < len(pieces) and pieces[i][1] and hi <= starts[i + 1]

    spans: list[tuple[int, int, tuple[int, ...]]] = []
    at = 0
    while (opened := text.find(turn_open, at)) != -1:
        start = opened + len(turn_open)
        end = text.find(turn_close, start)
        if end == -1:
            break
        at = end
        # Only the template's own turn markers count: graph text cannot open a turn.
        if not (template_at(opened, start) and template_at(end, end + len(turn_close))):
            at = start
            continue
        tokens = replies.get(text[start:end])
        if tokens is not None:
            spans.append((start, end, tokens))
    if not spans:
        return list(pieces)
    out: list[tuple[str, bool] | tuple[int, ...]] = []
    offset = 0  # where the current piece starts in ``text``
    k = 0  # the next span not yet passed
    for piece, is_template in pieces:
        pos, hi = offset, offset + len(piece)
        offset = hi
        while pos < hi:
            if k < len(spans) and spans[k][0] <= pos:  # inside reply k: its tokens, once
                start, end, tokens = spans[k]
                if start == pos:
                    out.append(tokens)
                pos = min(hi, end)
                if pos == end:
                    k += 1
            else:
                stop = min(hi, spans[k][0]) if k < len(spans) else hi
                out.append((text[pos:stop], is_template))
                pos = stop
    return out
