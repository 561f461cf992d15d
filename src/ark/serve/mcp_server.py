"""ARK's tools as an MCP server: plug the graph into the agents people already use.

Tools: ``search_in_graph`` and ``search_in_neighborhood`` with the JSON schemas and
rendered text an ARK agent sees (from the one definition in :mod:`ark.tools`, run
through a :class:`~ark.session.ToolSession`), ``get_node`` (a node's full text and
relation counts), ``why`` (the evidence paths by which a client's searches reached
a node, :mod:`ark.serve._why`) and ``answer`` (an answer in words from nodes' text,
citing them, written by the server's model: :mod:`ark.serve._answer`). Resources:
each index's schema summary.
Everything is read-only; a bad call comes back as a tool error (``isError``) whose
structured content carries the :class:`~ark.tools.ErrorCode`, never as a crash.

The low-level ``mcp.server.Server`` is used rather than ``MCPServer``: the latter
derives input schemas from Python signatures, which would be a second definition of
the tools. Several indexes are served at once by adding an ``index`` argument.
"""

from __future__ import annotations

import asyncio
import copy
import ipaddress
import json
import os
import socket
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import mcp_types as types
import numpy as np
from mcp.server import Server
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import INVALID_PARAMS

from ark._coerce import as_int
from ark.graph import DIRECTION_NAMES
from ark.index import Index
from ark.llm import ChatModel
from ark.serve._answer import ANSWER_SPEC, AnswerError, AnswerService, AnswerSettings
from ark.serve._service import IndexService
from ark.serve._why import WHY_SPEC, WhyError, why
from ark.tools import ErrorCode, GraphTools, tool_specs

__all__ = [
    "ANSWER_SPEC",
    "GET_NODE_SPEC",
    "MAX_TOOL_THREADS",
    "WHY_SPEC",
    "AnswerSettings",
    "IndexService",
    "allowed_hosts",
    "make_server",
    "node_record",
    "render_node",
    "run_http",
    "run_stdio",
    "unique_names",
]

SERVER_NAME = "ark"
#: Tool calls running at once (more wait their turn); each BM25 search keeps a scratch
#: buffer of 8 bytes per node for its thread.
MAX_TOOL_THREADS = min(8, (os.cpu_count() or 1) + 2)
#: Characters of a node's text returned by get_node (the rest is cut, and says so).
MAX_TEXT_CHARS = 20_000

GET_NODE_SPEC: dict[str, Any] = {
    "name": "get_node",
    "description": (
        "The full text of one node and how it is connected: counts of its edges per "
        "relation, direction and neighbor type. Use it to read a node found by a search "
        "and to choose the filters of search_in_neighborhood."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "node_index": {
                "type": "integer",
                "minimum": 0,
                "description": "Index of a node returned by an earlier search.",
            }
        },
        "required": ["node_index"],
        "additionalProperties": False,
    },
}

INSTRUCTIONS = (
    "Retrieval over a knowledge graph. search_in_graph finds nodes by BM25 over their "
    "text; search_in_neighborhood lists the one-hop neighbors of a node, filtered by "
    "node type and relation and ranked by an optional query; get_node reads one node. "
    "Node indices from one call can be passed to the next. The schema resource lists "
    "the node types and relations. why, given your searches, lists the paths by which "
    "they reached a node: the evidence for an answer. answer writes a short answer in "
    "words from the text of the nodes you pass (or retrieves them itself), citing them."
)


def node_record(index: Index, node: int) -> dict[str, Any]:
    """A node's name, type, full text and edge counts per (relation, direction,
    neighbor type), most common first."""
    g = index.graph
    hood = g.neighborhood(node)
    counts: dict[tuple[str, str, str], int] = {}
    if len(hood.neighbors):
        sizes = np.diff(hood.group_starts)
        neighbor_types = np.repeat(np.asarray(g.node_type)[hood.neighbors], sizes)
        for t, r, d in zip(
            neighbor_types.tolist(),
            hood.entry_relations.tolist(),
            hood.entry_directions.tolist(),
            strict=True,
        ):
            key = (g.relation_names[r], DIRECTION_NAMES[d], g.node_type_names[t])
            counts[key] = counts.get(key, 0) + 1
    text = g.text(node)
    return {
        "index": node,
        "name": g.name(node),
        "type": g.type_name(node),
        "text": text[:MAX_TEXT_CHARS],
        "text_truncated": len(text) > MAX_TEXT_CHARS,
        "degree": g.degree(node),
        "relations": [
            {"relation": r, "direction": d, "neighbor_type": t, "count": c}
            for (r, d, t), c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        ],
    }


