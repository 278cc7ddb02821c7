"""HTTP/1.1 over a plain socket: the client's `http://` requests, without `http.client`.

`agentdocs.client.http` sends every plain-http request (a local server, or any server
through an http proxy) with `Connection` here, and only `https://` ones with the
standard library's `http.client`. Why a module of its own: `http.client` imports the
`email` package's parser and message classes (for its header parsing) and `ssl`
whatever the URL, and those imports were the largest part of `agentdocs hook
context`'s start after the interpreter's own (bench/README.md, `hook_context.py`): a
hook that sits on every agent session's start against `http://127.0.0.1` paid for
TLS and MIME it never used.

What it speaks is the part of HTTP/1.1 (RFC 9112) a client of one JSON API needs: one
request at a time on a kept-alive connection; the answer's body by `Content-Length`,
by `Transfer-Encoding: chunked` (extensions and trailers read and dropped) or up to
the connection's close, and none for HEAD, 1xx, 204 and 304; interim 1xx answers
skipped; a connection the server closed (`Connection: close`, HTTP/1.0, a body read to
the close) not used again. A socket timeout raises `TimeoutError`, a kept-alive
connection the server closed meanwhile `Disconnected` (a `ConnectionResetError`, as
`http.client`'s `RemoteDisconnected` is), and an answer that is not HTTP, or breaks
off, `ProtocolError`. No compression is asked for (`Accept-Encoding: identity`).
No Django here.
"""

from __future__ import annotations

import socket
from typing import BinaryIO

# Limits on what the server may send, as `http.client` has them.
MAX_LINE_BYTES = 65536
MAX_HEADERS = 100
# A body read in pieces of at most this many bytes.
READ_BYTES = 65536
NO_BODY_STATUSES = frozenset({204, 304})
# Methods whose request carries a body: sent with `Content-Length: 0` when it is empty.
BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
_FORBIDDEN = frozenset("\r\n\x00")


class ProtocolError(Exception):
    """The answer is not HTTP/1.x, or it broke off; what was wrong, in words."""


class Disconnected(ConnectionResetError):
    """The server closed the connection without answering (a kept-alive connection it
    had closed meanwhile: the request may be sent again on a new one)."""


class Headers:
    """An answer's header fields in the order received; ``get`` by name, any case (the
    first field of that name, as `email.message.Message.get`)."""

    __slots__ = ("fields",)

    def __init__(self, fields: list[tuple[str, str]]) -> None:
        self.fields = fields

    def get(self, name: str, default: str | None = None) -> str | None:
        wanted = name.lower()
        for field, value in self.fields:
            if field.lower() == wanted:
                return value
        return default

    def get_all(self, name: str) -> list[str]:
        wanted = name.lower()
        return [value for field, value in self.fields if field.lower() == wanted]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and bool(self.get_all(name))

    def __repr__(self) -> str:
        return f"Headers({self.fields!r})"


class Answer:
    """One response: status, reason, headers, the whole body, and whether the server
    closes the connection after it (it is then not used again)."""

    __slots__ = ("content", "headers", "reason", "status", "will_close")

    def __init__(
        self, status: int, reason: str, headers: Headers, content: bytes, will_close: bool
    ) -> None:
        self.status = status
        self.reason = reason
        self.headers = headers
        self.content = content
        self.will_close = will_close


def _checked(text: str, what: str) -> str:
    if _FORBIDDEN.intersection(text):
        raise ValueError(f"Invalid {what}: {text!r} holds a line break or NUL")
    return text


