"""``ark ask`` and ``ark demo``: run the ARK agents on a question."""

from __future__ import annotations

import functools
import inspect
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from ark._safe import clean_text
from ark.answer import DEFAULT_WRITER, AnsweredRetrieval, answer_question, recited_note
from ark.cli._llm_opts import (
    LlmCacheOpt,
    ParallelOpt,
    PlanThresholdOpt,
    PriceInOpt,
    PriceOutOpt,
    PricesOpt,
    SeedOpt,
    cache_counters,
    cost_line,
    prices,
)
from ark.cli._output import console, err_console, esc, fail, print_json
from ark.cli._root import app
from ark.cost import PriceTable, query_cost
from ark.errors import ArkError
from ark.index import Index, build_index, open_index
from ark.profile import profile_line, query_profile
from ark.retrieval import RetrievalResult, Retriever, render_evidence, render_path
from ark.strategies import AgentEvent, strategy_info, strategy_names
from ark.strategies.guided.plans import DEFAULT_THRESHOLD, FIT_KEY, plan_model, threshold_setting
from ark.tools import written_arguments
from ark.trajectory import StepLog, write_trajectories

DEMO_QUESTION = "Which genres do the films directed by Robert Zemeckis belong to?"


def _cache_dir() -> Path:
    return Path(os.environ.get("ARK_CACHE_DIR", Path.home() / ".cache" / "ark"))


def _events(
    show: Callable[[AgentEvent], None] | None, steps: StepLog | None
) -> Callable[[AgentEvent], None] | None:
    """The agents' event handler: the live display, and the step log as it goes."""
    if steps is None:
        return show

    def handle(event: AgentEvent) -> None:
        steps.write(
            {
                "agent": event.agent,
                "step": event.step,
                "tool": event.tool,
                "arguments": event.arguments,
                "ok": event.ok,
                "summary": event.summary,
                "by": event.by,
            }
        )
        if show is not None:
            show(event)

    return handle


@contextmanager
def loading_model(
    model: str | None, base_url: str | None, *, quiet: bool, use_env: bool = True
) -> Iterator[None]:
    """Say that the local model is loading, and how long it took: it reads a gigabyte
    from disk, seconds on an idle machine and minutes when other work holds the cores,
    and nothing else is printed meanwhile."""
    from ark.llm import uses_local_model

    if quiet or not uses_local_model(model, base_url, use_env=use_env):
        yield
        return
    started = time.perf_counter()
    err_console.print("Loading the local model …", highlight=False)
    yield
    err_console.print(f"Loaded in {time.perf_counter() - started:.1f} s", highlight=False)


def _live_printer(n_agents: int) -> Any:
    colors = ["cyan", "magenta", "green", "yellow", "blue"]

    def show(event: AgentEvent) -> None:
        color = colors[event.agent % len(colors)]
        tag = f"[{color}]agent {event.agent + 1}[/]" if n_agents > 1 else "agent"
        mark = "" if event.ok else "[red]✗[/] "
        mark += "[dim](plan)[/] " if event.by == "plan" else ""
        args = esc(clean_text(written_arguments(event.arguments)))
        err_console.print(
            f"{tag} step {event.step + 1}: [bold]{esc(clean_text(event.tool))}[/]({args})"
            f" → {mark}{esc(clean_text(event.summary))}",
            highlight=False,
            soft_wrap=True,
        )

    return show


