"""The internals the benchmarks measure and the tests check, named in one place.

A benchmark that times a decoder's draft, scores the reading's chain table or probes
the answer step's prompt needs parts below the public API; so does a test that pins a
private limit, a prompt's text or a helper's edge cases. They are re-exported here, so
that ``benchmarks/`` and ``tests/`` import only public modules (the import contract
``private`` in ``pyproject.toml`` covers ``benchmarks/``, and
``tests/test_import_circles.py`` both folders) and a reader sees in one file which
internals a measurement or a test depends on. A module is exported whole (``*_module``
or its package's name before its own, as ``index_verify``) where a test patches one of
its attributes. Nothing here is stable API: a name moves with the code it measures.
This module sits above every other layer (the CLI's internals included) and nothing in
``ark`` imports it.
"""

from __future__ import annotations

import ark.answer._write as answer_write
import ark.index._bm25 as index_bm25
import ark.index._encoder as linking_encoders
import ark.index._kernels as index_kernels
import ark.index._store as index_store
import ark.index._update as index_update
import ark.index._verify as index_verify
import ark.ingest._documents as ingest_documents
import ark.llm._openai as llm_openai
import ark.llm.local._build as local_build
import ark.llm.local._kv_state as local_kv_state
import ark.llm.local._model as local_model
import ark.session._session as session_module
import ark.strategies._protocol as strategy_registry
import ark.strategies.guided._agent as guided_agent_module
import ark.strategies.guided.hints._chain as hints_chain
import ark.strategies.guided.hints._documents as hints_documents
import ark.strategies.guided.plans._run as plans_run
import ark.tools._phrases as tools_phrases
from ark._coerce import as_int
from ark._files import atomic_writer, file_mode, open_append, write_atomic
from ark._lock import RunLock
from ark._safe import dumps as safe_dumps
from ark.answer._steps import (
    LOOKUP_SCHEMA,
    LOOKUP_SYSTEM,
    MAX_LOOKUP_ANSWER,
    MAX_LOOKUPS,
    PLAN_SYSTEM,
    chained,
    fill,
    plan_schema,
    rank_for,
)
from ark.cli._agent_cmds import (
    DEMO_QUESTION,
    LOCAL_DEFAULTS,
    adapter_strategy,
    fitting_defaults,
)
from ark.cli._agent_cmds import _fit_demo_plans as fit_demo_plans
from ark.cli._agent_cmds import _live_printer as live_printer
from ark.cli._graph_cmds import INFO_RELATIONS
from ark.cli._ingest_cmds import default_extractor
from ark.describe._describe import (
    EXAMPLE_ALIASES,
    EXAMPLE_DESCRIPTION,
    WORDS_SYSTEM,
    WORK_FILE,
    rival_relations,
    rival_words,
    words_of_phrase,
)
from ark.describe._describe import SYSTEM as DESCRIBE_SYSTEM
from ark.distill._paths import PathSampler
from ark.distill._questions import RelationStep, chain_question, intersection_question
from ark.distill._wordclass import read_label
from ark.eval._evaluation import _phrase_encoder_record as phrase_encoder_record
from ark.eval._lock import LOCK_FILE
from ark.eval._runstore import config_differences
from ark.graph._graph import MAX_NODES, MAX_RELATIONS, check_limits
from ark.graph._graphrag import MAX_RELATION_CHARS, relation_phrase
from ark.graph._schema import LISTED_NODE_TYPES
from ark.index._dirs import update_lock
from ark.index._params import bm25_problem, token_pattern_problem
from ark.index._scoring import METHODS, idf, idf_one, tfc, weights
from ark.index._seg_bm25 import SegmentedBM25
from ark.index._seg_stats import Stats, delta_index, idf_of
from ark.index._store import _descriptors as index_descriptors
from ark.index._store import remove_stale_builds, write_index
from ark.index._sync import plan_difference
from ark.index._verify import sample_problems
from ark.ingest._chunks import MAX_WORD, token_spans
from ark.ingest._fast import PAIR_SPAN
from ark.ingest._markup import is_markdown, markdown_prose
from ark.ingest._work import EXTRACTIONS, WorkDir
from ark.llm._cache import request_key
from ark.llm._openai import OpenAIChatModel
from ark.llm._openai import _completion as openai_completion
from ark.llm.local._batched import _profile as batch_profile
from ark.llm.local._batched import _Request as BatchRequest
from ark.llm.local._build import build_features, cpu_flags, missing_instructions
from ark.llm.local._chat_format import parse_tool_calls
from ark.llm.local._kv_disk import MAGIC, PromptStateStore
from ark.llm.local._lazy_grammar import LazyGrammarSampler
from ark.llm.local._lookup import lookup_draft
from ark.llm.local._model import MAX_DRAFT, call_schema, lookup_setting, prompt_segments
from ark.llm.local._replies import ReplyTokens, reply_tokens, splice
from ark.llm.local._skeleton import SchemaSkeleton, ToolCallSkeleton, predicted_text
from ark.llm.local._states import StateCache, common_prefix
from ark.reading._chains import MAX_HOPS, label_mentions, runner_ups, step_table, word_scores
from ark.reading._entities import FUZZY
from ark.reading._mediators import mediator_steps
from ark.serve._answer import AnswerService
from ark.serve.viewer._data import _trajectory as viewer_trajectory
from ark.session._session import MAX_OBSERVATION_CHARS
from ark.strategies.ark._agent import LAST_STEP_NOTE
from ark.strategies.ark._prompt import (
    PROMPT_VARIANTS,
    short_system_prompt,
    worked_example,
)
from ark.strategies.ark._prompt import _example_relation as example_relation
from ark.strategies.guided._agent import FINISH_READ_NOTE
from ark.strategies.guided.hints._documents import KINDS as DOCUMENT_HINT_KINDS
from ark.strategies.guided.hints._documents import named_in, titled_in
from ark.strategies.guided.hints._lines import KINDS as LINE_HINT_KINDS
from ark.strategies.guided.hints._lines import (
    after_add,
    after_intersection,
    after_neighborhood,
    chain_hint,
    mentioned_relations,
    named_relations,
    onward_relations,
)
from ark.tools._phrases import (
    EMBEDDING_MARGIN,
    EMBEDDING_THRESHOLD,
    EMBEDDINGS_DIR,
    MAX_MATCHED,
    PACKAGED_ENCODER,
    RelationPhrases,
    phrase_encoder_name,
)
from ark.words import SPELLED

