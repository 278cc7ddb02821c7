#!/usr/bin/env python3
"""A stand-in for the model APIs of Claude Code, Codex and Gemini CLI that records what
each client sends, so that one can read where an MCP server's `instructions` land.

    python3 scripts/mcp_clients/fake_model.py --port 8732 --record requests.jsonl

Every request is appended to the record file as one JSON line: ``method``, ``path``,
``headers`` (without credentials) and ``body`` (parsed JSON when it is JSON). Each answer
is the smallest valid one of its API that says "ok" and ends the turn:

- Anthropic Messages (``POST /v1/messages``, streamed or not; ``count_tokens``), for
  Claude Code with ``ANTHROPIC_BASE_URL=http://127.0.0.1:PORT``;
- OpenAI Responses (``POST .../responses``, streamed), for Codex with a
  ``model_providers`` entry whose ``base_url`` is ``http://127.0.0.1:PORT/v1``;
- Gemini (``...:generateContent``, ``...:streamGenerateContent``, ``...:countTokens``),
  for Gemini CLI with ``GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:PORT``; a request for
  JSON (its model router's) gets a value that fits the schema it sends.

Anything else is a 404 JSON body (recorded too). Only the standard library is used; it
serves on 127.0.0.1 only and runs until it is killed. `measure.py` beside this file
starts it.
"""

from __future__ import annotations

import argparse
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ANSWER = "ok"
SECRET_HEADERS = {"authorization", "x-api-key", "x-goog-api-key", "cookie"}
_lock = threading.Lock()


def sse(events: list[tuple[str | None, dict[str, Any]]]) -> bytes:
    """Server-sent events: each ``(event name or None, data)``."""
    chunks = []
    for name, data in events:
        head = f"event: {name}\n" if name else ""
        chunks.append(f"{head}data: {json.dumps(data)}\n\n")
    return "".join(chunks).encode()


def anthropic_message(model: str) -> dict[str, Any]:
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": ANSWER}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def anthropic_stream(model: str) -> bytes:
    start = anthropic_message(model) | {"content": [], "stop_reason": None}
    return sse(
        [
            ("message_start", {"type": "message_start", "message": start}),
            (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "text", "text": ""},
                },
            ),
            (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": ANSWER},
                },
            ),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                    "usage": {"output_tokens": 1},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
    )


def responses_stream(model: str) -> bytes:
    item = {
        "type": "message",
        "id": "msg_fake",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": ANSWER, "annotations": []}],
    }
    response = {"id": "resp_fake", "object": "response", "model": model, "output": []}
    usage = {
        "input_tokens": 1,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 1,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 2,
    }
    return sse(
        [
            (
                "response.created",
                {
                    "type": "response.created",
                    "response": response | {"status": "in_progress"},
                },
            ),
            (
                "response.output_item.done",
                {"type": "response.output_item.done", "output_index": 0, "item": item},
            ),
            (
                "response.completed",
                {
                    "type": "response.completed",
                    "response": response
                    | {"status": "completed", "output": [item], "usage": usage},
                },
            ),
        ]
    )


def sample(schema: Any) -> Any:
    """A value that fits a JSON schema (Gemini's upper-case types too), for a client that
    asks for JSON (Gemini CLI's model router): the smallest answer it accepts."""
    if not isinstance(schema, dict):
        return ANSWER
    kind = str(schema.get("type", "object")).lower()
    if schema.get("enum"):
        return schema["enum"][0]
    if kind == "object":
        properties = schema.get("properties") or {}
        return {name: sample(sub) for name, sub in properties.items()}
    if kind == "array":
        return [sample(schema.get("items"))]
    if kind in ("integer", "number"):
        return schema.get("minimum", 1)
    if kind == "boolean":
        return False
    return ANSWER


def gemini_answer(body: Any = None) -> dict[str, Any]:
    config = (body.get("generationConfig") or {}) if isinstance(body, dict) else {}
    text = ANSWER
    if config.get("responseMimeType") == "application/json":
        text = json.dumps(sample(config.get("responseJsonSchema") or config.get("responseSchema")))
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": text}]},
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
        "modelVersion": "fake",
    }


class Handler(BaseHTTPRequestHandler):
    server_version = "fake-model/1"
    record: Path

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _record(self, body: Any) -> None:
        headers = {k: v for k, v in self.headers.items() if k.lower() not in SECRET_HEADERS}
        line = {"method": self.command, "path": self.path, "headers": headers, "body": body}
        with _lock, self.record.open("a", encoding="utf-8") as out:
            out.write(json.dumps(line) + "\n")

    def _send(self, status: int, payload: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _json(self, data: Any, status: int = 200) -> None:
        self._send(status, json.dumps(data).encode(), "application/json")

    def _body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            return raw.decode("utf-8", "replace")

    def do_GET(self) -> None:
        self._record(None)
        if self.path.split("?")[0].rstrip("/").endswith("/models"):
            self._json({"object": "list", "data": [], "models": []})
        else:
            self._json({"error": {"message": f"fake model: no GET {self.path}"}}, 404)

    def do_POST(self) -> None:
        body = self._body()
        self._record(body)
        path = self.path.split("?")[0]
        model = body.get("model", "fake") if isinstance(body, dict) else "fake"
        streamed = isinstance(body, dict) and bool(body.get("stream"))
        if path.endswith("/messages/count_tokens"):
            self._json({"input_tokens": 1})
        elif path.endswith("/messages"):
            if streamed:
                self._send(200, anthropic_stream(model), "text/event-stream")
            else:
                self._json(anthropic_message(model))
        elif path.endswith("/responses"):
            self._send(200, responses_stream(model), "text/event-stream")
        elif path.endswith(":streamGenerateContent"):
            self._send(200, sse([(None, gemini_answer(body))]), "text/event-stream")
        elif path.endswith(":generateContent"):
            self._json(gemini_answer(body))
        elif path.endswith(":countTokens"):
            self._json({"totalTokens": 1})
        else:
            self._json({"error": {"message": f"fake model: no POST {self.path}"}}, 404)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--record", type=Path, required=True, help="JSON lines, appended")
    options = parser.parse_args()
    Handler.record = options.record
    server = ThreadingHTTPServer(("127.0.0.1", options.port), Handler)
    server.serve_forever()


if __name__ == "__main__":
    main()