def _run(
    index: Index,
    question: str,
    opts: RunOptions,
    *,
    agents: int,
    max_steps: int,
    strategy: str,
    price_table: PriceTable | None,
    use_env: bool = True,
) -> RetrievalResult:
    from ark.llm import ModelSettings
    from ark.strategies import adapter_settings

    steps = None
    try:
        writer = opts.writer_name()
        student = adapter_settings(opts.adapter, opts.base_url)
        with loading_model(opts.model, opts.base_url, quiet=opts.as_json, use_env=use_env):
            llm = ModelSettings(
                model=opts.model,
                base_url=opts.base_url,
                request_timeout=opts.request_timeout,
                max_retries=opts.max_retries,
                parallel=opts.parallel,
                use_env=use_env,
                llm_cache=opts.llm_cache,
                options=student.llm_kwargs,
            ).build()
        show = None if opts.as_json else _live_printer(agents)
        if opts.save_trajectories is not None:
            steps = StepLog(opts.save_trajectories, question)
        retriever = Retriever(
            index,
            llm,
            strategy=strategy,
            n_agents=agents,
            max_steps=max_steps,
            temperature=opts.temperature,
            on_event=_events(show, steps),
            seed=opts.seed,
            prompt=student.prompt,
            tools=student.tools,
            plan_threshold=threshold_setting(opts.plan_threshold),
        )
        answered: AnsweredRetrieval | None = None
        if opts.answer:
            answered = answer_question(retriever, question, writer=writer)
            result = answered.retrieval
        else:
            result = retriever.retrieve(question)
    except ArkError as exc:
        fail(str(exc), as_json=opts.as_json, code=type(exc).__name__)
    except KeyboardInterrupt:
        if steps is not None:
            steps.close()
            err_console.print(
                f"interrupted: every step taken is in {esc(str(steps.path))}",
                highlight=False,
                soft_wrap=True,
            )
        raise typer.Exit(130) from None
    except Exception as exc:  # never a traceback: say what failed
        fail(f"{type(exc).__name__}: {exc}", as_json=opts.as_json, code="InternalError")
    cost = query_cost(result.trajectories, price_table)  # also fills each trajectory's cost
    if opts.save_trajectories is not None:
        path = opts.save_trajectories / "trajectories.jsonl"
        path = write_trajectories(path, result.trajectories)
        if steps is not None:
            steps.done()
        if not opts.as_json:
            err_console.print(f"Trajectories appended to {esc(str(path))}")
    if opts.as_json:
        whole = answered if answered is not None else result
        payload = whole.to_dict(index.graph, price_table)
        if counters := cache_counters(llm):
            payload["llm_cache"] = counters
        print_json(payload)
    else:
        _print_ranking(result, result.wall_s if answered is None else answered.wall_s)
        if opts.why:
            _print_evidence(result, index)
        if answered is not None:
            _print_answer(answered, index, opts.why)
        console.print(f"Cost: {cost_line(cost)}", markup=False)
        console.print(f"Time: {profile_line(query_profile(result.trajectories))}", markup=False)
    if result.failed:
        if not opts.as_json:
            err_console.print(
                f"[red]every agent failed:[/] {esc(str(result.errors[0]))}", soft_wrap=True
            )
        raise typer.Exit(1)
    return result


def _print_ranking(result: RetrievalResult, wall_s: float) -> None:
    title = f"Answer to: {esc(clean_text(result.question))}"
    table = Table("rank", "index", "name", "type", "votes", title=title)
    for rank, r in enumerate(result.ranking, start=1):
        table.add_row(str(rank), str(r.index), esc(clean_text(r.name)), esc(r.type), str(r.votes))
    console.print(table)
    stops = ", ".join(t.stop_reason for t in result.trajectories)
    steps = ", ".join(str(len(t.steps)) for t in result.trajectories)
    console.print(f"{wall_s:.1f} s; steps per agent: {steps}; stopped by: {stops}")


def _print_evidence(result: RetrievalResult, index: Index) -> None:
    """Under each answer, who added it and the recorded paths that reached it."""
    g = index.graph
    for rank, (r, ev) in enumerate(zip(result.ranking, result.evidence, strict=True), start=1):
        console.print(f"{rank}. [{r.index}] {clean_text(r.name)} ({r.type})", markup=False)
        for line in render_evidence(ev, g):
            console.print(f"   {clean_text(line)}", markup=False, highlight=False, soft_wrap=True)


def _print_answer(answered: AnsweredRetrieval, index: Index, why: bool) -> None:
    """The answer in words, each citation with its node (and, with ``--why``, the
    evidence paths behind it), and what the answer step cost."""
    a = answered.answer
    g = index.graph
    if a.answerable:
        console.print(f"Answer: {clean_text(a.text)}", markup=False, soft_wrap=True)
    else:
        said = f" (the model: {clean_text(a.text)})" if a.text else ""
        console.print(f"No answer: {a.reason}{said}", markup=False, soft_wrap=True)
    paths = answered.cited_paths()
    for c in a.citations:
        console.print(f"  cites [{c}] {clean_text(g.name(c))} ({g.type_name(c)})", markup=False)
        if why:
            for p in paths.get(c, [])[:2]:
                line = render_path(p, lambda n: clean_text(g.name(n)))
                console.print(f"    agent {p.agent + 1}: {line}", markup=False, soft_wrap=True)
    if note := recited_note(a.recited_from, a.citations):
        console.print(f"  {note}", markup=False)
    if a.dropped_citations:
        console.print(f"  ({a.dropped_citations} citation(s) of nodes not shown were dropped)")
    console.print(
        f"Answer step: {len(a.nodes)} node(s) read ({a.evidence_chars} chars), "
        f"{a.prompt_tokens} prompt + {a.completion_tokens} completion tokens, "
        f"{a.latency_s:.1f} s",
        markup=False,
    )


