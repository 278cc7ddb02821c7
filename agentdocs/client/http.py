"""The command-line client's HTTP: `wire` for `http://`, `http.client` for `https://`.

Every request the client makes goes through `Session.request`: the session's headers
(the token's `Authorization`) on each request, a JSON body as `requests` sends one, a
timeout for the connection and for each read, TLS verified against the CA bundle
`requests` would use (`REQUESTS_CA_BUNDLE` or `CURL_CA_BUNDLE`, else certifi's when it
is installed, else the system's), the proxies of `HTTP_PROXY`, `HTTPS_PROXY`,
`ALL_PROXY` and `NO_PROXY`, and a GET's redirects followed (the token only to the same
origin). A request that gets no HTTP answer raises `TransportError` (`Timeout` when the
server took too long); any answer, 4xx and 5xx included, is a `Response`.

Why not `requests`: an agent tool's hook starts a process at every session's start,
resume and compaction, and importing `requests` (urllib3, charset detection, idna)
cost that process more than its interpreter's start and all its round trips together
(bench/README.md, `hook_context.py`). Why plain http is not `http.client` either: it
imports the `email` package and `ssl` whatever the URL, the largest of the hook's
imports once `requests` was gone (`agentdocs.client.wire`). No Django here.
"""

from __future__ import annotations

import json as jsonlib
import os
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import unquote, urlencode, urljoin, urlsplit

from agentdocs.client import wire

USER_AGENT = "agentdocs-cli"
MAX_REDIRECTS = 5
REDIRECTS = frozenset({301, 302, 303, 307, 308})
# A reused connection the server closed meanwhile: the request is sent again, once
# (`wire.Disconnected` and `http.client.RemoteDisconnected` are ConnectionResetErrors).
_STALE = (ConnectionResetError, BrokenPipeError)


class TransportError(Exception):
    """The request got no HTTP answer (refused, reset, TLS, a bad URL); why, in words."""


class Timeout(TransportError):
    """The server did not connect or answer within the timeout."""


class Response:
    """An HTTP answer: ``status_code``, ``reason``, ``headers`` (case-insensitive
    ``get``), the body's bytes in ``content``; ``json()`` raises ValueError when the
    body is not JSON."""

    def __init__(
        self, *, status_code: int, reason: str, headers: wire.Headers, content: bytes, url: str
    ) -> None:
        self.status_code = status_code
        self.reason = reason
        self.headers = headers
        self.content = content
        self.url = url

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")

    def json(self) -> Any:
        return jsonlib.loads(self.content)


def _no_proxy(host: str, port: int) -> bool:
    entries = os.environ.get("no_proxy") or os.environ.get("NO_PROXY") or ""
    for entry in (item.strip().lower() for item in entries.split(",")):
        if entry == "*":
            return True
        if not entry:
            continue
        name, _, entry_port = entry.partition(":")
        if entry_port and entry_port != str(port):
            continue
        name = name.lstrip(".")
        if host == name or host.endswith("." + name):
            return True
    return False


def _proxy(scheme: str, host: str, port: int) -> str | None:
    """The proxy URL for ``scheme``://``host``, as `requests` reads the environment."""
    for name in (f"{scheme}_proxy", "all_proxy"):
        proxy = os.environ.get(name) or os.environ.get(name.upper())
        if proxy:
            return None if _no_proxy(host.lower(), port) else proxy
    return None


def _tls_context() -> Any:
    import ssl  # only for https: a hook against http://localhost never pays for it

    cafile = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE")
    if not cafile:
        try:
            import certifi
        except ImportError:
            cafile = None
        else:
            cafile = certifi.where()
    if cafile and os.path.isdir(cafile):
        return ssl.create_default_context(capath=cafile)
    return ssl.create_default_context(cafile=cafile or None)


class _TLSConnection:
    """An https connection: `http.client`'s, behind `wire.Connection`'s `send` and
    `receive` (imported only here: a plain-http run never pays for `http.client`, the
    `email` package it parses headers with, or `ssl`)."""

    def __init__(
        self,
        host: str,
        port: int,
        timeout: float,
        tunnel: tuple[str, int, dict[str, str]] | None,
    ) -> None:
        import http.client

        self._client = http.client
        self.timeout = timeout
        self.connection = http.client.HTTPSConnection(
            host, port, timeout=timeout, context=_tls_context()
        )
        if tunnel is not None:
            tunnel_host, tunnel_port, tunnel_headers = tunnel
            self.connection.set_tunnel(tunnel_host, tunnel_port, headers=tunnel_headers)

    def send(
        self, method: str, target: str, *, body: bytes | None, headers: dict[str, str]
    ) -> None:
        self.connection.timeout = self.timeout
        if self.connection.sock is not None:
            self.connection.sock.settimeout(self.timeout)
        try:
            self.connection.request(method, target, body=body, headers=headers)
        except self._client.HTTPException as error:
            raise wire.ProtocolError(f"{type(error).__name__}: {error}") from None

    def receive(self, method: str) -> wire.Answer:
        try:
            answer = self.connection.getresponse()
            content = answer.read()
        except ConnectionResetError:  # RemoteDisconnected among them: a stale connection
            raise
        except self._client.HTTPException as error:
            raise wire.ProtocolError(f"{type(error).__name__}: {error}") from None
        headers = wire.Headers(answer.getheaders())
        return wire.Answer(answer.status, answer.reason, headers, content, answer.will_close)

    def close(self) -> None:
        self.connection.close()


