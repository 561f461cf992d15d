"""The evaluation API: everything that defines a run as one object, and one call.

``ark eval`` parses its options into an :class:`Evaluation` and prints what
:meth:`Evaluation.run` returns; ``benchmarks/bench_quality.py`` builds one per
question set; a library user does either, or calls :func:`evaluate`. The object
opens the index, loads and samples the dataset, builds the method (ARK's retriever
with any registered strategy, a baseline, or the same spread over Ray workers),
writes the run's config, and hands all of it to the one resumable runner
(:func:`~ark.eval.run_queries`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from ark import datasets
from ark._safe import redact_url
from ark.answer import DEFAULT_WRITER, writer_named
from ark.cost import PriceTable
from ark.errors import ArkError
from ark.eval._answering import ANSWER_PASSAGES, AnsweringMethod
from ark.eval._methods import BM25Method, DenseMethod, Method, RetrieverMethod
from ark.eval._runner import ProgressFn, run_queries
from ark.eval._runstore import RunStore
from ark.graph import passage_ids
from ark.index import Index, linking_encoder, open_index
from ark.llm import ChatModel, ModelSettings, with_llm_cache
from ark.retrieval import MAX_LINKED, Retriever
from ark.strategies import (
    EventHandler,
    StrategyFactory,
    resolve_strategy,
    strategy_info,
    strategy_names,
)
from ark.strategies.guided.plans import DEFAULT_THRESHOLD
from ark.tools import ToolConfig

METHODS = ("ark", "bm25", "dense")
MODES = ("strict", "stark")


@dataclass(frozen=True)
class RaySettings:
    """Spread the queries over a Ray cluster's workers (the ``[ray]`` extra)."""

    #: ``auto``, ``HOST:6379`` or ``ray://HOST:10001``; None: a local cluster.
    address: str | None = None
    #: Workers to start (None: the cluster's CPUs).
    workers: int | None = None