AgentsOpt = Annotated[int, typer.Option("--agents", help="Parallel agents (fused by vote).")]
OptionalAgentsOpt = Annotated[
    int | None,
    typer.Option(
        "--agents",
        help="Parallel agents (fused by vote); default 1 with the local model, else 3 for "
        "ark, 1 for graphsearch.",
        show_default=False,
    ),
]
StrategyOpt = Annotated[
    str | None,
    typer.Option(
        "--strategy",
        help="ark (the paper's agent; the default with a served model) | ark-guided (ark "
        "with hints and the hop over a set, for small models; the default with the local "
        "model, and with an --adapter trained on hinted trajectories) | graphsearch (six "
        "modules) | any strategy a package registers (entry point group ark.strategies).",
        show_default=False,
    ),
]


DemoStrategyOpt = Annotated[
    str,
    typer.Option(
        "--strategy",
        help="ark-guided (default here: the demo runs a small local model, which carries "
        "a chain past the first hop with its hints) | ark (the paper's agent) | graphsearch.",
    ),
]


def adapter_strategy(adapter: Path | None, base_url: str | None, as_json: bool = False) -> str:
    """The strategy a command runs when given no ``--strategy``: ark, or ark-guided for
    an adapter that learned from observations with its hints (``ark.hints``)."""
    from ark.strategies import adapter_settings

    if adapter is None:
        return "ark"
    try:
        return adapter_settings(adapter, base_url).strategy or "ark"
    except ArkError as exc:
        fail(str(exc), as_json=as_json, code=type(exc).__name__)


#: What ``ark ask`` and ``ark chat`` run with the local model when not told otherwise:
#: the guided strategy (hints, sure plans run without the model), one agent and the
#: demo's ten steps — the paper's ark with three agents and twenty steps is for a
#: served model (the small-models guide shows both).
LOCAL_DEFAULTS = ("ark-guided", 1, 10)
SERVED_MAX_STEPS = 20


def fitting_defaults(
    strategy: str | None,
    agents: int | None,
    max_steps: int | None,
    *,
    model: str | None,
    base_url: str | None,
    adapter: Path | None,
    as_json: bool = False,
) -> tuple[str, int, int]:
    """The strategy, agents and steps a command runs: as given; else, with the local
    model, :data:`LOCAL_DEFAULTS` (said in one line on stderr); else the paper's."""
    from ark.llm import uses_local_model

    local = uses_local_model(model, base_url)
    chosen = []
    if strategy is None:
        if adapter is None and local:
            strategy = LOCAL_DEFAULTS[0]
            chosen.append(f"--strategy {strategy}")
        else:
            strategy = adapter_strategy(adapter, base_url, as_json)
    if agents is None and local:
        agents = LOCAL_DEFAULTS[1]
        chosen.append(f"--agents {agents}")
    n_agents = resolve_agents(strategy, agents, as_json)
    if max_steps is None:
        max_steps = LOCAL_DEFAULTS[2] if local else SERVED_MAX_STEPS
        if local:
            chosen.append(f"--max-steps {max_steps}")
    if chosen and not as_json:
        err_console.print(
            f"With the local model: {' '.join(chosen)}, what a small model on a CPU answers "
            "with (a served model gets the paper's ark, 3 agents, 20 steps); give the "
            "options to choose otherwise.",
            highlight=False,
            soft_wrap=True,
        )
    return strategy, n_agents, max_steps


def resolve_agents(strategy: str, agents: int | None, as_json: bool = False) -> int:
    """The agent count: as given, else the registered strategy's default (any strategy
    of the registry: built in, ``register_strategy``, or an ``ark.strategies`` entry
    point); an unknown strategy fails before any work."""
    if strategy not in strategy_names():
        fail(
            f"unknown --strategy {strategy!r}; use {' or '.join(strategy_names())}",
            as_json=as_json,
        )
    try:
        default = strategy_info(strategy).default_agents
    except ArkError as exc:  # an installed strategy that fails to load
        fail(str(exc), as_json=as_json, code=type(exc).__name__)
    return default if agents is None else agents


StepsOpt = Annotated[int, typer.Option("--max-steps", help="Step budget per agent.")]
OptionalStepsOpt = Annotated[
    int | None,
    typer.Option(
        "--max-steps",
        help="Step budget per agent; default 10 with the local model, 20 with a served one.",
        show_default=False,
    ),
]
TempOpt = Annotated[float, typer.Option("--temperature", help="Sampling temperature.")]
ModelOpt = Annotated[
    str | None, typer.Option("--model", help="Model name (OpenAI-compatible server) or GGUF path.")
]
UrlOpt = Annotated[
    str | None,
    typer.Option("--base-url", help="OpenAI-compatible endpoint; default: the local model."),
]
SaveOpt = Annotated[
    Path | None,
    typer.Option("--save-trajectories", help="Append trajectories to DIR/trajectories.jsonl."),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]