def render_node(record: Mapping[str, Any]) -> str:
    """The text form of :func:`node_record`, in the style of the tools' observations."""
    lines = [f"[{record['index']}] {record['name']} ({record['type']})"]
    if record["text"]:
        lines.append(record["text"] + (" …(cut)" if record["text_truncated"] else ""))
    rels = record["relations"]
    lines.append(f"{record['degree']} edge(s)" + (":" if rels else "."))
    lines += [
        f"- {r['count']} {r['neighbor_type']} via {r['relation']}({r['direction']})" for r in rels
    ]
    return "\n".join(lines)


def _spec_tool(spec: Mapping[str, Any], names: Sequence[str] | None) -> types.Tool:
    fn = spec.get("function", spec)
    schema = copy.deepcopy(fn["parameters"])
    if names is not None:  # several indexes: say which one
        schema["properties"] = {
            "index": {
                "type": "string",
                "enum": list(names),
                "description": "Which graph to use: " + ", ".join(names) + ".",
            },
            **schema["properties"],
        }
        schema["required"] = ["index", *schema.get("required", [])]
    return types.Tool(
        name=fn["name"],
        description=fn["description"],
        input_schema=schema,
        annotations=types.ToolAnnotations(
            read_only_hint=True, idempotent_hint=True, open_world_hint=False
        ),
    )


def _error(
    tool: str, code: str, message: str, extra: dict[str, Any] | None = None
) -> types.CallToolResult:
    err = {"tool": tool, "code": str(code), "message": message, **(extra or {})}
    return types.CallToolResult(
        content=[types.TextContent(text=message)],
        structured_content={"error": err},
        is_error=True,
    )


