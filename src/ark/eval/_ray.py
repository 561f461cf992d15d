"""Scale-out on Ray: the queries of a run spread over a cluster's workers.

``RayMethod`` is a :class:`Method` like any other, so the runner and its run store are
unchanged: the driver alone appends each record (fsynced) as soon as a query's answer
comes back, resumes after a kill, and shows progress. Each worker is a Ray actor that
builds the method once from a :class:`MethodSpec` — it opens the memory-mapped index
(a path every node can read) and its own model client — and then answers queries,
``per_worker`` at a time. When a worker dies mid-query (killed, out of memory, its node
lost) the query is retried on another worker, and a replacement worker is started;
a query is recorded once, after the attempt that returned.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ark.errors import ArkError
from ark.eval._methods import Method, MethodOutput

INSTALL_HINT = "scale-out needs Ray: pip install 'ark-retriever[ray]'"


@dataclass(frozen=True)
class MethodSpec:
    """Everything a worker needs to build the method itself (sent by pickle).

    ``llm`` holds ``make_chat_model`` keyword arguments (model, base_url, timeouts);
    ``retriever`` the :class:`ark.retrieval.Retriever` ones (n_agents, max_steps, seed...).
    """

    method: str  # ark | bm25 | dense
    index: str
    llm: dict[str, Any] = field(default_factory=dict)
    llm_cache: str | None = None
    retriever: dict[str, Any] = field(default_factory=dict)
    dense_model: str | None = None

    def build(self) -> Method:
        from ark.index import open_index

        index = open_index(self.index)
        if self.method == "bm25":
            from ark.eval._methods import BM25Method

            return BM25Method(index)
        if self.method == "dense":
            from ark.eval._methods import DenseMethod
            from ark.index import DenseEncoder, open_dense

            encoder = DenseEncoder(self.dense_model)
            return DenseMethod(open_dense(index, encoder.name), encoder)
        if self.method != "ark":
            raise ArkError(f"unknown method {self.method!r}")
        from ark.eval._methods import RetrieverMethod
        from ark.llm import make_chat_model, with_llm_cache
        from ark.retrieval import Retriever

        llm = with_llm_cache(make_chat_model(**self.llm), self.llm_cache)
        return RetrieverMethod(Retriever(index, llm, **self.retriever))


class QueryWorker:
    """One Ray actor: the method built once, then queries answered concurrently."""

    def __init__(self, spec: MethodSpec) -> None:
        self.method = spec.build()

    def info(self) -> dict[str, Any]:
        import ray

        retriever = getattr(self.method, "retriever", None)
        encoder = getattr(self.method, "encoder", None)  # the dense baseline's
        model = retriever.llm.name if retriever is not None else getattr(encoder, "name", None)
        return {"pid": os.getpid(), "node": ray.get_runtime_context().get_node_id(), "model": model}

    async def run(self, question_id: str, question: str) -> MethodOutput:
        try:
            return await self.method(question_id, question)
        except Exception as exc:  # a method bug is this query's failure, not the worker's
            return MethodOutput(ranking=[], error=f"{type(exc).__name__}: {exc}")


RetryFn = Callable[[str, int, str], None]


class RayMethod:
    """A method whose queries run on Ray workers; use as a context manager.

    Connects to ``address`` (``auto``, ``HOST:6379`` or ``ray://HOST:10001``), or starts
    a local cluster when there is none and Ray is not initialised already. ``workers``
    defaults to the cluster's CPUs divided by ``worker_cpus``.
    """

    def __init__(
        self,
        spec: MethodSpec,
        *,
        address: str | None = None,
        workers: int | None = None,
        per_worker: int = 1,
        worker_cpus: float = 1.0,
        max_attempts: int = 3,
        on_retry: RetryFn | None = None,
    ) -> None:
        try:
            import ray
        except ImportError as exc:
            raise ArkError(INSTALL_HINT) from exc
        self._ray = ray
        self.name = spec.method
        self.spec = spec
        self.per_worker = max(1, per_worker)
        self.max_attempts = max(1, max_attempts)
        self.on_retry = on_retry
        self.retries = 0
        self._started_ray = False
        if not ray.is_initialized():
            try:
                ray.init(
                    address=address,
                    include_dashboard=False,
                    logging_level=logging.WARNING,
                    configure_logging=True,
                )
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise ArkError(f"cannot connect to a Ray cluster at {address}: {exc}") from exc
            self._started_ray = True
        n = workers or max(1, int(ray.cluster_resources().get("CPU", 1) // worker_cpus))
        self._actor_cls = ray.remote(num_cpus=worker_cpus, max_concurrency=self.per_worker)(
            QueryWorker
        )
        self._alive: dict[int, Any] = {}
        self._next = 0
        self._free: asyncio.Queue[int] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        for _ in range(n):
            self._spawn()
        try:  # fail fast: a worker that cannot open the index or the model says why now
            self.worker_info = ray.get([a.info.remote() for a in self._alive.values()])
        except ray.exceptions.RayError as exc:
            self.close()
            raise ArkError(f"a Ray worker could not start: {exc}") from exc

    @property
    def workers(self) -> int:
        return len(self._alive)

    @property
    def slots(self) -> int:
        """Queries in flight at once: what the runner's concurrency should be."""
        return self.workers * self.per_worker

    def actors(self) -> list[Any]:
        return list(self._alive.values())

    def _spawn(self) -> int:
        number = self._next
        self._next += 1
        self._alive[number] = self._actor_cls.remote(self.spec)
        if self._free is not None:
            for _ in range(self.per_worker):
                self._free.put_nowait(number)
        return number

    def _queue(self) -> asyncio.Queue[int]:
        loop = asyncio.get_running_loop()
        if self._free is None or self._loop is not loop:  # made in the running loop
            self._loop = loop
            self._free = asyncio.Queue()
            for number in self._alive:
                for _ in range(self.per_worker):
                    self._free.put_nowait(number)
        return self._free

    def _lost(self, number: int) -> None:
        """Replace a dead worker once (its other in-flight queries report it too)."""
        actor = self._alive.pop(number, None)
        if actor is None:
            return
        with contextlib.suppress(Exception):  # already gone
            self._ray.kill(actor, no_restart=True)
        self._spawn()

    async def __call__(self, question_id: str, question: str) -> MethodOutput:
        ray = self._ray
        free = self._queue()
        attempts = 0
        while True:
            number = await free.get()
            actor = self._alive.get(number)
            if actor is None:  # a slot of a worker that died
                continue
            attempts += 1
            try:
                out: MethodOutput = await actor.run.remote(question_id, question)
            except (ray.exceptions.RayActorError, ray.exceptions.WorkerCrashedError) as exc:
                self._lost(number)
                self.retries += 1
                reason = str(exc).splitlines()[0][:200]
                if attempts >= self.max_attempts:
                    raise ArkError(
                        f"{attempts} Ray workers died while running query {question_id}: {reason}"
                    ) from exc
                if self.on_retry:
                    self.on_retry(question_id, attempts, reason)
                continue
            except BaseException:
                free.put_nowait(number)
                raise
            free.put_nowait(number)
            return out

    def close(self) -> None:
        for actor in self._alive.values():
            with contextlib.suppress(Exception):
                self._ray.kill(actor, no_restart=True)
        self._alive.clear()
        if self._started_ray:
            self._ray.shutdown()
            self._started_ray = False

    def __enter__(self) -> RayMethod:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
