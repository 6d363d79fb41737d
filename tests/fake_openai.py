"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for tests.

Each POST is answered with the next scripted reply (the last one repeats) and kept in
``requests``, so a test knows exactly what a real client sent. A reply may script its
``refusal`` (OpenAI's field for a refusal, with ``content`` null) and ``finish_reason``.
Usage is scripted too: ``prompt_tokens`` 11 per call so far, ``completion_tokens`` 7.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FakeOpenAI", "usage_of"]


def usage_of(n: int) -> tuple[int, int]:
    """The scripted usage of the ``n``-th call (1-based)."""
    return 11 * n, 7


def _message(reply: dict[str, Any]) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "assistant", "content": reply.get("content")}
    if "refusal" in reply:
        msg["refusal"] = reply["refusal"]
    if reply.get("tool_calls"):
        msg["tool_calls"] = [
            {"id": c["id"], "type": "function",
             "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])}}
            for c in reply["tool_calls"]]
    return msg


class FakeOpenAI:
    def __init__(self, replies: Sequence[dict[str, Any]]) -> None:
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return None

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append(body)
                n = len(outer.requests)
                reply = outer.replies[min(n, len(outer.replies)) - 1]
                tin, tout = usage_of(n)
                out = {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": 0,
                       "model": body["model"],
                       "choices": [{"index": 0, "message": _message(reply),
                                    "finish_reason": reply.get("finish_reason") or (
                                        "tool_calls" if reply.get("tool_calls") else "stop")}],
                       "usage": {"prompt_tokens": tin, "completion_tokens": tout,
                                 "total_tokens": tin + tout}}
                data = json.dumps(out).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