WhyOpt = Annotated[
    bool,
    typer.Option(
        "--why",
        help="Under each answer: the agents that added it and the paths that reached it "
        "(the search that found the start, then each edge followed). --json always has them.",
    ),
]
AnswerOpt = Annotated[
    bool,
    typer.Option(
        "--answer",
        help="After retrieval, the model writes a short answer from the retrieved nodes' "
        "text (the ranking and its evidence passages), citing node indices, or says the "
        "evidence does not answer. --json adds an answer object.",
    ),
]
WriterOpt = Annotated[
    str,
    typer.Option(
        "--writer",
        help="How --answer writes: in lookups of one fact each, the question split "
        "first (steps, the default; a question of one fact falls back to one call), "
        "or one call over everything retrieved (one). GraphSearch's own answer is "
        "written in one call from its workflow's evidence.",
    ),
]
#: ``--reader``, the writer's name before it was called the writer (hidden; "reading"
#: is the linker's word for a question).
ReaderAliasOpt = Annotated[str | None, typer.Option("--reader", hidden=True)]


def writer_setting(writer: str, reader: str | None) -> str:
    """The answer writer ``--writer`` names, or the older ``--reader`` alias when it
    is given; the two naming different writers is refused."""
    if reader is None or reader == writer:
        return writer
    if writer != DEFAULT_WRITER:
        raise ArkError(
            f"--reader {reader} and --writer {writer} disagree; --reader is the old name "
            "of --writer: give --writer only"
        )
    return reader


TimeoutOpt = Annotated[
    float | None,
    typer.Option(
        "--request-timeout",
        min=0.1,
        help="Seconds one model call may take (default: 120 for a server, none locally).",
    ),
]
RetriesOpt = Annotated[
    int | None,
    typer.Option(
        "--max-retries",
        min=0,
        help="Retries of a failed model call (default: 4 for a server, 0 locally).",
    ),
]
AdapterOpt = Annotated[
    Path | None,
    typer.Option(
        "--adapter", help="A LoRA adapter (.gguf from `ark distill export`) for the local model."
    ),
]


@dataclass(frozen=True)
class RunOptions:
    """The options ``ark ask`` and ``ark demo`` share: how to reach the model, what to
    print and what to record. :func:`run_options` offers each field as an option of
    the command (in this order, with these defaults), so the two commands cannot drift
    apart in what they accept."""

    temperature: float = 0.7
    model: str | None = None
    base_url: str | None = None
    as_json: bool = False
    why: bool = False
    answer: bool = False
    writer: str = DEFAULT_WRITER
    reader: str | None = None  # --writer's old name (hidden)
    save_trajectories: Path | None = None
    llm_cache: Path | None = None
    seed: int = 0
    price_in: float | None = None
    price_out: float | None = None
    prices_file: Path | None = None
    request_timeout: float | None = None
    max_retries: int | None = None
    adapter: Path | None = None
    parallel: bool | None = None
    plan_threshold: float = DEFAULT_THRESHOLD

    def writer_name(self) -> str:
        """The answer writer (``--writer``, or its old name ``--reader``)."""
        return writer_setting(self.writer, self.reader)

    def price_table(self) -> PriceTable | None:
        """The prices of --price-in/--price-out/--prices; a bad prices file ends the
        command with its error."""
        try:
            return prices(self.price_in, self.price_out, self.prices_file)
        except ArkError as exc:
            fail(str(exc), as_json=self.as_json, code=type(exc).__name__)


#: Each :class:`RunOptions` field's command-line option.
_RUN_OPTION_TYPES: dict[str, Any] = {
    "temperature": TempOpt,
    "model": ModelOpt,
    "base_url": UrlOpt,
    "as_json": JsonOpt,
    "why": WhyOpt,
    "answer": AnswerOpt,
    "writer": WriterOpt,
    "reader": ReaderAliasOpt,
    "save_trajectories": SaveOpt,
    "llm_cache": LlmCacheOpt,
    "seed": SeedOpt,
    "price_in": PriceInOpt,
    "price_out": PriceOutOpt,
    "prices_file": PricesOpt,
    "request_timeout": TimeoutOpt,
    "max_retries": RetriesOpt,
    "adapter": AdapterOpt,
    "parallel": ParallelOpt,
    "plan_threshold": PlanThresholdOpt,
}


