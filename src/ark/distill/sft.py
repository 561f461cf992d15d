"""SFT records: trajectories rendered with the student's own chat template and tool
format, as token ids plus a loss mask that is 1 exactly on assistant tokens.

The text is rendered by :class:`ark.llm.local.ChatTemplate` — the same code the
local backend builds its prompts with — so the student trains on the very prompt it
will see. An assistant turn is the text between the generation prompt that precedes
it and the end of its own rendering (its closing marker included, the newline after
it not): the tool call and its arguments. System, user and tool turns are masked;
so, unless asked otherwise, are assistant turns whose call failed (the student learns
to recover from a bad call, not to make it).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ark._files import atomic_writer
from ark.errors import ArkError
from ark.graph import Schema
from ark.llm import Message
from ark.llm.local import ChatTemplate
from ark.strategies import system_prompt
from ark.tools import ToolConfig, tool_specs
from ark.trajectory import Trajectory, read_trajectories


class TextTokenizer(Protocol):
    """Text to token ids and back, special tokens (``<|im_start|>``…) parsed."""

    def encode(self, text: str) -> list[int]: ...

    def decode(self, ids: Sequence[int]) -> str: ...


class LlamaVocab:
    """The tokenizer of a GGUF, exactly as llama.cpp tokenizes prompts at inference
    (vocabulary only: no weights are loaded)."""

    def __init__(self, path: str | Path) -> None:
        try:
            from llama_cpp import Llama
        except ImportError as exc:
            raise ArkError("tokenizing with a GGUF needs llama-cpp-python ([local])") from exc
        self._llm = Llama(str(path), vocab_only=True, verbose=False)
        self.metadata: dict[str, str] = dict(self._llm.metadata)

    def encode(self, text: str) -> list[int]:
        return list(self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def decode(self, ids: Sequence[int]) -> str:
        return self._llm.detokenize(list(ids), special=True).decode("utf-8", errors="replace")


class HFTokenizer:
    """A Hugging Face tokenizer (a model directory's, or one built in code)."""

    def __init__(self, tokenizer: Any) -> None:
        self.tok = tokenizer

    def encode(self, text: str) -> list[int]:
        return list(self.tok.encode(text, add_special_tokens=False))

    def decode(self, ids: Sequence[int]) -> str:
        return str(self.tok.decode(list(ids), skip_special_tokens=False))


def student_template_and_tokenizer(base: str | Path) -> tuple[ChatTemplate, TextTokenizer]:
    """The chat template and tokenizer of ``base``: a GGUF file or a HF directory."""
    base = Path(base)
    if base.suffix == ".gguf":
        if not base.exists():
            raise ArkError(f"--base {base} does not exist")
        vocab = LlamaVocab(base)
        template = vocab.metadata.get("tokenizer.chat_template")
        if not template:
            raise ArkError(f"{base} has no chat template")
        return ChatTemplate(template), vocab
    if not base.is_dir():
        raise ArkError(f"--base {base}: not a GGUF file or a model directory")
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(base))
    if not getattr(tok, "chat_template", None):
        raise ArkError(f"{base} has no chat template in its tokenizer config")
    return ChatTemplate(tok.chat_template), HFTokenizer(tok)


# -- rendering ---------------------------------------------------------------------------


@dataclass
class RenderedPart:
    """A stretch of the rendered conversation: trained (an assistant turn) or masked."""

    text: str
    trained: bool


