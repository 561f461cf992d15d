"""The MCP server, driven by the SDK's own clients: in-process, over a real stdio
subprocess, and over streamable HTTP on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the [serve] extra is not installed")

from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from _helpers import REPO, node
from ark.index import build_index
from ark.serve.mcp_server import make_server
from ark.session import ToolSession
from ark.tools import tool_specs

ARK = [sys.executable, "-c", "from ark.cli import app; app()"]
ENV = {**os.environ, "PYTHONPATH": str(REPO / "src")}


def run(coro):  # type: ignore[no-untyped-def]
    return asyncio.run(coro)


def test_tools_have_the_agents_schemas_and_text(metaqa_index):
    async def go():  # type: ignore[no-untyped-def]
        async with Client(make_server(metaqa_index)) as client:
            tools = (await client.list_tools()).tools
            gump = await client.call_tool("search_in_graph", {"query": "Forrest Gump", "k": 3})
            hood = await client.call_tool(
                "search_in_neighborhood",
                {"node_index": node(metaqa_index, "Forrest Gump"), "edge_type": "directed_by"},
            )
            return tools, gump, hood

    tools, gump, hood = run(go())
    assert [t.name for t in tools] == [
        "search_in_graph",
        "search_in_neighborhood",
        "get_node",
        "why",
        "answer",
    ]
    for tool, spec in zip(tools, tool_specs(metaqa_index.schema), strict=False):
        assert tool.input_schema == spec["function"]["parameters"]
        assert tool.description == spec["function"]["description"]
        assert tool.annotations.read_only_hint is True
    session = ToolSession(metaqa_index, answer_tools=False)
    assert gump.is_error is False
    assert (
        gump.content[0].text
        == session.call("search_in_graph", {"query": "Forrest Gump", "k": 3}).observation
    )
    assert gump.structured_content["results"][0]["name"] == "Forrest Gump"
    assert "Robert Zemeckis" in hood.content[0].text
    assert hood.structured_content["results"][0]["relations"] == [
        {"type": "directed_by", "direction": "out"}
    ]


@pytest.mark.parametrize(
    ("name", "args", "code"),
    [
        ("search_in_neighborhood", {"node_index": "x"}, "bad_argument"),
        ("search_in_neighborhood", {"node_index": 10**9}, "unknown_node"),
        ("search_in_neighborhood", {"node_index": 0, "node_type": "persn"}, "unknown_node_type"),
        ("search_in_graph", {"query": "  "}, "empty_query"),
        ("search_in_graph", {"query": "x", "k": 0}, "bad_k"),
        ("search_in_graph", {"query": "x", "color": "red"}, "bad_argument"),
        ("add_to_answer", {"node_indices": [1]}, "unknown_tool"),
        ("get_node", {"node_index": -1}, "unknown_node"),
        ("get_node", {}, "bad_argument"),
    ],
)
def test_bad_calls_are_tool_errors_with_the_code(metaqa_index, name, args, code):
    async def go():  # type: ignore[no-untyped-def]
        async with Client(make_server(metaqa_index)) as client:
            bad = await client.call_tool(name, args)
            good = await client.call_tool("search_in_graph", {"query": "Tom Hanks"})
            return bad, good

    bad, good = run(go())
    assert bad.is_error is True
    assert bad.structured_content["error"]["code"] == code
    assert bad.content[0].text  # a message a model can read
    assert good.is_error is False  # the server survives and keeps answering
    if code == "unknown_node_type":
        assert "person" in bad.structured_content["error"]["suggestions"]


def test_get_node_counts_relations(metaqa_index):
    gump = node(metaqa_index, "Forrest Gump")

    async def go():  # type: ignore[no-untyped-def]
        async with Client(make_server(metaqa_index)) as client:
            return await client.call_tool("get_node", {"node_index": gump})

    result = run(go())
    record = result.structured_content
    assert record["name"] == "Forrest Gump" and record["type"] == "movie"
    assert sum(r["count"] for r in record["relations"]) == metaqa_index.graph.degree(gump)
    assert {"relation": "directed_by", "direction": "out", "neighbor_type": "person",
            "count": 1} in record["relations"]  # fmt: skip
    assert "person via directed_by(out)" in result.content[0].text


def test_schema_resource(metaqa_index):
    async def go():  # type: ignore[no-untyped-def]
        async with Client(make_server(metaqa_index)) as client:
            listed = (await client.list_resources()).resources
            text = await client.read_resource(listed[0].uri)
            data = await client.read_resource(listed[1].uri)
            with pytest.raises(MCPError):
                await client.read_resource("ark://nothing/schema")
            return text, data

    text, data = run(go())
    assert text.contents[0].text == metaqa_index.schema.render()
    assert json.loads(data.contents[0].text) == metaqa_index.schema.to_dict()


def test_several_indexes_take_an_index_argument(metaqa_index, tmp_path):
    kb = tmp_path / "kb.txt"
    kb.write_text("Alpha|likes|Beta\nBeta|likes|Gamma\n")
    small = build_index(kb, tmp_path / "small")

    async def go():  # type: ignore[no-untyped-def]
        server = make_server({"movies": metaqa_index, "small": small})
        async with Client(server) as client:
            tools = (await client.list_tools()).tools
            a = await client.call_tool("search_in_graph", {"index": "small", "query": "Beta"})
            b = await client.call_tool("search_in_graph", {"index": "movies", "query": "Gump"})
            c = await client.call_tool("search_in_graph", {"index": "small", "query": "Gump"})
            missing = await client.call_tool("search_in_graph", {"query": "Beta"})
            return tools, a, b, c, missing

    tools, a, b, c, missing = run(go())
    for t in tools:
        assert t.input_schema["required"][0] == "index"
        assert t.input_schema["properties"]["index"]["enum"] == ["movies", "small"]
    assert a.structured_content["results"][0]["name"] == "Beta"
    assert b.structured_content["results"][0]["name"] == "Forrest Gump"
    assert c.structured_content["error"]["code"] == "no_terms"  # not in the small graph
    assert missing.is_error and missing.structured_content["error"]["code"] == "bad_argument"


@pytest.mark.slow
def test_stdio_subprocess_with_the_sdk_client(metaqa_index):
    params = StdioServerParameters(
        command=ARK[0], args=[*ARK[1:], "mcp", str(metaqa_index.path)], env=ENV
    )

    async def go():  # type: ignore[no-untyped-def]
        async with Client(params) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            hit = await client.call_tool("search_in_graph", {"query": "Forrest Gump", "k": 1})
            bad = await client.call_tool("search_in_neighborhood", {"node_index": "x"})
            return names, hit, bad

    names, hit, bad = run(go())
    assert names == ["search_in_graph", "search_in_neighborhood", "get_node", "why", "answer"]
    assert hit.content[0].text.splitlines()[1].startswith("[3435] Forrest Gump (movie)")
    assert bad.is_error and bad.structured_content["error"]["code"] == "bad_argument"


@pytest.mark.slow
def test_stdio_stdout_carries_only_protocol_messages(metaqa_index):
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "search_in_graph", "arguments": {"query": "Tom Hanks"}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "get_node", "arguments": {"node_index": "nope"}}},
    ]  # fmt: skip
    proc = subprocess.Popen(
        [*ARK, "mcp", str(metaqa_index.path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=ENV,
    )
    replies = []
    try:
        for request in requests:  # one at a time: EOF cancels requests still in flight
            proc.stdin.write(json.dumps(request) + "\n")
            proc.stdin.flush()
            if "id" in request:
                replies.append(proc.stdout.readline())
        proc.stdin.close()
        rest = proc.stdout.read()  # whatever else reached stdout before exit
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert rest == ""
    messages = [json.loads(line) for line in replies]  # every line is JSON ...
    assert all(m.get("jsonrpc") == "2.0" for m in messages)  # ... and JSON-RPC
    by_id = {m["id"]: m for m in messages}
    assert "Tom Hanks" in by_id[2]["result"]["content"][0]["text"]
    assert by_id[3]["result"]["isError"] is True


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_streamable_http_on_localhost_with_dns_rebinding_protection(metaqa_index, tmp_path):
    port = _free_port()
    log = (tmp_path / "server.log").open("w")
    proc = subprocess.Popen(
        [*ARK, "mcp", str(metaqa_index.path), "--http", "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=ENV,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None, Path(log.name).read_text()
                time.sleep(0.2)
        url = f"http://127.0.0.1:{port}/mcp"

        async def go():  # type: ignore[no-untyped-def]
            async with Client(url) as client:
                return await client.call_tool("search_in_graph", {"query": "Forrest Gump"})

        assert "Forrest Gump" in run(go()).content[0].text
        # A request naming another host (a DNS-rebinding page) is refused.
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
        req = urllib.request.Request(
            url,
            data=body,
            headers={"Host": f"evil.example:{port}", "Content-Type": "application/json",
                     "Accept": "application/json, text/event-stream"},
        )  # fmt: skip
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(req, timeout=10)
        assert err.value.code == 421
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        log.close()


# -- tools off the event loop, in a bounded pool -----------------------------------------


def slow_search(monkeypatch, seconds: float):  # type: ignore[no-untyped-def]
    """Make search_in_graph a heavy synchronous call; returns the peak concurrency seen."""
    import threading

    from ark.tools import GraphTools

    original = GraphTools.search_in_graph
    state = {"now": 0, "peak": 0}
    lock = threading.Lock()

    def slow(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        time.sleep(seconds)  # synchronous work, as a hub's neighborhood is
        with lock:
            state["now"] -= 1
        return original(self, *args, **kwargs)

    monkeypatch.setattr(GraphTools, "search_in_graph", slow)
    return state


@pytest.mark.slow
def test_a_heavy_tool_call_does_not_block_the_event_loop(metaqa_index, monkeypatch):
    slow_search(monkeypatch, 1.2)

    async def go():  # type: ignore[no-untyped-def]
        gaps: list[float] = []
        async with Client(make_server(metaqa_index)) as client:
            done = asyncio.Event()

            async def tick() -> None:
                last = time.perf_counter()
                while not done.is_set():
                    await asyncio.sleep(0.01)
                    now = time.perf_counter()
                    gaps.append(now - last)
                    last = now

            ticker = asyncio.create_task(tick())
            await asyncio.sleep(0.05)
            result = await client.call_tool("search_in_graph", {"query": "Forrest Gump"})
            done.set()
            await ticker
        return result, max(gaps)

    result, worst_gap = run(go())
    assert result.structured_content["results"][0]["name"] == "Forrest Gump"
    assert worst_gap < 0.6  # the loop kept running (on it, one gap was the whole 1.2 s)


def test_tool_calls_run_in_a_bounded_pool(metaqa_index, monkeypatch):
    state = slow_search(monkeypatch, 0.3)

    async def go():  # type: ignore[no-untyped-def]
        async with Client(make_server(metaqa_index, max_workers=2)) as client:
            started = time.perf_counter()
            results = await asyncio.gather(
                *(client.call_tool("search_in_graph", {"query": "Forrest Gump"}) for _ in range(5))
            )
            return results, time.perf_counter() - started

    results, elapsed = run(go())
    assert all(not r.is_error for r in results)
    assert state["peak"] == 2  # concurrent, but never more than the pool
    assert elapsed >= 0.3 * 3 - 0.05  # five calls, two at a time: three rounds
    with pytest.raises(ValueError, match="max_workers"):
        make_server(metaqa_index, max_workers=0)


# -- which Host names the HTTP server accepts ------------------------------------------


def test_allowed_hosts_by_bind_address(monkeypatch):
    from ark.serve import mcp_server

    monkeypatch.setattr(mcp_server, "machine_names", lambda: ["box", "box.lan", "10.1.2.3"])
    local = mcp_server.allowed_hosts("127.0.0.1")
    assert "localhost:*" in local and "box:*" not in local  # DNS-rebinding protection
    wild = mcp_server.allowed_hosts("0.0.0.0")
    assert {"box:*", "box.lan:*", "10.1.2.3:*", "127.0.0.1:*", "[::1]:*"} <= set(wild)
    assert "0.0.0.0:*" not in wild  # no client names the wildcard
    assert "[fe80::1]:*" in mcp_server.allowed_hosts("::", ["fe80::1", "mcp.example.org"])
    assert "mcp.example.org:*" in mcp_server.allowed_hosts("::", ["mcp.example.org"])
    assert mcp_server.allowed_hosts("10.1.2.3") == ["10.1.2.3:*", "10.1.2.3"]
    assert mcp_server.allowed_hosts("0.0.0.0", ["*"]) is None


def test_machine_names_include_the_host_name():
    from ark.serve.mcp_server import machine_names

    assert socket.gethostname() in machine_names()


@pytest.mark.slow
def test_streamable_http_on_all_interfaces_accepts_the_machines_names(metaqa_index, tmp_path):
    """--host 0.0.0.0: a client naming the machine (as a remote one does) is served,
    not refused with 421; a rebinding page's name still is."""
    port = _free_port()
    log = (tmp_path / "server.log").open("w")
    proc = subprocess.Popen(
        [*ARK, "mcp", str(metaqa_index.path), "--http", "--host", "0.0.0.0", "--port",
         str(port), "--allow-host", "mcp.example.org"],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=ENV,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None, Path(log.name).read_text()
                time.sleep(0.2)

        def ping(host: str) -> int:
            body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
            req = urllib.request.Request(
                f"http://127.0.0.1:{port}/mcp",
                data=body,
                headers={"Host": host, "Content-Type": "application/json",
                         "Accept": "application/json, text/event-stream"},
            )  # fmt: skip
            try:
                with urllib.request.urlopen(req, timeout=10) as resp:
                    return resp.status
            except urllib.error.HTTPError as err:
                return err.code

        for name in (socket.gethostname(), "mcp.example.org", "127.0.0.1"):
            assert ping(f"{name}:{port}") != 421, name
        assert ping(f"evil.example:{port}") == 421
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        log.close()
    assert "Clients may name this server as:" in Path(log.name).read_text()


def test_why_gives_the_paths_by_which_the_clients_searches_reached_a_node(metaqa_index):
    gump, zemeckis = node(metaqa_index, "Forrest Gump"), node(metaqa_index, "Robert Zemeckis")
    hanks = node(metaqa_index, "Tom Hanks")
    searches = [
        {"tool": "search_in_graph", "arguments": {"query": "Forrest Gump", "k": 3}},
        {"tool": "search_in_neighborhood", "arguments": {"node_index": 10**9}},  # failed
        {
            "tool": "search_in_neighborhood",
            "arguments": {"node_index": gump, "edge_type": "directed_by"},
        },
    ]

    async def go():  # type: ignore[no-untyped-def]
        async with Client(make_server(metaqa_index)) as client:
            found = await client.call_tool("why", {"node_index": zemeckis, "calls": searches})
            unseen = await client.call_tool("why", {"node_index": hanks, "calls": searches})
            bad = await client.call_tool("why", {"node_index": -1, "calls": []})
            no_calls = await client.call_tool("why", {"node_index": 1, "calls": "x"})
            return found, unseen, bad, no_calls

    found, unseen, bad, no_calls = run(go())
    assert found.is_error is False
    (path,) = found.structured_content["paths"]
    assert path == {
        "agent": 0,
        "anchor": gump,
        "query": "Forrest Gump",
        "step": 1,
        "hops": [
            {
                "center": gump,
                "relation": "directed_by",
                "direction": "out",
                "neighbor": zemeckis,
                "step": 3,
            }
        ],
    }
    assert found.structured_content["names"][str(zemeckis)] == ["Robert Zemeckis", "person"]
    assert (
        f"search 'Forrest Gump' (search 1) → [{gump}] Forrest Gump -directed_by-> "
        f"[{zemeckis}] Robert Zemeckis (search 3)"
    ) in found.content[0].text
    assert unseen.structured_content["paths"] == [] and "no evidence" in unseen.content[0].text
    assert bad.is_error and bad.structured_content["error"]["code"] == "unknown_node"
    assert no_calls.is_error and no_calls.structured_content["error"]["code"] == "bad_argument"
