"""A running MCP server picks up index updates between calls, without a restart, and
never answers from a half-committed snapshot."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading

import pytest

pytest.importorskip("mcp", reason="the [serve] extra is not installed")

from mcp import Client, StdioServerParameters

from _helpers import REPO
from ark.index import add_to_index, build_index, compact_index, open_index
from ark.serve.mcp_server import make_server

ARK = [sys.executable, "-c", "from ark.cli import app; app()"]
ENV = {**os.environ, "PYTHONPATH": str(REPO / "src")}
KB = "".join(f"Film {i}|directed_by|Director {i % 9}\n" for i in range(60))


@pytest.fixture()
def index_dir(tmp_path):
    (tmp_path / "kb.txt").write_text(KB)
    build_index(tmp_path / "kb.txt", tmp_path / "idx")
    for i in range(6):
        (tmp_path / f"add{i}.txt").write_text(f"Star {i} Film|acted_in|Director {i}\n")
    return tmp_path


def _text(result) -> str:  # type: ignore[no-untyped-def]
    return result.content[0].text


def test_in_process_server_follows_updates_while_queried(index_dir):
    root = index_dir / "idx"
    server = make_server(open_index(root))
    done = threading.Event()
    errors: list[BaseException] = []

    def updater() -> None:
        try:
            for i in range(1, 6):
                add_to_index(root, index_dir / f"add{i}.txt")
        except BaseException as exc:  # surfaced below
            errors.append(exc)
        finally:
            done.set()

    async def go():  # type: ignore[no-untyped-def]
        seen: list[int] = []
        async with Client(server) as client:
            before = await client.call_tool("search_in_graph", {"query": "Star", "k": 10})
            assert before.is_error  # no such word yet
            # The first addition, and the specs of its new relation, before the threads
            # race: their first-time work parses Python source (numba, pydantic), and
            # CPython 3.11's AST constructor keeps its recursion depth per interpreter,
            # not per thread (python/cpython#106905: "AST constructor recursion depth
            # mismatch" when two threads parse at once).
            add_to_index(root, index_dir / "add0.txt")
            await client.call_tool("search_in_graph", {"query": "Star Film", "k": 10})
            await client.list_tools()
            thread = threading.Thread(target=updater)
            thread.start()
            while not done.is_set():
                hit = await client.call_tool("search_in_graph", {"query": "Star Film", "k": 10})
                assert not hit.is_error or hit.structured_content["error"]["code"] == "no_terms"
                if not hit.is_error:
                    seen.append(len(hit.structured_content["results"]))
                await asyncio.sleep(0)
            thread.join()
            final = await client.call_tool("search_in_graph", {"query": "Star Film", "k": 10})
            tools = (await client.list_tools()).tools
            return seen, final, tools

    seen, final, tools = asyncio.run(go())
    assert not errors
    assert seen == sorted(seen)  # snapshots only move forward
    names = [r["name"] for r in final.structured_content["results"]]
    assert {f"Star {i} Film" for i in range(6)} <= set(names)
    hood = next(t for t in tools if t.name == "search_in_neighborhood")
    assert "acted_in" in str(hood.input_schema)  # the specs follow the new relation


@pytest.mark.slow
def test_stdio_ark_mcp_serves_through_updates_and_compact(index_dir):
    root = index_dir / "idx"
    params = StdioServerParameters(command=ARK[0], args=[*ARK[1:], "mcp", str(root)], env=ENV)

    def cli(*args: str) -> None:
        subprocess.run([*ARK, *args], env=ENV, check=True, capture_output=True, timeout=120)

    async def go():  # type: ignore[no-untyped-def]
        async with Client(params) as client:
            first = await client.call_tool("search_in_graph", {"query": "Star 0", "k": 1})
            cli("index", "add", str(root), str(index_dir / "add0.txt"))
            second = await client.call_tool("search_in_graph", {"query": "Star 0", "k": 1})
            star = second.structured_content["results"][0]["index"]
            node = await client.call_tool("get_node", {"node_index": star})
            await asyncio.to_thread(compact_index, root)
            third = await client.call_tool("search_in_graph", {"query": "Star 0", "k": 1})
            return first, second, node, third

    first, second, node, third = asyncio.run(go())
    assert first.is_error  # not there yet
    assert second.structured_content["results"][0]["name"] == "Star 0 Film"
    assert "acted_in" in _text(node)
    assert third.structured_content["results"][0]["name"] == "Star 0 Film"