class Connection:
    """A connection to ``host``:``port``, opened at the first request and kept open
    while the server keeps it. ``timeout`` applies to the connect and to every read."""

    def __init__(self, host: str, port: int, timeout: float) -> None:
        self.host = host
        self.port = port
        self.timeout = timeout
        self.sock: socket.socket | None = None
        self._file: BinaryIO | None = None

    def _host_header(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == 80 else f"{host}:{self.port}"

    def _open(self) -> None:
        # An ASCII host is passed as bytes: `socket` encodes a str with the `idna` codec,
        # an import of its own.
        host: str | bytes = self.host
        if self.host.isascii():
            host = self.host.encode("ascii")
        self.sock = socket.create_connection((host, self.port), self.timeout)  # type: ignore[arg-type]
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._file = self.sock.makefile("rb")

    def send(
        self, method: str, target: str, *, body: bytes | None, headers: dict[str, str]
    ) -> None:
        """Send one request; ``headers`` may name Host (a proxied request), else it is
        this connection's origin."""
        if " " in target or _FORBIDDEN.intersection(target):
            raise ProtocolError(f"not a request target: {target!r}")
        names = {name.lower() for name in headers}
        lines = [f"{_checked(method, 'method')} {target} HTTP/1.1"]
        if "host" not in names:
            lines.append(f"Host: {self._host_header()}")
        if "accept-encoding" not in names:
            lines.append("Accept-Encoding: identity")
        for name, value in headers.items():
            if ":" in name or not name:
                raise ValueError(f"Invalid header name {name!r}")
            lines.append(f"{_checked(name, 'header name')}: {_checked(str(value), 'header value')}")
        if body is not None or method in BODY_METHODS:
            lines.append(f"Content-Length: {len(body or b'')}")
        data = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (body or b"")
        if self.sock is None:
            self._open()
        assert self.sock is not None
        self.sock.settimeout(self.timeout)
        self.sock.sendall(data)

    def _line(self) -> bytes:
        assert self._file is not None
        line = self._file.readline(MAX_LINE_BYTES + 1)
        if len(line) > MAX_LINE_BYTES:
            raise ProtocolError("a line of the answer is too long")
        return line

    def _fields(self) -> list[tuple[str, str]]:
        fields: list[tuple[str, str]] = []
        while True:
            line = self._line()
            if not line:
                raise ProtocolError("the answer broke off in its headers")
            if line in (b"\r\n", b"\n"):
                return fields
            if len(fields) >= MAX_HEADERS:
                raise ProtocolError(f"more than {MAX_HEADERS} header fields")
            text = line.decode("latin-1").rstrip("\r\n")
            if text[:1] in (" ", "\t") and fields:  # an obsolete folded line
                name, value = fields[-1]
                fields[-1] = (name, f"{value} {text.strip()}")
                continue
            name, colon, value = text.partition(":")
            if not colon or not name or name != name.strip():
                raise ProtocolError(f"not a header field: {text[:80]!r}")
            fields.append((name, value.strip()))

    def _read_exactly(self, count: int) -> bytes:
        assert self._file is not None
        data = self._file.read(count)
        if len(data) != count:
            raise ProtocolError(f"the body broke off after {len(data)} of {count} bytes")
        return data

    def _chunked(self) -> bytes:
        pieces: list[bytes] = []
        while True:
            line = self._line()
            size_text = line.split(b";", 1)[0].strip()
            try:
                size = int(size_text, 16)
            except ValueError:
                raise ProtocolError(f"not a chunk size: {line[:40]!r}") from None
            if size < 0:
                raise ProtocolError(f"not a chunk size: {line[:40]!r}")
            if size == 0:
                self._fields()  # the trailers, up to the blank line
                return b"".join(pieces)
            pieces.append(self._read_exactly(size))
            if self._line() not in (b"\r\n", b"\n"):
                raise ProtocolError("a chunk does not end with a line break")

    def receive(self, method: str) -> Answer:
        """The answer to the request sent last, its body read whole."""
        while True:
            line = self._line()
            if not line:
                raise Disconnected("the server closed the connection without answering")
            version, _, rest = line.decode("latin-1").rstrip("\r\n").partition(" ")
            status_text, _, reason = rest.partition(" ")
            if not version.startswith("HTTP/1.") or len(status_text) != 3:
                raise ProtocolError(f"not an HTTP/1.x status line: {line[:80]!r}")
            try:
                status = int(status_text)
            except ValueError:
                raise ProtocolError(f"not an HTTP status: {status_text!r}") from None
            headers = Headers(self._fields())
            if status >= 200 or status < 100:
                break
            # An interim answer (100 Continue, 103 Early Hints): the final one follows.
        tokens = {
            token.strip().lower()
            for value in headers.get_all("Connection")
            for token in value.split(",")
        }
        will_close = "close" in tokens or (version == "HTTP/1.0" and "keep-alive" not in tokens)
        encoding = ",".join(headers.get_all("Transfer-Encoding")).lower()
        lengths = {value.strip() for value in headers.get_all("Content-Length")}
        if method == "HEAD" or status in NO_BODY_STATUSES:
            content = b""
        elif encoding:
            if encoding.rsplit(",", 1)[-1].strip() != "chunked":
                raise ProtocolError(f"an unsupported Transfer-Encoding: {encoding}")
            content = self._chunked()
        elif lengths:
            if len(lengths) != 1 or not next(iter(lengths)).isdigit():
                raise ProtocolError(f"a bad Content-Length: {sorted(lengths)}")
            content = self._read_exactly(int(next(iter(lengths))))
        else:  # neither: the body is what comes until the server closes
            assert self._file is not None
            content = self._file.read()
            will_close = True
        return Answer(status, reason.strip(), headers, content, will_close)

    def close(self) -> None:
        file, sock = self._file, self.sock
        self._file = self.sock = None
        if file is not None:
            file.close()
        if sock is not None:
            sock.close()
