"""``ark ask`` and ``ark demo``: run the ARK agents on a question."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from ark.agent import DEFAULT_AGENTS, AgentEvent, RetrievalResult, Retriever
from ark.cli._app import app
from ark.cli._output import console, err_console, esc, fail, print_json
from ark.errors import ArkError
from ark.index import Index, build_index, open_index
from ark.trajectory import write_trajectories

DEMO_QUESTION = "Which genres do the films directed by Robert Zemeckis belong to?"


def _cache_dir() -> Path:
    return Path(os.environ.get("ARK_CACHE_DIR", Path.home() / ".cache" / "ark"))


def _format_args(arguments: dict[str, Any] | None) -> str:
    if arguments is None:
        return "<invalid arguments>"
    return ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in arguments.items())


def _live_printer(n_agents: int) -> Any:
    colors = ["cyan", "magenta", "green", "yellow", "blue"]

    def show(event: AgentEvent) -> None:
        color = colors[event.agent % len(colors)]
        tag = f"[{color}]agent {event.agent + 1}[/]" if n_agents > 1 else "agent"
        mark = "" if event.ok else "[red]✗[/] "
        args = esc(_format_args(event.arguments))
        err_console.print(
            f"{tag} step {event.step + 1}: [bold]{event.tool}[/]({args})"
            f" → {mark}{esc(event.summary)}",
            highlight=False,
            soft_wrap=True,
        )

    return show


def _run(
    index: Index,
    question: str,
    *,
    agents: int,
    max_steps: int,
    temperature: float,
    model: str | None,
    base_url: str | None,
    as_json: bool,
    save_trajectories: Path | None,
    strategy: str = "ark",
) -> RetrievalResult:
    from ark.llm import make_chat_model

    try:
        llm = make_chat_model(model=model, base_url=base_url)
        retriever = Retriever(
            index,
            llm,
            strategy=strategy,
            n_agents=agents,
            max_steps=max_steps,
            temperature=temperature,
            on_event=None if as_json else _live_printer(agents),
        )
        result = retriever.retrieve(question)
    except ArkError as exc:
        fail(str(exc), as_json=as_json, code=type(exc).__name__)
    if save_trajectories is not None:
        path = write_trajectories(save_trajectories / "trajectories.jsonl", result.trajectories)
        if not as_json:
            err_console.print(f"Trajectories appended to {esc(str(path))}")
    if as_json:
        print_json(
            {
                "ranking": [r.to_dict() for r in result.ranking],
                "trajectories": [t.to_dict() for t in result.trajectories],
                "wall_s": result.wall_s,
            }
        )
    else:
        _print_ranking(result)
    if result.failed:
        if not as_json:
            err_console.print(
                f"[red]every agent failed:[/] {esc(str(result.errors[0]))}", soft_wrap=True
            )
        raise typer.Exit(1)
    return result


def _print_ranking(result: RetrievalResult) -> None:
    table = Table("rank", "index", "name", "type", "votes", title=f"Answer to: {esc(result.query)}")
    for rank, r in enumerate(result.ranking, start=1):
        table.add_row(str(rank), str(r.index), esc(r.name), esc(r.type), str(r.votes))
    console.print(table)
    stops = ", ".join(t.stop_reason for t in result.trajectories)
    steps = ", ".join(str(len(t.steps)) for t in result.trajectories)
    console.print(f"{result.wall_s:.1f} s; steps per agent: {steps}; stopped by: {stops}")


AgentsOpt = Annotated[int, typer.Option("--agents", help="Parallel agents (fused by vote).")]
OptionalAgentsOpt = Annotated[
    int | None,
    typer.Option(
        "--agents",
        help="Parallel agents (fused by vote); default 3 for ark, 1 for graphsearch.",
        show_default=False,
    ),
]
StrategyOpt = Annotated[
    str, typer.Option("--strategy", help="ark (the paper's agent) | graphsearch (six modules).")
]


def resolve_agents(strategy: str, agents: int | None, as_json: bool = False) -> int:
    """The agent count: as given, else the strategy's default; an unknown strategy fails."""
    if strategy not in DEFAULT_AGENTS:
        fail(
            f"unknown --strategy {strategy!r}; use {' or '.join(DEFAULT_AGENTS)}",
            as_json=as_json,
        )
    return DEFAULT_AGENTS[strategy] if agents is None else agents


StepsOpt = Annotated[int, typer.Option("--max-steps", help="Step budget per agent.")]
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


@app.command("ask")
def ask(
    index_dir: Annotated[Path, typer.Argument(help="Index directory.")],
    question: Annotated[str, typer.Argument(help="The question to retrieve evidence for.")],
    agents: OptionalAgentsOpt = None,
    strategy: StrategyOpt = "ark",
    max_steps: StepsOpt = 20,
    temperature: TempOpt = 0.7,
    model: ModelOpt = None,
    base_url: UrlOpt = None,
    as_json: JsonOpt = False,
    save_trajectories: SaveOpt = None,
) -> None:
    """Retrieve the nodes that answer QUESTION, showing each agent's steps live."""
    n_agents = resolve_agents(strategy, agents, as_json)
    try:
        index = open_index(index_dir)
    except ArkError as exc:
        fail(str(exc), as_json=as_json, code=type(exc).__name__)
    _run(
        index,
        question,
        agents=n_agents,
        max_steps=max_steps,
        temperature=temperature,
        model=model,
        base_url=base_url,
        as_json=as_json,
        save_trajectories=save_trajectories,
        strategy=strategy,
    )


@app.command("demo")
def demo(
    question: Annotated[str, typer.Argument(help="A question about movies.")] = DEMO_QUESTION,
    agents: AgentsOpt = 1,
    max_steps: StepsOpt = 10,
    temperature: TempOpt = 0.7,
    model: ModelOpt = None,
    base_url: UrlOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Answer a movie question over the bundled MetaQA graph with the local model."""
    from importlib.resources import files

    target = _cache_dir() / "demo" / "metaqa.idx"
    try:
        index = open_index(target)
    except ArkError:
        source = files("ark") / "data" / "metaqa_kb.txt.gz"
        if not as_json:
            err_console.print(
                f"Building the demo index (MetaQA, CC BY 3.0) in {esc(str(target))} …"
            )
        index = build_index(Path(str(source)), target)
    if not as_json:
        err_console.print(f"Question: [bold]{esc(question)}[/]")
    _run(
        index,
        question,
        agents=agents,
        max_steps=max_steps,
        temperature=temperature,
        model=model,
        base_url=base_url,
        as_json=as_json,
        save_trajectories=None,
    )
