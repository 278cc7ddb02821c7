"""The REST API called in-process: a `requests` adapter that hands each request to
this Django application's WSGI handler instead of the network.

The web app's `/mcp/` serves the same MCP tools as `agentdocs mcp`, and those talk
to the REST API through a `requests.Session` (`agentdocs.cli.mcp.ProjectApi`). With
this adapter mounted on that session, every tool call is a real API request (token
authentication, scopes, access checks, rate limits, the error shape) answered in the
thread of the `/mcp/` request, with no socket and no second worker.

Each request runs the whole middleware stack, as from a client; it copies from the
outer request only what names the site (host, scheme, the proxy's forwarded
headers, the client address), so absolute URLs the API builds (a page's `next`)
point where the outer request did, and a rate limit counts the same caller.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import unquote_to_bytes, urlsplit

import requests
from django.core.handlers.wsgi import WSGIHandler
from django.http import HttpRequest
from requests.adapters import BaseAdapter
from requests.structures import CaseInsensitiveDict
from requests.utils import get_encoding_from_headers

# What an inner request takes from the outer one's WSGI environment.
SITE_KEYS = ("SERVER_NAME", "SERVER_PORT", "SERVER_PROTOCOL", "REMOTE_ADDR", "wsgi.url_scheme")
SITE_HEADER_PREFIX = "HTTP_X_FORWARDED_"

_handler: WSGIHandler | None = None


def _wsgi_handler() -> WSGIHandler:
    """One handler per process: building one loads the middleware."""
    global _handler
    if _handler is None:
        _handler = WSGIHandler()
    return _handler


class InProcessAdapter(BaseAdapter):
    """Sends a `requests` request to this application, in the calling thread."""

    def __init__(self, outer: HttpRequest) -> None:
        super().__init__()
        meta: Mapping[str, Any] = outer.META
        self.site = {key: meta[key] for key in SITE_KEYS if key in meta}
        self.site.update({k: v for k, v in meta.items() if k.startswith(SITE_HEADER_PREFIX)})
        self.site["HTTP_HOST"] = outer.get_host()
        self.script_name = str(meta.get("SCRIPT_NAME", ""))

    def environ(self, request: requests.PreparedRequest) -> dict[str, Any]:
        url = urlsplit(request.url or "")
        body = request.body or b""
        if isinstance(body, str):
            body = body.encode("utf-8")
        path = unquote_to_bytes(url.path).decode("iso-8859-1")  # WSGI's PATH_INFO encoding
        if self.script_name and path.startswith(self.script_name):
            path = path[len(self.script_name) :]
        environ: dict[str, Any] = {
            **self.site,
            "REQUEST_METHOD": request.method or "GET",
            "SCRIPT_NAME": self.script_name,
            "PATH_INFO": path or "/",
            "QUERY_STRING": url.query,
            "CONTENT_LENGTH": str(len(body)),
            "wsgi.input": io.BytesIO(body),
            "wsgi.errors": sys.stderr,
            "wsgi.version": (1, 0),
            "wsgi.multithread": True,
            "wsgi.multiprocess": True,
            "wsgi.run_once": False,
        }
        for name, value in request.headers.items():
            key = name.upper().replace("-", "_")
            if key in ("CONTENT_TYPE", "CONTENT_LENGTH"):
                environ[key] = value
            elif key != "HOST":
                environ[f"HTTP_{key}"] = value
        return environ

    def send(  # type: ignore[override]
        self, request: requests.PreparedRequest, **kwargs: Any
    ) -> requests.Response:
        started: dict[str, Any] = {}

        def start_response(
            status: str, headers: list[tuple[str, str]], exc_info: Any = None, /
        ) -> Callable[[bytes], object]:
            started.update(status=status, headers=headers)
            return self._write_unsupported

        answer = _wsgi_handler()(self.environ(request), start_response)
        try:
            content = b"".join(answer)
        finally:
            # The server's part: closing the response ends the request (request_finished).
            close = getattr(answer, "close", None)
            if close is not None:
                close()
        code, _, reason = str(started["status"]).partition(" ")
        response = requests.Response()
        response.status_code = int(code)
        response.reason = reason
        response.headers = CaseInsensitiveDict(started["headers"])
        response.encoding = get_encoding_from_headers(response.headers)
        response._content = content
        response.url = request.url or ""
        response.request = request
        return response

    @staticmethod
    def _write_unsupported(data: bytes) -> object:
        raise NotImplementedError("Django returns its body; it never calls write()")

    def close(self) -> None:
        pass