__all__ = [
    "DEMO_QUESTION",
    "DESCRIBE_SYSTEM",
    "DOCUMENT_HINT_KINDS",
    "EMBEDDINGS_DIR",
    "EMBEDDING_MARGIN",
    "EMBEDDING_THRESHOLD",
    "EXAMPLE_ALIASES",
    "EXAMPLE_DESCRIPTION",
    "EXTRACTIONS",
    "FINISH_READ_NOTE",
    "FUZZY",
    "INFO_RELATIONS",
    "LAST_STEP_NOTE",
    "LINE_HINT_KINDS",
    "LISTED_NODE_TYPES",
    "LOCAL_DEFAULTS",
    "LOCK_FILE",
    "LOOKUP_SCHEMA",
    "LOOKUP_SYSTEM",
    "MAGIC",
    "MAX_DRAFT",
    "MAX_HOPS",
    "MAX_LOOKUPS",
    "MAX_LOOKUP_ANSWER",
    "MAX_MATCHED",
    "MAX_NODES",
    "MAX_OBSERVATION_CHARS",
    "MAX_RELATIONS",
    "MAX_RELATION_CHARS",
    "MAX_WORD",
    "METHODS",
    "PACKAGED_ENCODER",
    "PAIR_SPAN",
    "PLAN_SYSTEM",
    "PROMPT_VARIANTS",
    "SPELLED",
    "WORDS_SYSTEM",
    "WORK_FILE",
    "AnswerService",
    "BatchRequest",
    "LazyGrammarSampler",
    "OpenAIChatModel",
    "PathSampler",
    "PromptStateStore",
    "RelationPhrases",
    "RelationStep",
    "ReplyTokens",
    "RunLock",
    "SchemaSkeleton",
    "SegmentedBM25",
    "StateCache",
    "Stats",
    "ToolCallSkeleton",
    "WorkDir",
    "adapter_strategy",
    "after_add",
    "after_intersection",
    "after_neighborhood",
    "answer_write",
    "as_int",
    "atomic_writer",
    "batch_profile",
    "bm25_problem",
    "build_features",
    "call_schema",
    "chain_hint",
    "chain_question",
    "chained",
    "check_limits",
    "common_prefix",
    "config_differences",
    "cpu_flags",
    "default_extractor",
    "delta_index",
    "example_relation",
    "file_mode",
    "fill",
    "fit_demo_plans",
    "fitting_defaults",
    "guided_agent_module",
    "hints_chain",
    "hints_documents",
    "idf",
    "idf_of",
    "idf_one",
    "index_bm25",
    "index_descriptors",
    "index_kernels",
    "index_store",
    "index_update",
    "index_verify",
    "ingest_documents",
    "intersection_question",
    "is_markdown",
    "label_mentions",
    "linking_encoders",
    "live_printer",
    "llm_openai",
    "local_build",
    "local_drafters",
    "local_kv_state",
    "local_model",
    "lookup_draft",
    "lookup_setting",
    "markdown_prose",
    "mediator_steps",
    "mentioned_relations",
    "missing_instructions",
    "named_in",
    "named_relations",
    "onward_relations",
    "open_append",
    "openai_completion",
    "parse_tool_calls",
    "phrase_encoder_name",
    "phrase_encoder_record",
    "plan_difference",
    "plan_schema",
    "plans_run",
    "predicted_text",
    "prompt_segments",
    "rank_for",
    "read_label",
    "relation_phrase",
    "remove_stale_builds",
    "reply_tokens",
    "request_key",
    "rival_relations",
    "rival_words",
    "runner_ups",
    "safe_dumps",
    "sample_problems",
    "session_module",
    "short_system_prompt",
    "splice",
    "step_table",
    "strategy_registry",
    "tfc",
    "titled_in",
    "token_pattern_problem",
    "token_spans",
    "tools_phrases",
    "update_lock",
    "viewer_trajectory",
    "weights",
    "word_scores",
    "words_of_phrase",
    "worked_example",
    "write_atomic",
    "write_index",
]


def local_drafters():
    """The local decoder's two drafters and its bound on forced tokens:
    ``(lookup_draft, format_drafter, MAX_FORCED)``, as the latency benchmark takes them."""
    from ark.llm.local._lookup import MAX_FORCED, lookup_draft
    from ark.llm.local._skeleton import format_drafter

    return lookup_draft, format_drafter, MAX_FORCED