def make_server(
    indexes: Mapping[str, Index] | Index,
    *,
    max_workers: int = MAX_TOOL_THREADS,
    llm: ChatModel | None = None,
    answer_settings: AnswerSettings | None = None,
) -> Server[Any]:
    """An MCP server over one index, or several by name (tools then take ``index``).
    Tool calls run in a pool of ``max_workers`` threads, never on the event loop.

    ``llm`` writes the ``answer`` tool's answers (and retrieves for it when a client
    passes no nodes, as ``answer_settings`` say); ``None``: the default model of
    :func:`ark.llm.make_chat_model` (the local one unless a base URL is set in the
    environment), loaded on the first ``answer`` call — the other tools never load it."""
    if max_workers < 1:
        raise ValueError("max_workers must be at least 1")
    if isinstance(indexes, Index):
        indexes = {indexes.path.name or "index": indexes}
    if not indexes:
        raise ValueError("make_server needs at least one index")
    services = {name: IndexService(name, idx) for name, idx in indexes.items()}
    multi = len(services) > 1
    names = list(services) if multi else None
    # One index: exactly the agent's schemas (type names enumerated). Several: the
    # generic schemas, since each graph has its own types.
    first = next(iter(services.values()))

    def tool_list() -> list[types.Tool]:
        """The specs of the current snapshot: an update's new types and relations
        appear in the enumerated names."""
        schema = None if multi else first.snapshot()[0].schema
        specs = [*tool_specs(schema), GET_NODE_SPEC, WHY_SPEC, ANSWER_SPEC]
        return [_spec_tool(s, names) for s in specs]

    tool_names = {t.name for t in tool_list()}

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tool_list())

    # Tools are synchronous numpy/numba work: run on the event loop, one heavy call (a
    # hub's neighborhood, a long query) stalled every client. They run in a bounded
    # pool instead (the tools are thread-safe: BM25 keeps one scratch buffer per thread).
    pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="ark-mcp-tool")
    answers = AnswerService(llm, answer_settings)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return await asyncio.wrap_future(pool.submit(call, params.name, params.arguments))

    def call(name: str, arguments: Mapping[str, Any] | None) -> types.CallToolResult:
        if name not in tool_names:
            return _error(
                name,
                ErrorCode.UNKNOWN_TOOL,
                f"Error: there is no tool {name!r}. Tools: {', '.join(sorted(tool_names))}.",
            )
        args = dict(arguments or {})
        service = first
        if multi:
            wanted = args.pop("index", None)
            if wanted not in services:
                return _error(
                    name,
                    ErrorCode.BAD_ARGUMENT,
                    f"Error in {name}: index must be one of {', '.join(services)}; got {wanted!r}.",
                    {"suggestions": list(services)},
                )
            service = services[wanted]
        index, tools = service.snapshot()
        if name == "get_node":
            return _get_node(index, args)
        if name == "why":
            return _why(index, tools, args)
        if name == "answer":
            return _answer(answers, index, args)
        outcome = service.session(tools).call(name, args, json.dumps(arguments, default=str))
        if outcome.ok and outcome.result is not None and outcome.result.ok:
            return types.CallToolResult(
                content=[types.TextContent(text=outcome.observation)],
                structured_content=outcome.result.to_dict(),
            )
        if outcome.result is not None and not outcome.result.ok:
            err = outcome.result.to_dict()["error"]
            return _error(name, err["code"], outcome.observation, err)
        return _error(name, outcome.code or ErrorCode.BAD_ARGUMENT, outcome.observation)

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri=_schema_uri(name, fmt),
                    name=f"{name} schema" + (" (JSON)" if fmt == "json" else ""),
                    description=(
                        f"Node types and relations of {name} (with counts): the names "
                        "search_in_neighborhood's filters take."
                    ),
                    mime_type="application/json" if fmt == "json" else "text/plain",
                )
                for name in services
                for fmt in ("text", "json")
            ]
        )

    async def read_resource(
        ctx: Any, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        for name, service in services.items():
            schema = service.snapshot()[0].schema
            if uri == _schema_uri(name, "text"):
                body, mime = schema.render(), "text/plain"
            elif uri == _schema_uri(name, "json"):
                body, mime = json.dumps(schema.to_dict(), ensure_ascii=False), "application/json"
            else:
                continue
            return types.ReadResourceResult(
                contents=[types.TextResourceContents(uri=uri, text=body, mime_type=mime)]
            )
        raise MCPError(INVALID_PARAMS, f"unknown resource {uri!r}")

    from ark import __version__

    server: Server[Any] = Server(
        SERVER_NAME,
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )
    return server


def _schema_uri(name: str, fmt: str) -> str:
    return f"ark://{name}/schema" + (".json" if fmt == "json" else "")


def _get_node(index: Index, args: Mapping[str, Any]) -> types.CallToolResult:
    tool = "get_node"
    unknown = set(args) - {"node_index"}
    if unknown:
        return _error(
            tool,
            ErrorCode.BAD_ARGUMENT,
            f"Error in {tool}: unknown argument(s) {sorted(unknown)}; this tool takes "
            "['node_index'].",
        )
    node = as_int(args.get("node_index"))
    if node is None:
        return _error(
            tool,
            ErrorCode.BAD_ARGUMENT,
            f"Error in {tool}: node_index must be an integer, got {args.get('node_index')!r}.",
        )
    n = index.graph.n_nodes
    is_removed = getattr(index.graph, "is_removed", None)
    if not 0 <= node < n or (is_removed is not None and is_removed(node)):
        return _error(
            tool,
            ErrorCode.UNKNOWN_NODE,
            f"Error in {tool}: node {node} is not in the graph (indices 0..{n - 1}).",
        )
    record = node_record(index, node)
    return types.CallToolResult(
        content=[types.TextContent(text=render_node(record))], structured_content=record
    )


def _why(index: Index, tools: GraphTools, args: Mapping[str, Any]) -> types.CallToolResult:
    try:
        text, structured = why(index, tools, args)
    except WhyError as exc:
        return _error("why", exc.code, f"Error in why: {exc.message}")
    return types.CallToolResult(
        content=[types.TextContent(text=text)], structured_content=structured
    )


def _answer(answers: AnswerService, index: Index, args: Mapping[str, Any]) -> types.CallToolResult:
    try:
        text, structured = answers.answer(index, args)
    except AnswerError as exc:
        return _error("answer", exc.code, f"Error in answer: {exc.message}")
    return types.CallToolResult(
        content=[types.TextContent(text=text)], structured_content=structured
    )


def unique_names(paths: Sequence[str]) -> list[str]:
    """Short names for index directories (their base names, numbered when equal)."""
    out: list[str] = []
    for p in paths:
        base = p.rstrip("/").rsplit("/", 1)[-1] or "index"
        name, i = base, 2
        while name in out:
            name, i = f"{base}-{i}", i + 1
        out.append(name)
    return out


async def run_stdio(server: Server[Any]) -> None:
    """Serve over stdin/stdout. While serving, the SDK points file descriptor 1 at
    stderr, so nothing but protocol messages reaches stdout."""
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
#: Bind addresses that listen on every interface.
WILDCARD_HOSTS = ("0.0.0.0", "::", "")


def machine_names() -> list[str]:
    """The names and addresses other machines may use to reach this one: its host name,
    fully qualified name, the addresses they resolve to, and the address of the default
    route (found by connecting a UDP socket, which sends nothing)."""
    names: list[str] = []
    host = socket.gethostname()
    names += [host, socket.getfqdn()]
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            infos = socket.getaddrinfo(host, None, family)
        except OSError:
            continue
        names += [str(info[4][0]) for info in infos]
    for family, probe in ((socket.AF_INET, "192.0.2.1"), (socket.AF_INET6, "2001:db8::1")):
        try:
            with socket.socket(family, socket.SOCK_DGRAM) as s:
                s.connect((probe, 9))  # TEST-NET addresses: nothing is sent
                names.append(str(s.getsockname()[0]))
        except OSError:
            continue
    return [n for n in dict.fromkeys(names) if n]


def allowed_hosts(host: str, extra: Iterable[str] = ()) -> list[str] | None:
    """The Host header values the HTTP server accepts (``name:*`` patterns and bare
    names), or ``None`` when ``extra`` holds ``*`` (no Host check: behind a proxy
    that checks it, say).

    A local bind accepts the local names only (DNS-rebinding protection); a bind to one
    address accepts that address; a wildcard bind (``0.0.0.0``, ``::``) accepts every
    name of this machine (:func:`machine_names`) as well as the local ones, since the
    server is then meant to be reached from elsewhere. ``extra`` adds names (a DNS
    alias, a proxy's name)."""
    extra = [e.strip() for e in extra if e.strip()]
    if "*" in extra:
        return None
    if host in LOCAL_HOSTS:
        names = list(LOCAL_HOSTS)
    elif host in WILDCARD_HOSTS:
        names = [*LOCAL_HOSTS, *machine_names()]
    else:
        names = [host]
    out: list[str] = []
    for name in dict.fromkeys([*names, *extra]):
        shown = f"[{name.strip('[]')}]" if _is_ipv6(name.strip("[]")) else name
        out += [f"{shown}:*", shown]
    return out


def _is_ipv6(name: str) -> bool:
    try:
        return ipaddress.ip_address(name.split("%")[0]).version == 6
    except ValueError:
        return False


def http_app(server: Server[Any], host: str = "127.0.0.1", allow: Iterable[str] = ()) -> Any:
    """The streamable-HTTP ASGI app (endpoint ``/mcp``) with DNS-rebinding protection
    on: only requests whose Host (and Origin, when sent) is one of
    :func:`allowed_hosts` pass."""
    from mcp.server.transport_security import TransportSecuritySettings

    hosts = allowed_hosts(host, allow)
    if hosts is None:
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    else:
        origins = [f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")]
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
        )
    return server.streamable_http_app(host=host, transport_security=security)


async def run_http(
    server: Server[Any], host: str = "127.0.0.1", port: int = 8765, allow: Iterable[str] = ()
) -> None:
    """Serve streamable HTTP at ``http://HOST:PORT/mcp`` until interrupted."""
    import uvicorn

    app = http_app(server, host, allow)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning")
    await uvicorn.Server(config).serve()