def rendered_parts(
    template: ChatTemplate,
    messages: Sequence[Message],
    tools: Sequence[dict[str, Any]],
    trained_turns: set[int] | None = None,
) -> list[RenderedPart]:
    """The conversation as alternating masked/trained text; concatenated, it is the
    template's rendering of the whole conversation. ``trained_turns`` (indices into
    ``messages``) limits which assistant turns are trained (default: all)."""
    full = template.render(messages, tools, add_generation_prompt=False)
    out: list[RenderedPart] = []
    pos = 0
    for i, m in enumerate(messages):
        if m.role != "assistant" or (trained_turns is not None and i not in trained_turns):
            continue
        before = template.render(messages[:i], tools, add_generation_prompt=True)
        through = template.render(messages[: i + 1], tools, add_generation_prompt=False)
        if not full.startswith(before) or not full.startswith(through):
            raise ArkError("the chat template does not render conversations prefix by prefix")
        end = len(through.rstrip())
        out.append(RenderedPart(full[pos : len(before)], False))
        out.append(RenderedPart(full[len(before) : end], True))
        pos = end
    out.append(RenderedPart(full[pos:], False))
    return [s for s in out if s.text]


@dataclass
class SFTRecord:
    id: str
    question_id: str | None
    synthetic: bool
    input_ids: list[int]
    mask: list[int]

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "query_id": self.question_id,  # the trajectory's key for it
            "synthetic": self.synthetic,
            "n_tokens": len(self.input_ids),
            "n_trained": sum(self.mask),
            "input_ids": self.input_ids,
            "mask": self.mask,
        }


def encode(parts: Sequence[RenderedPart], tokenizer: TextTokenizer) -> tuple[list[int], list[int]]:
    ids: list[int] = []
    mask: list[int] = []
    for s in parts:
        toks = tokenizer.encode(s.text)
        ids += toks
        mask += [int(s.trained)] * len(toks)
    return ids, mask


# -- trajectories -> records ---------------------------------------------------------------


@dataclass
class SFTOptions:
    drop_errored: bool = True  # stop_reason == "error"
    drop_empty: bool = True  # empty answer list
    agreement: bool = False  # keep trajectories agreeing with their query's vote
    train_failed_calls: bool = False
    max_tokens: int | None = 4096  # longer conversations are dropped, never cut
    prompt: str | None = None  # re-render the system prompt with this variant
    counts: Counter[str] = field(default_factory=Counter)


def trajectory_files(paths: Iterable[str | Path]) -> list[Path]:
    """``trajectories.jsonl`` of each directory given (or the file itself)."""
    files = []
    for p in map(Path, paths):
        f = p / "trajectories.jsonl" if p.is_dir() else p
        if not f.exists():
            raise ArkError(f"{p}: no trajectories.jsonl")
        files.append(f)
    return files


def agreeing(trajectories: Sequence[Trajectory]) -> list[Trajectory]:
    """Label-free agreement filter: per query, the nodes in more than half of its
    trajectories' answers form the vote; keep a trajectory whose answer overlaps it
    at Jaccard >= 0.5."""
    by_question: dict[str | None, list[Trajectory]] = {}
    for t in trajectories:
        by_question.setdefault(t.question_id or t.question, []).append(t)
    kept = []
    for group in by_question.values():
        votes = Counter(n for t in group for n in set(t.answer))
        vote = {n for n, c in votes.items() if c > len(group) / 2}
        for t in group:
            a = set(t.answer)
            if vote and len(a & vote) / len(a | vote) >= 0.5:
                kept.append(t)
    return kept


def build_records(
    trajectories: Iterable[Trajectory],
    schema: Schema,
    template: ChatTemplate,
    tokenizer: TextTokenizer,
    options: SFTOptions,
) -> Iterator[SFTRecord]:
    """Filter, render and tokenize; ``options.counts`` tallies what was kept and why not."""
    counts = options.counts
    trajs = []
    for t in trajectories:
        counts["read"] += 1
        if options.drop_errored and t.stop_reason == "error":
            counts["dropped_errored"] += 1
        elif options.drop_empty and not t.answer:
            counts["dropped_empty"] += 1
        else:
            trajs.append(t)
    if options.agreement:
        before = len(trajs)
        trajs = agreeing(trajs)
        counts["dropped_disagreeing"] += before - len(trajs)
    for t in trajs:
        config = ToolConfig(**(t.config.get("tools") or {}))
        tools = tool_specs(schema, config, answer_tools=True)
        messages = [Message.from_dict(m) for m in t.messages]
        if options.prompt is not None and messages and messages[0].role == "system":
            steps = int(t.config.get("max_steps", 20))
            messages[0] = Message("system", system_prompt(schema, config, steps, options.prompt))
        trained = None if options.train_failed_calls else _ok_turns(t, messages)
        ids, mask = encode(rendered_parts(template, messages, tools, trained), tokenizer)
        if options.max_tokens and len(ids) > options.max_tokens:
            counts["dropped_too_long"] += 1
            continue
        if not any(mask):
            counts["dropped_nothing_to_train"] += 1
            continue
        counts["kept"] += 1
        counts["tokens"] += len(ids)
        counts["trained_tokens"] += sum(mask)
        yield SFTRecord(t.id, t.question_id, t.synthetic, ids, mask)


