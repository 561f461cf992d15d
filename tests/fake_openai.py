"""Test double: a tiny OpenAI-compatible HTTP server on 127.0.0.1 with scripted replies."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Responder = Callable[[dict[str, Any]], tuple[Any, ...]]

#: A reply body that closes the connection without an answer.
DROP = object()


class Drip:
    """A reply body sent a few bytes at a time, ``every`` seconds apart: a server
    that is never silent long enough for a read timeout, yet never done."""

    def __init__(self, body: dict[str, Any], every: float = 0.4, chunk: int = 8) -> None:
        self.data = json.dumps(body).encode()
        self.every = every
        self.chunk = chunk


class FakeOpenAIServer:
    """Serves ``/v1/chat/completions``; each request pops the next scripted reply
    (``(status, body)``) — or, with ``respond``, gets the reply that function computes
    from the request (deterministic under concurrency) — and records the request body
    (and its ``Authorization`` header). ``GET /v1/models`` lists ``models`` (a 404
    when None, as servers without that endpoint answer).

    A reply is ``(status, body)``: a dict is sent as JSON; ``bytes`` are sent as they
    are (an HTML page, a cut JSON text), with ``content_type`` from an optional third
    element; :data:`DROP` closes the connection without answering."""

    def __init__(
        self,
        replies: list[tuple[Any, ...]] | None = None,
        *,
        respond: Responder | None = None,
        delay: float = 0.0,
        keep_alive: bool = False,
        models: list[dict[str, Any]] | None = None,
    ) -> None:
        self.replies = list(replies or [])
        self.respond = respond
        self.delay = delay  # seconds before each answer (a slow server)
        self.requests: list[dict[str, Any]] = []
        self.auth: list[str | None] = []
        #: What ``GET /v1/models`` lists (None: the server has no such endpoint, 404).
        self.models = models
        self.model_requests = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            # HTTP/1.1 keeps connections open between requests, as real servers do.
            protocol_version = "HTTP/1.1" if keep_alive else "HTTP/1.0"

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                request = json.loads(self.rfile.read(length))
                server.requests.append(request)
                server.auth.append(self.headers.get("Authorization"))
                if server.delay:
                    time.sleep(server.delay)
                if server.respond is not None:
                    reply = server.respond(request)
                else:
                    reply = server.replies.pop(0) if server.replies else (500, {})
                status, body = reply[0], reply[1]
                headers = reply[3] if len(reply) > 3 else {}  # e.g. Retry-After
                if body is DROP:
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                if isinstance(body, Drip):
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body.data)))
                    self.end_headers()
                    try:
                        for at in range(0, len(body.data), body.chunk):
                            self.wfile.write(body.data[at : at + body.chunk])
                            self.wfile.flush()
                            time.sleep(body.every)
                    except OSError:  # the client gave up: what the test wants
                        pass
                    return
                if isinstance(body, bytes):
                    data, kind = body, reply[2] if len(reply) > 2 else "application/json"
                else:
                    data, kind = json.dumps(body).encode(), "application/json"
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                server.model_requests += 1
                found = self.path.rstrip("/").endswith("/models") and server.models is not None
                body = {"object": "list", "data": server.models} if found else {}
                data = json.dumps(body).encode()
                self.send_response(200 if found else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def __enter__(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def chat_reply(content: str = "", tool_calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "fake-model",
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if tool_calls else "stop",
            }
        ],
        "usage": {"prompt_tokens": 42, "completion_tokens": 7, "total_tokens": 49},
    }


def function_call(name: str, arguments: str, id_: str = "call_1") -> dict[str, Any]:
    return {"id": id_, "type": "function", "function": {"name": name, "arguments": arguments}}


def first_hit_policy(request: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """A deterministic agent for tests: search the question, add the first node found,
    finish. Its replies depend only on the conversation, never on timing."""
    messages = request["messages"]
    turn = sum(1 for m in messages if m["role"] == "assistant")
    question = next(m["content"] for m in messages if m["role"] == "user")
    if turn == 0:
        call = function_call("search_in_graph", json.dumps({"query": question}), "call_0")
    elif turn == 1:
        found = re.search(r"^\[(\d+)\]", messages[-1]["content"], re.MULTILINE)
        nodes = [int(found.group(1))] if found else []
        call = function_call("add_to_answer", json.dumps({"node_indices": nodes}), "call_1")
    else:
        call = function_call("finish", "{}", f"call_{turn}")
    return 200, chat_reply(tool_calls=[call])


def raw_reply(message: Any, finish_reason: str = "stop") -> dict[str, Any]:
    """A chat completion whose ``message`` is exactly ``message`` (``None`` included)."""
    reply = chat_reply()
    reply["choices"][0]["message"] = message
    reply["choices"][0]["finish_reason"] = finish_reason
    return reply