class Session:
    """Requests with shared headers over kept-alive connections, one per origin:
    `wire.Connection` for `http://`, `http.client` for `https://`."""

    def __init__(self, headers: Mapping[str, str] | None = None) -> None:
        self.headers: dict[str, str] = dict(headers or {})
        self._connections: dict[tuple[str, str, int], wire.Connection | _TLSConnection] = {}

    def _connection(
        self, scheme: str, host: str, port: int, timeout: float
    ) -> tuple[wire.Connection | _TLSConnection, bool, dict[str, str] | None]:
        """The connection to the origin (made when there is none), whether it was
        reused, and for plain http through a proxy the headers the proxy needs (None:
        no such proxy; the request line then names the path alone)."""
        proxy = _proxy(scheme, host, port)
        extra: dict[str, str] = {}
        if proxy is not None:
            parts = urlsplit(proxy if "://" in proxy else f"http://{proxy}")
            if parts.username:
                import base64

                pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
                token = base64.b64encode(pair.encode("utf-8")).decode("ascii")
                extra["Proxy-Authorization"] = f"Basic {token}"
        forward = extra if proxy is not None and scheme == "http" else None
        connection = self._connections.get((scheme, host, port))
        if connection is not None:
            connection.timeout = timeout
            return connection, True, forward
        address = (host, port) if proxy is None else (parts.hostname or "", parts.port or 80)
        if scheme == "https":
            tunnel = (host, port, extra) if proxy is not None else None
            connection = _TLSConnection(*address, timeout, tunnel)
        else:
            connection = wire.Connection(*address, timeout)
        self._connections[(scheme, host, port)] = connection
        return connection, False, forward

    def _drop(self, scheme: str, host: str, port: int) -> None:
        connection = self._connections.pop((scheme, host, port), None)
        if connection is not None:
            connection.close()

    def _once(
        self,
        method: str,
        url: str,
        *,
        body: bytes | None,
        headers: dict[str, str],
        timeout: float,
        while_waiting: Callable[[], object] | None = None,
    ) -> Response:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https") or not parts.hostname:
            raise TransportError(f"not an http(s) URL: {url!r}")
        try:
            port = parts.port or (443 if scheme == "https" else 80)
        except ValueError as error:
            raise TransportError(f"bad URL {url!r}: {error}") from None
        host = parts.hostname
        target = parts.path or "/"
        if parts.query:
            target += "?" + parts.query
        for attempt in range(2):
            connection, reused, forward = self._connection(scheme, host, port, timeout)
            # Through an http proxy the request line names the whole URL.
            path = target
            if forward is not None:
                path = url.split("#", 1)[0]
                forward = {"Host": parts.netloc.rpartition("@")[2], **forward}
            try:
                connection.send(method, path, body=body, headers={**headers, **(forward or {})})
                if while_waiting is not None:
                    while_waiting()
                    while_waiting = None
                answer = connection.receive(method)
            except TimeoutError:
                self._drop(scheme, host, port)
                raise Timeout(f"{url} did not answer within {timeout:g} s") from None
            except _STALE as error:
                self._drop(scheme, host, port)
                if reused and attempt == 0:
                    continue
                raise TransportError(f"{type(error).__name__}: {error}") from None
            except (OSError, wire.ProtocolError) as error:
                self._drop(scheme, host, port)
                raise TransportError(f"{type(error).__name__}: {error}") from None
            if answer.will_close:
                self._drop(scheme, host, port)
            return Response(
                status_code=answer.status,
                reason=answer.reason,
                headers=answer.headers,
                content=answer.content,
                url=url,
            )
        raise AssertionError("unreachable")  # pragma: no cover

    def request(
        self,
        method: str,
        url: str,
        *,
        timeout: float,
        json: object = None,
        params: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        while_waiting: Callable[[], object] | None = None,
    ) -> Response:
        """One request; a GET's redirects followed (at most MAX_REDIRECTS).
        ``while_waiting`` is called once, after the request is sent and before its
        answer is read: work of the caller's that overlaps the server's (the hook
        imports its signature check while the server renders)."""
        if params:
            url += ("&" if "?" in url else "?") + urlencode(params)
        sent = {"User-Agent": USER_AGENT, "Accept": "*/*", **self.headers, **(headers or {})}
        body = None
        if json is not None:
            body = jsonlib.dumps(json, allow_nan=False).encode("utf-8")
            sent["Content-Type"] = "application/json"
        origin = urlsplit(url)[:2]
        for _ in range(MAX_REDIRECTS + 1):
            response = self._once(
                method, url, body=body, headers=sent, timeout=timeout, while_waiting=while_waiting
            )
            while_waiting = None
            location = response.headers.get("Location")
            if method not in ("GET", "HEAD") or response.status_code not in REDIRECTS:
                return response
            if not location:
                return response
            url = urljoin(url, location)
            if urlsplit(url)[:2] != origin:
                sent = {name: value for name, value in sent.items() if name != "Authorization"}
        raise TransportError(f"more than {MAX_REDIRECTS} redirects from {url}")

    def get(self, url: str, *, timeout: float, **kwargs: Any) -> Response:
        return self.request("GET", url, timeout=timeout, **kwargs)

    def post(self, url: str, *, timeout: float, **kwargs: Any) -> Response:
        return self.request("POST", url, timeout=timeout, **kwargs)

    def close(self) -> None:
        for connection in self._connections.values():
            connection.close()
        self._connections.clear()


def get(url: str, *, timeout: float, headers: Mapping[str, str] | None = None) -> Response:
    """One GET on a connection of its own."""
    session = Session()
    try:
        return session.get(url, timeout=timeout, headers=headers)
    finally:
        session.close()