def _ok_turns(t: Trajectory, messages: Sequence[Message]) -> set[int]:
    """Indices of assistant messages all of whose calls succeeded."""
    failed = {c.id for s in t.steps for c in s.tool_calls if not c.ok}
    return {
        i
        for i, m in enumerate(messages)
        if m.role == "assistant" and not any(c.id in failed for c in m.tool_calls)
    }


def write_sft(
    paths: Sequence[str | Path],
    out: str | Path,
    schema: Schema,
    template: ChatTemplate,
    tokenizer: TextTokenizer,
    options: SFTOptions,
    *,
    base: str = "",
) -> dict[str, Any]:
    """Write ``out`` (JSONL records) and ``out.meta.json``; returns the meta."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    trajectories = [t for f in trajectory_files(paths) for t in read_trajectories(f)]
    prompts = Counter(t.config.get("prompt", "full") for t in trajectories)
    tool_sets = Counter(
        json.dumps(ToolConfig(**(t.config.get("tools") or {})).to_dict(), sort_keys=True)
        for t in trajectories
    )
    # Trajectories whose observations carried ark-guided's hints teach a student to
    # follow them; `--adapter` then runs ark-guided by default.
    hinted = Counter(
        bool(t.config.get("hints")) or t.config.get("strategy") == "ark-guided"
        for t in trajectories
    )
    lengths = []
    with atomic_writer(out) as f:  # a link planted at the output is replaced, not followed
        for rec in build_records(trajectories, schema, template, tokenizer, options):
            lengths.append(len(rec.input_ids))
            f.write(json.dumps(rec.to_dict()) + "\n")
    lengths.sort()
    meta = {
        "base": base,
        "template_sha256": hashlib.sha256(template.source.encode()).hexdigest(),
        "prompt": options.prompt or (prompts.most_common(1)[0][0] if prompts else "full"),
        # The tool options the student learns to call (e.g. a hop over a set); `--adapter`
        # runs the agents with them.
        "tools": json.loads(tool_sets.most_common(1)[0][0]) if tool_sets else {},
        "hints": hinted.most_common(1)[0][0] if hinted else False,
        "counts": dict(options.counts),
        "tokens_p50": lengths[len(lengths) // 2] if lengths else 0,
        "tokens_max": lengths[-1] if lengths else 0,
        "options": {
            "drop_errored": options.drop_errored,
            "drop_empty": options.drop_empty,
            "agreement": options.agreement,
            "train_failed_calls": options.train_failed_calls,
            "max_tokens": options.max_tokens,
        },
    }
    meta_path(out).write_text(json.dumps(meta, indent=2), encoding="utf-8")
    return meta


def meta_path(sft: str | Path) -> Path:
    sft = Path(sft)
    return sft.with_name(sft.name + ".meta.json")


def read_sft(path: str | Path) -> Iterator[dict[str, Any]]:
    """Records of an SFT file; a bad line is an error naming file and line."""
    path = Path(path)
    with path.open(encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                if len(rec["input_ids"]) != len(rec["mask"]):
                    raise ValueError("input_ids and mask differ in length")
            except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
                raise ArkError(f"{path}:{lineno}: not an SFT record ({exc})") from exc
            yield rec