@dataclass(frozen=True)
class Evaluation:
    """One run of ``method`` over a dataset, scored (the options of ``ark eval``).

    Error messages name the settings as ``ark eval`` spells its options.
    """

    #: ``metaqa:N-hop``, ``stark:amazon|mag|prime``, ``jsonl:PATH``, or a question set
    #: over documents: ``musique:FILE``, ``hotpotqa:FILE``.
    dataset: str
    #: The index directory, or an index already open (recorded by the path it was
    #: opened from).
    index: Index | str | Path
    #: The run directory (``results.jsonl``, ``trajectories.jsonl``, ``summary.json``).
    out: str | Path
    split: str | None = None  # None: dev for MetaQA, test for STaRK
    limit: int | None = None  # a deterministic sample of this many queries
    sample_seed: int = 0
    method: str = "ark"  # ark | bm25 | dense
    #: A registered strategy name or a factory (None: ark, or what the adapter was
    #: trained for).
    strategy: str | StrategyFactory | None = None
    agents: int | None = None  # None: the strategy's default
    max_steps: int = 20
    fusion: str = "vote"
    temperature: float = 0.7
    tools: ToolConfig = field(default_factory=ToolConfig)
    prompt: str | None = None  # None: the adapter's variant, else "full"
    seed: int | None = 0
    #: The chat model for ``ark``; ``model.model`` is the encoder for ``dense``.
    model: ModelSettings = field(default_factory=ModelSettings)
    #: A LoRA adapter (``ark distill export``) for the local model; its prompt
    #: variant, tools and strategy come with it.
    adapter: str | Path | None = None
    mode: str = "strict"  # strict | stark (STaRK's evaluator's fill-in)
    data_dir: str | Path | None = None
    candidate_types: list[str] | None = None  # None: the dataset's default
    concurrency: int = 1  # queries at once (with Ray: per worker)
    prices: PriceTable | None = None
    ray: RaySettings | None = None
    #: More settings to record in the run's config (compared on resume like the rest).
    extra_config: Mapping[str, Any] = field(default_factory=dict)
    #: After retrieval, the model writes an answer from what was retrieved (``ark.answer``),
    #: scored by EM and F1 on questions with gold answer strings (MuSiQue, HotpotQA).
    #: A baseline answers from its first 5 passages (BM25's: "naive RAG").
    answer: bool = False
    #: How the answer is written (``ark.answer.WRITERS``): in ``steps`` (lookups of one
    #: fact each; the default) or ``one`` call over what was retrieved. Recorded in the
    #: config only when not ``one``, so a run made before the choice existed (written
    #: in one call) resumes only with ``one``; a run that recorded it as
    #: ``answer_reader`` (its name before) resumes as if it said ``answer_writer``.
    answer_writer: str = DEFAULT_WRITER
    #: Over documents, the passages linked to the lead passage that a result lists
    #: (:mod:`ark.retrieval._passages`); None: the method's default (ark: 3, a baseline:
    #: 0, its own list); 0: none.
    linked_passages: int | None = None
    #: ``ark-guided`` runs a plan without the model at this fitted confidence
    #: (:mod:`ark.strategies.guided.plans`); None: the model runs every step.
    plan_threshold: float | None = DEFAULT_THRESHOLD

    def check(self) -> None:
        """Refuse impossible settings before anything is opened or written."""
        if self.method not in METHODS:
            raise ArkError(f"unknown --method {self.method!r}; use ark, bm25 or dense")
        if self.mode not in MODES:
            raise ArkError(f"unknown --mode {self.mode!r}; use strict or stark")
        if self.strategy is not None and self.method != "ark":
            name = resolve_strategy(self.strategy)[0]
            raise ArkError(
                f"--strategy {name} needs --method ark (a strategy is how the agents search)"
            )
        if isinstance(self.strategy, str) and self.strategy not in strategy_names():
            raise ArkError(
                f"unknown --strategy {self.strategy!r}; use {' or '.join(strategy_names())}"
            )
        writer_named(self.answer_writer)  # an unknown writer: answer_question's own error
        if self.linked_passages is not None and self.linked_passages < 0:
            raise ArkError(f"--linked-passages must be 0 or more, not {self.linked_passages}")
        if self.linked_passages and self.method == "dense":
            raise ArkError("--linked-passages is for --method ark or bm25")
        if self.ray is not None and (self.answer or datasets.is_document_dataset(self.dataset)):
            raise ArkError(
                "--ray does not run questions over documents or --answer yet; run without --ray"
            )

    def run(
        self,
        *,
        resume: bool = False,
        retry_failed: bool = True,
        llm: ChatModel | None = None,
        progress: ProgressFn | None = None,
        on_event: EventHandler | None = None,
        on_retry: Callable[[str, int, str], None] | None = None,
        status: Callable[[str], None] | None = None,
    ) -> dict[str, Any]:
        """Evaluate, writing the run to :attr:`out`; returns the summary.

        ``resume`` continues an interrupted run (same settings, or it is refused);
        ``retry_failed`` redoes its failed queries. ``llm``: a chat model to use instead
        of building one from :attr:`model` (your own backend, or
        ``ark.testing.ScriptedChatModel``). ``progress(done, total)`` after each query;
        ``on_event`` for each agent's tool call; ``on_retry(question_id, attempt, why)``
        when a Ray worker died; ``status`` for a line of news (Ray starting).
        """
        self.check()
        ark = self.method == "ark"
        from ark.strategies import adapter_settings  # the adapter's recorded settings

        student = adapter_settings(self.adapter if ark else None, self.model.base_url, self.tools)
        strategy = self.strategy or student.strategy or "ark"
        name, factory = resolve_strategy(strategy)
        agents = _default_agents(strategy, factory) if self.agents is None else self.agents
        prompt = self.prompt or student.prompt
        if isinstance(self.index, Index):
            index, index_path = self.index, str(self.index.path)
        else:
            index, index_path = open_index(self.index), str(Path(self.index).resolve())
        split = self.split or datasets.default_split(self.dataset)
        data_dir = Path(self.data_dir) if self.data_dir is not None else None
        queries, default_candidates = datasets.load_dataset(self.dataset, index, split, data_dir)
        if self.limit is not None:
            queries = datasets.sample(queries, self.limit, self.sample_seed)
        if not self.answer and any(q.by_answer for q in queries):
            raise ArkError(
                f"--dataset {self.dataset}: its questions name no supporting passages, so "
                "only a written answer can be scored: add --answer"
            )
        candidate_types = self.candidate_types or default_candidates
        candidates = candidate_mask(index, candidate_types)
        model = self.model
        if student.llm_kwargs:
            model = _with_options(model, student.llm_kwargs)
        retriever_kwargs = {
            "n_agents": agents,
            "max_steps": self.max_steps,
            "temperature": self.temperature,
            "fusion": self.fusion,
            "tools": student.tools,
            "seed": self.seed,
            "prompt": prompt,
            "plan_threshold": self.plan_threshold,
        }
        if self.linked_passages is not None:
            retriever_kwargs["linked_passages"] = self.linked_passages
        ray_runner = None
        try:
            if self.ray is not None:
                if llm is not None:
                    raise ArkError("a model object cannot travel to Ray workers; pass settings")
                from ark.eval._ray import MethodSpec, RayMethod

                spec = MethodSpec(
                    method=self.method,
                    index=str(Path(index.path).resolve()),
                    llm=model.kwargs(),
                    llm_cache=str(Path(model.llm_cache).resolve()) if model.llm_cache else None,
                    retriever={**retriever_kwargs, "strategy": strategy},
                    dense_model=model.model,
                )
                if status:
                    status("Starting Ray workers …")
                method: Method = RayMethod(
                    spec,
                    address=self.ray.address,
                    workers=self.ray.workers,
                    per_worker=self.concurrency,
                    on_retry=on_retry,
                )
                ray_runner = method
                model_name = ray_runner.worker_info[0].get("model")
            else:
                method, model_name = self._local_method(
                    index, llm, model, strategy, retriever_kwargs, on_event
                )
            answer_config: dict[str, Any] = {}
            if self.answer:
                method, answer_config = self._answering(method, index, llm, model)
            config = {
                "dataset": self.dataset,
                "index": index_path,
                "split": split,
                "limit": self.limit,
                "sample_seed": self.sample_seed,
                "method": self.method,
                "mode": self.mode,
                "candidate_types": candidate_types,
                **(
                    {
                        "strategy": name,
                        "agents": agents,
                        "max_steps": self.max_steps,
                        "fusion": self.fusion,
                        "temperature": self.temperature,
                        "tools": student.tools.to_dict(),
                        "model": model_name,
                        "base_url": redact_url(model.base_url),
                        "seed": self.seed,
                        "adapter": str(Path(self.adapter).resolve()) if self.adapter else None,
                        "prompt": prompt,
                        # The question reading of ark-guided's hints: with the [dense]
                        # extra's encoder or labels and aliases only (dense="auto").
                        "linking_encoder": linking_encoder(),
                        # Plans run without the model at this confidence (ark-guided).
                        **(
                            {"plan_threshold": self.plan_threshold}
                            if self.plan_threshold is not None
                            else {}
                        ),
                        # The edge_type phrases' embedding stage on this graph (only
                        # where it is on: runs from before it existed compare equal).
                        **_phrase_encoder_record(student.tools, index),
                    }
                    if ark
                    else {"model": model_name}
                    if self.method == "dense"
                    else {}
                ),
                **answer_config,
                **(
                    {"linked_passages": self._linked(ark)}
                    if datasets.is_document_dataset(self.dataset)
                    else {}
                ),
                # over documents a baseline ranks the passage nodes alone
                **(
                    {"ranks": "passages"}
                    if not ark and datasets.is_document_dataset(self.dataset)
                    else {}
                ),
                "concurrency": self.concurrency,
                "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "llm_cache": str(model.llm_cache) if model.llm_cache else None,
                "prices": self.prices.to_dict() if self.prices else None,
                "ray": {"address": self.ray.address, "workers": ray_runner.workers}
                if ray_runner
                else None,
                **self.extra_config,
            }
            return asyncio.run(
                run_queries(
                    queries,
                    method,
                    RunStore(self.out),
                    config,
                    resume=resume,
                    concurrency=ray_runner.slots if ray_runner else self.concurrency,
                    mode=self.mode,
                    candidates=candidates,
                    n_nodes=index.graph.n_nodes,
                    progress=progress,
                    prices=self.prices,
                    retry_failed=retry_failed,
                )
            )
        finally:
            if ray_runner is not None:
                ray_runner.close()

    def _local_method(
        self,
        index: Index,
        llm: ChatModel | None,
        model: ModelSettings,
        strategy: str | StrategyFactory,
        retriever_kwargs: dict[str, Any],
        on_event: EventHandler | None,
    ) -> tuple[Method, str | None]:
        """The method in this process, and the model name its config records. Over
        documents the baselines rank passage nodes only."""
        passages = datasets.is_document_dataset(self.dataset)
        if self.method == "bm25":
            linked = self._linked(False) if passages else 0
            return BM25Method(index, passages_only=passages, linked=linked), None
        if self.method == "dense":
            from ark.index import DenseEncoder, open_dense

            encoder = DenseEncoder(model.model)
            dense = open_dense(index, encoder.name)
            rows = passage_ids(index.graph) if passages else None
            return DenseMethod(dense, encoder, passages=rows), encoder.name
        chat = with_llm_cache(llm, model.llm_cache) if llm is not None else model.build()
        retriever = Retriever(index, chat, strategy=strategy, on_event=on_event, **retriever_kwargs)
        return RetrieverMethod(retriever), chat.name

    def _linked(self, ark: bool) -> int:
        """How many linked passages the method lists (:attr:`linked_passages`)."""
        if self.linked_passages is not None:
            return self.linked_passages
        return MAX_LINKED if ark else 0

    def _answering(
        self, method: Method, index: Index, llm: ChatModel | None, model: ModelSettings
    ) -> tuple[Method, dict[str, Any]]:
        """``method`` followed by the answer step, and what the config records of it.
        An agent answers with its own model; a baseline with ``llm`` or the model
        :attr:`model` names (for ``dense``, whose ``--model`` is the encoder, the
        default chat model)."""
        writer = {"answer_writer": self.answer_writer} if self.answer_writer != "one" else {}
        if isinstance(method, RetrieverMethod):
            method.answer = True  # ark.answer.aanswer_question: the answer pipeline
            method.answer_writer = self.answer_writer
            return method, {"answer": True, "answer_model": method.retriever.llm.name, **writer}
        if llm is not None:
            chat = with_llm_cache(llm, model.llm_cache)
        else:
            settings = replace(model, model=None) if self.method == "dense" else model
            chat = settings.build()
        config = {
            "answer": True,
            "answer_model": chat.name,
            "answer_passages": ANSWER_PASSAGES,
            **writer,
        }
        answering = AnsweringMethod(method, chat, index, ANSWER_PASSAGES, self.answer_writer)
        return answering, config