def run_options(
    *, without: tuple[str, ...] = ()
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Give a command whose last parameter is ``opts: RunOptions`` every
    :class:`RunOptions` field but ``without`` as an option of its own, after its other
    parameters; the command receives them gathered in ``opts``. Typer reads a
    command's options from its signature, so the shared ones are written into it."""

    def decorate(command: Callable[..., None]) -> Callable[..., None]:
        signature = inspect.signature(command, eval_str=True)
        *own, last = signature.parameters.values()
        if last.name != "opts":
            raise TypeError(f"{command.__name__}: the last parameter must be opts: RunOptions")
        shared = [
            inspect.Parameter(
                f.name,
                inspect.Parameter.KEYWORD_ONLY,
                default=f.default,
                annotation=_RUN_OPTION_TYPES[f.name],
            )
            for f in fields(RunOptions)
            if f.name not in without
        ]
        names = [p.name for p in shared]

        @functools.wraps(command)
        def with_options(**kwargs: Any) -> None:
            opts = RunOptions(**{name: kwargs.pop(name) for name in names})
            command(**kwargs, opts=opts)

        params = [*own, *shared]
        with_options.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
        with_options.__annotations__ = {p.name: p.annotation for p in params}
        return with_options

    return decorate


@app.command("ask")
@run_options()
def ask(
    index_dir: Annotated[Path, typer.Argument(help="Index directory.")],
    question: Annotated[str, typer.Argument(help="The question to retrieve evidence for.")],
    agents: OptionalAgentsOpt = None,
    strategy: StrategyOpt = None,
    max_steps: OptionalStepsOpt = None,
    *,
    opts: RunOptions,
) -> None:
    """Retrieve the nodes that answer QUESTION, showing each agent's steps live; with
    --answer, then an answer in words that cites them."""
    strategy, n_agents, max_steps = fitting_defaults(
        strategy,
        agents,
        max_steps,
        model=opts.model,
        base_url=opts.base_url,
        adapter=opts.adapter,
        as_json=opts.as_json,
    )
    try:
        index = open_index(index_dir)
    except ArkError as exc:
        fail(str(exc), as_json=opts.as_json, code=type(exc).__name__)
    price_table = opts.price_table()
    _run(
        index,
        question,
        opts,
        agents=n_agents,
        max_steps=max_steps,
        strategy=strategy,
        price_table=price_table,
    )


def _fit_demo_plans(index: Index, as_json: bool) -> None:
    """Fit the demo index's plan confidence, as `ark index fit-plans` does, so that
    ark-guided runs a sure plan without the model: once after the build, and again
    when the stored fit is stale."""
    from ark.distill import fit_plans

    if not as_json:
        err_console.print("Fitting the plan confidence on the graph's own synthetic questions …")
    try:
        fit_plans(index)
    except ArkError as exc:  # the demo still runs, the model at every step
        err_console.print(f"[yellow]The plan confidence was not fitted:[/] {esc(str(exc))}")


@app.command("demo")
@run_options(without=("save_trajectories",))
def demo(
    question: Annotated[str, typer.Argument(help="A question about movies.")] = DEMO_QUESTION,
    agents: AgentsOpt = 1,
    strategy: DemoStrategyOpt = "ark-guided",
    max_steps: StepsOpt = 10,
    *,
    opts: RunOptions,
) -> None:
    """Answer a movie question over the bundled MetaQA graph with the local model.

    No network unless ``--base-url`` is given: ``OPENAI_BASE_URL``, ``ARK_BASE_URL``
    and ``OPENAI_API_KEY`` do not send the demo to a server."""
    from importlib.resources import files

    resolve_agents(strategy, agents, opts.as_json)  # an unknown strategy fails before any work
    price_table = opts.price_table()

    target = _cache_dir() / "demo" / "metaqa.idx"
    try:
        index = open_index(target)
        # A fit another ARK made, whose features read otherwise, is refitted once.
        stale = FIT_KEY in index.described.fits and plan_model(index)[0] is None
    except ArkError:
        source = files("ark") / "data" / "metaqa_kb.txt.gz"
        if not opts.as_json:
            err_console.print(
                f"Building the demo index (MetaQA, CC BY 3.0) in {esc(str(target))} …"
            )
        index = build_index(Path(str(source)), target)
        stale = True
    if stale:
        _fit_demo_plans(index, opts.as_json)
        index = open_index(target)
    if not opts.as_json:
        err_console.print(f"Question: [bold]{esc(question)}[/]")
    _run(
        index,
        question,
        opts,
        agents=agents,
        max_steps=max_steps,
        strategy=strategy,
        price_table=price_table,
        use_env=False,
    )
