"""``ark mcp``, ``ark view`` and ``ark chat``: serving the tools and seeing runs."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from pathlib import Path
from typing import Annotated

import typer

from ark.cli._agent_cmds import (
    OptionalStepsOpt,
    StrategyOpt,
    fitting_defaults,
    loading_model,
)
from ark.cli._output import err_console, esc, fail, print_json
from ark.cli._root import app
from ark.errors import ArkError


def _need(module: str, what: str) -> None:
    try:
        __import__(module)
    except ImportError:
        fail(f"{what} needs the [serve] extra: pip install 'ark-retriever[serve]'")


@app.command("mcp")
def mcp_cmd(
    index_dirs: Annotated[
        list[Path], typer.Argument(help="Index directories (several: tools take `index`).")
    ],
    http: Annotated[
        bool, typer.Option("--http", help="Streamable HTTP at /mcp instead of stdio.")
    ] = False,
    host: Annotated[str, typer.Option(help="Address to bind with --http.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port with --http.")] = 8765,
    allow_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-host",
            help="Another name clients may use for this server with --http (a DNS alias, "
            "a proxy; repeatable). '*' turns the Host check off.",
        ),
    ] = None,
) -> None:
    """Serve search_in_graph, search_in_neighborhood, get_node, why and answer over MCP
    (read-only)."""
    _need("mcp", "ark mcp")
    from ark.index import open_index
    from ark.serve.mcp_server import (
        LOCAL_HOSTS,
        allowed_hosts,
        make_server,
        run_http,
        run_stdio,
        unique_names,
    )

    # stdout is the protocol channel: anything a library prints goes to stderr.
    with contextlib.redirect_stdout(sys.stderr):
        try:
            names = unique_names([str(p) for p in index_dirs])
            indexes = {n: open_index(p) for n, p in zip(names, index_dirs, strict=True)}
        except ArkError as exc:
            fail(str(exc), code=type(exc).__name__)
    server = make_server(indexes)
    try:
        if http:
            allow = allow_host or []
            hosts = allowed_hosts(host, allow)
            if host not in LOCAL_HOSTS:
                err_console.print(
                    f"[yellow]warning:[/] binding {esc(host)}: reachable from other machines; "
                    "the server has no authentication."
                )
                if hosts is None:
                    err_console.print("Host header not checked (--allow-host '*').")
                else:
                    names = [h for h in hosts if not h.endswith(":*")]
                    err_console.print(
                        f"Clients may name this server as: {esc(', '.join(names))} "
                        "(others: --allow-host NAME)."
                    )
            shown = f"[{host}]" if ":" in host else host
            err_console.print(
                f"MCP server ({', '.join(map(esc, indexes))}) at http://{shown}:{port}/mcp"
            )
            asyncio.run(run_http(server, host, port, allow))
        else:
            asyncio.run(run_stdio(server))
    except KeyboardInterrupt:
        pass


@app.command("view")
def view_cmd(
    source: Annotated[
        Path, typer.Argument(help="A run directory (ark eval --out) or a trajectories .jsonl.")
    ],
    out: Annotated[Path | None, typer.Option("-o", "--out", help="HTML file to write.")] = None,
    index_dir: Annotated[
        Path | None,
        typer.Option("--index", help="Index for node names (default: the run's config.json)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")] = False,
) -> None:
    """Write one self-contained HTML page showing a run: queries, metrics, steps, subgraph."""
    from ark.serve.viewer import default_view_path, write_view

    target = out or default_view_path(source)
    try:
        info = write_view(source, target, index_dir=index_dir)
    except ArkError as exc:
        fail(str(exc), as_json=as_json, code=type(exc).__name__)
    if as_json:
        print_json(info)
    else:
        err_console.print(
            f"Wrote {esc(str(target))}: {info['queries']} queries, {info['trajectories']} "
            f"trajectories, {info['bytes'] / 1e6:.2f} MB. Open it in a browser."
        )


@app.command("chat")
def chat_cmd(
    index_dir: Annotated[Path, typer.Argument(help="Index directory.")],
    strategy: StrategyOpt = None,
    agents: Annotated[
        int, typer.Option("--agents", help="Parallel agents (fused by vote); one answers fastest.")
    ] = 1,
    max_steps: OptionalStepsOpt = None,
    temperature: Annotated[float, typer.Option(help="Sampling temperature.")] = 0.7,
    model: Annotated[
        str | None, typer.Option(help="Model name (OpenAI-compatible server) or GGUF path.")
    ] = None,
    base_url: Annotated[
        str | None, typer.Option(help="OpenAI-compatible endpoint; default: the local model.")
    ] = None,
    history_file: Annotated[
        Path | None, typer.Option(help="Keep the question history in this file.")
    ] = None,
    answer: Annotated[
        bool,
        typer.Option(
            "--answer",
            help="Under each ranking, an answer in words citing the nodes whose text holds "
            "it (checked), or why the evidence does not answer.",
        ),
    ] = False,
) -> None:
    """Question the graph interactively: live steps, ranked answers, /why N, /view."""
    _need("prompt_toolkit", "ark chat")
    from ark.index import open_index
    from ark.llm import make_chat_model
    from ark.serve.chat import ChatSession, run_chat

    strategy, agents, max_steps = fitting_defaults(
        strategy, agents, max_steps, model=model, base_url=base_url, adapter=None
    )
    try:
        index = open_index(index_dir)
        with loading_model(model, base_url, quiet=False):
            llm = make_chat_model(model=model, base_url=base_url)
    except ArkError as exc:
        fail(str(exc), code=type(exc).__name__)
    session = ChatSession(
        index,
        llm,
        strategy=strategy,
        agents=agents,
        max_steps=max_steps,
        temperature=temperature,
        answer=answer,
    )
    run_chat(session, history_file=history_file)