def _phrase_encoder_record(tools: ToolConfig, index: Index) -> dict[str, str]:
    """``{"phrase_encoder": ...}`` when ``tools.phrase_encoder`` is ``"auto"`` and
    resolves to an encoder on ``index``'s graph (an explicit choice is in the tools
    config already); else nothing."""
    from ark.tools import recorded_phrase_encoder

    if tools.phrase_encoder != "auto":
        return {}
    # The tools' own test (GraphTools.open_relations), so the record says what they did.
    encoder = recorded_phrase_encoder("auto", listed=index.schema.lists_relations)
    return {"phrase_encoder": encoder} if encoder else {}


def evaluate(
    dataset: str,
    index: Index | str | Path,
    out: str | Path,
    *,
    resume: bool = False,
    retry_failed: bool = True,
    llm: ChatModel | None = None,
    progress: ProgressFn | None = None,
    on_event: EventHandler | None = None,
    **settings: Any,
) -> dict[str, Any]:
    """Evaluate on ``dataset`` over ``index`` into the run directory ``out``; returns the
    summary (``summary.json``). ``settings`` are :class:`Evaluation`'s fields
    (``method``, ``strategy``, ``agents``, ``limit``, ``model=ModelSettings(...)``...);
    the rest as :meth:`Evaluation.run`.

    >>> evaluate("metaqa:1-hop", "metaqa.idx", "runs/a", limit=30)  # doctest: +SKIP
    """
    run = Evaluation(dataset, index, out, **settings)
    return run.run(
        resume=resume, retry_failed=retry_failed, llm=llm, progress=progress, on_event=on_event
    )


def candidate_mask(index: Index, types: list[str] | None) -> np.ndarray | None:
    """The nodes a query is scored on: those of ``types`` (None: every node)."""
    if not types:
        return None
    ids = [index.graph.type_id(t) for t in types]
    if any(i is None for i in ids):
        raise ArkError(f"candidate type(s) {types} not in this index's node types")
    return np.isin(np.asarray(index.graph.node_type), ids)


def _default_agents(strategy: str | StrategyFactory, factory: StrategyFactory) -> int:
    if isinstance(strategy, str):
        return strategy_info(strategy).default_agents
    agents = getattr(factory, "default_agents", None)
    return agents if isinstance(agents, int) and agents > 0 else 1


def _with_options(model: ModelSettings, options: Mapping[str, Any]) -> ModelSettings:
    return replace(model, options={**model.options, **options})
