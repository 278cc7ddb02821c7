"""`agentdocs.client.http`, the client's HTTP on the standard library, against a real
server on 127.0.0.1: the session's headers and a JSON body sent, Content-Length and
chunked answers read, connections kept alive and opened again when the server closed
them, a GET's redirects followed with the token kept to the same origin, and no
answer as TransportError (Timeout when the server is slow)."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from agentdocs.client import http


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    seen: list[dict] = []

    def log_message(self, *args: object) -> None:
        pass

    def _answer(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _record(self, body: bytes = b"") -> None:
        Handler.seen.append(
            {
                "method": self.command,
                "path": self.path,
                "authorization": self.headers.get("Authorization"),
                "content_type": self.headers.get("Content-Type"),
                "body": body,
                "port": self.server.server_address[1],
                "client_port": self.client_address[1],
            }
        )

    def do_GET(self) -> None:
        self._record()
        if self.path == "/chunked":
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for piece in (b'{"a": ', b"[1, 2]", b"}"):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.write(b"0\r\n\r\n")
        elif self.path == "/close":
            self.close_connection = True
            self._answer(200, b"bye", {"Connection": "close"})
        elif self.path.startswith("/redirect-to/"):
            self._answer(302, b"", {"Location": self.path.removeprefix("/redirect-to")})
        elif self.path.startswith("/elsewhere/"):
            port = self.path.split("/")[2]
            self._answer(302, b"", {"Location": f"http://127.0.0.1:{port}/landed"})
        elif self.path == "/not-modified":
            self._answer(304, b"", {"ETag": '"e"'})
        else:
            self._answer(200, b'{"ok": true}', {"Agentdocs-Signature": "sig"})

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._record(body)
        self._answer(422, b'{"detail": "no", "field": "x"}')


@pytest.fixture
def servers() -> Iterator[list[str]]:
    Handler.seen = []
    started = [ThreadingHTTPServer(("127.0.0.1", 0), Handler) for _ in range(2)]
    threads = [threading.Thread(target=server.serve_forever, daemon=True) for server in started]
    for thread in threads:
        thread.start()
    yield [f"http://127.0.0.1:{server.server_address[1]}" for server in started]
    for server in started:
        server.shutdown()
        server.server_close()


def test_headers_json_body_and_any_status_come_back_as_a_response(servers):
    session = http.Session({"Authorization": "Bearer t"})
    answer = session.post(f"{servers[0]}/bindings/", json={"process": "p", "n": 1}, timeout=5)
    assert answer.status_code == 422 and answer.json() == {"detail": "no", "field": "x"}
    got = session.get(f"{servers[0]}/x", params={"label": "a b"}, timeout=5)
    assert got.json() == {"ok": True} and got.headers.get("agentdocs-signature") == "sig"
    post, get = Handler.seen
    assert post["authorization"] == get["authorization"] == "Bearer t"
    assert post["content_type"] == "application/json"
    assert json.loads(post["body"]) == {"process": "p", "n": 1}
    assert get["path"] == "/x?label=a+b"
    assert post["client_port"] == get["client_port"]  # one connection, kept alive


def test_chunked_and_empty_answers_are_read_whole(servers):
    session = http.Session()
    assert session.get(f"{servers[0]}/chunked", timeout=5).json() == {"a": [1, 2]}
    not_modified = session.get(f"{servers[0]}/not-modified", timeout=5)
    assert (not_modified.status_code, not_modified.content) == (304, b"")
    assert not_modified.headers.get("ETag") == '"e"'
    assert session.get(f"{servers[0]}/x", timeout=5).status_code == 200


def test_a_connection_the_server_closed_is_opened_again(servers):
    session = http.Session()
    assert session.get(f"{servers[0]}/close", timeout=5).content == b"bye"
    assert session.get(f"{servers[0]}/x", timeout=5).status_code == 200
    assert Handler.seen[0]["client_port"] != Handler.seen[1]["client_port"]


def test_redirects_are_followed_with_the_token_only_to_the_same_origin(servers):
    session = http.Session({"Authorization": "Bearer t"})
    assert session.get(f"{servers[0]}/redirect-to/x", timeout=5).json() == {"ok": True}
    port = servers[1].rsplit(":", 1)[1]
    assert session.get(f"{servers[0]}/elsewhere/{port}", timeout=5).status_code == 200
    same, landed_here, away, landed_there = Handler.seen
    assert same["path"] == "/redirect-to/x" and away["path"] == f"/elsewhere/{port}"
    assert landed_here["path"] == "/x" and landed_here["authorization"] == "Bearer t"
    assert landed_there["path"] == "/landed" and landed_there["port"] == int(port)
    assert landed_there["authorization"] is None


def test_no_answer_is_a_transport_error_and_a_slow_one_a_timeout():
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    with pytest.raises(http.TransportError) as refused:
        http.get(f"http://127.0.0.1:{port}/", timeout=1)
    assert not isinstance(refused.value, http.Timeout)
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        with pytest.raises(http.Timeout):
            http.get(f"http://127.0.0.1:{silent.getsockname()[1]}/", timeout=0.2)
    with pytest.raises(http.TransportError):
        http.get("ftp://127.0.0.1/", timeout=1)
