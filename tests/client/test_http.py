"""`agentdocs.client.http`, the client's HTTP on the standard library, against a real
server on 127.0.0.1: the session's headers and a JSON body sent, Content-Length and
chunked answers read, connections kept alive and opened again when the server closed
them, a GET's redirects followed with the token kept to the same origin, TLS verified
against the bundle `requests` would use, and no answer as TransportError (Timeout when
the server is slow)."""

from __future__ import annotations

import ipaddress
import json
import socket
import ssl
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

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


def _self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key, made here (no CA knows it)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "agentdocs test")])
    now = datetime.now(UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@pytest.fixture
def tls_server(tmp_path) -> Iterator[tuple[str, Path]]:
    cert, key = _self_signed(tmp_path)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"https://127.0.0.1:{server.server_address[1]}", cert
    server.shutdown()
    server.server_close()


def test_tls_is_verified_against_the_bundle_requests_would_use(tls_server, monkeypatch):
    url, cert = tls_server
    monkeypatch.delenv("REQUESTS_CA_BUNDLE", raising=False)
    monkeypatch.delenv("CURL_CA_BUNDLE", raising=False)
    with pytest.raises(http.TransportError) as unknown:
        http.get(f"{url}/x", timeout=5)
    assert "CERTIFICATE_VERIFY_FAILED" in str(unknown.value)
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(cert))
    assert http.get(f"{url}/x", timeout=5).json() == {"ok": True}


def test_the_environment_s_proxy_is_used_unless_no_proxy_names_the_host(servers, monkeypatch):
    """The second server stands in for the proxy: a plain-http request through a proxy
    names the whole URL on its request line."""
    target, proxy = servers
    for name in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", proxy)
    assert http.get(f"{target}/x?a=1", timeout=5).status_code == 200
    monkeypatch.setenv("NO_PROXY", "example.org,127.0.0.1")
    assert http.get(f"{target}/x", timeout=5).status_code == 200
    through, direct = Handler.seen
    assert through["port"] == int(proxy.rsplit(":", 1)[1])
    assert through["path"] == f"{target}/x?a=1"
    assert direct["port"] == int(target.rsplit(":", 1)[1]) and direct["path"] == "/x"


def _raw_server(answers: list[bytes]) -> tuple[str, list[bytes]]:
    """A server on a bare socket that reads one request per connection and writes the
    next of ``answers`` as given, byte for byte, then closes: the framings and the
    faults a library server never sends. What each request was is kept."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(len(answers))
    requests: list[bytes] = []

    def serve() -> None:
        with listener:
            for answer in answers:
                connection, _ = listener.accept()
                with connection:
                    data = b""
                    while b"\r\n\r\n" not in data:
                        data += connection.recv(65536)
                    head, _, body = data.partition(b"\r\n\r\n")
                    for line in head.split(b"\r\n"):
                        if line.lower().startswith(b"content-length:"):
                            while len(body) < int(line.split(b":")[1]):
                                body += connection.recv(65536)
                    requests.append(head + b"\r\n\r\n" + body)
                    connection.sendall(answer)

    threading.Thread(target=serve, daemon=True).start()
    return f"http://127.0.0.1:{listener.getsockname()[1]}", requests


def test_plain_http_reads_every_framing_an_answer_may_have():
    url, requests = _raw_server(
        [
            # Interim answers skipped; a body read up to the close (no length given).
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"
            b"HTTP/1.1 200 OK\r\nX-Folded: a\r\n b\r\n\r\nuntil the close",
            # Chunked with an extension and a trailer; HTTP/1.0 answers close.
            b"HTTP/1.0 503 Service Unavailable\r\nTransfer-Encoding: chunked\r\n\r\n"
            b"3;x=1\r\nabc\r\n2\r\nde\r\n0\r\nTrailer: t\r\n\r\n",
            b"HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\nConnection: close\r\n\r\nno",
        ]
    )
    session = http.Session({"Authorization": "Bearer t"})
    first = session.get(f"{url}/a?b=1", timeout=5)
    assert (first.status_code, first.content) == (200, b"until the close")
    assert first.headers.get("x-folded") == "a b" and first.headers.get("Link") is None
    second = session.post(f"{url}/p", json={"n": 1}, timeout=5)
    assert (second.status_code, second.reason, second.content) == (
        503,
        "Service Unavailable",
        b"abcde",
    )
    assert session.get(f"{url}/gone", timeout=5).status_code == 404
    get, post, _ = requests
    port = url.rsplit(":", 1)[1]
    assert get.startswith(b"GET /a?b=1 HTTP/1.1\r\n")
    assert f"Host: 127.0.0.1:{port}\r\n".encode() in get and b"Authorization: Bearer t" in get
    assert b"Content-Length" not in get
    assert post.startswith(b"POST /p HTTP/1.1\r\n")
    assert b"Content-Length: 8\r\n" in post and post.endswith(b'\r\n\r\n{"n": 1}')


@pytest.mark.parametrize(
    "answer",
    [
        b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",  # breaks off
        b"SSH-2.0-OpenSSH_9.6\r\n",  # not HTTP
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",  # no chunk size
        b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
        b"HTTP/1.1 200 OK\r\nno colon\r\n\r\n",
        b"",  # closed without a word
    ],
)
def test_plain_http_answers_that_are_not_http_are_transport_errors(answer):
    url, _ = _raw_server([answer])
    with pytest.raises(http.TransportError) as raised:
        http.get(f"{url}/x", timeout=5)
    assert not isinstance(raised.value, http.Timeout)


def test_plain_http_times_out_in_the_middle_of_a_body():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    held: list[socket.socket] = []

    def serve() -> None:
        connection, _ = listener.accept()
        connection.recv(65536)
        connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nfirst bytes")
        held.append(connection)  # and nothing more, without closing

    threading.Thread(target=serve, daemon=True).start()
    with listener, pytest.raises(http.Timeout):
        http.get(f"http://127.0.0.1:{listener.getsockname()[1]}/", timeout=0.3)
    for connection in held:
        connection.close()
