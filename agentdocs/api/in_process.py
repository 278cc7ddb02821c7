"""The REST API called in-process: a `requests` adapter that hands each request to
this Django application's WSGI handler instead of the network.

The web app's `/mcp/` serves the same MCP tools as `agentdocs mcp`, and those talk
to the REST API through a `requests.Session` (`agentdocs.cli.mcp.ProjectApi`). With
this adapter mounted on that session, every tool call is a real API request (token
authentication, scopes, access checks, rate limits, the error shape) answered in the
thread of the `/mcp/` request, with no socket and no second worker.

Each request runs the whole middleware stack and its view, as from a client, but
not the request_started and request_finished signals of a WSGI request: the outer
`/mcp/` request owns the database connection (closing it in the middle, as those
signals may, would break the outer request's transaction, if any). It copies from
the outer request only what names the site (host, scheme, the proxy's forwarded
headers, the client address), so absolute URLs the API builds (a page's `next`)
point where the outer request did, and a rate limit counts the same caller.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Iterable, Mapping
from typing import Any, cast
from urllib.parse import unquote_to_bytes, urlsplit

import requests
from django.conf import settings
from django.core.handlers.wsgi import WSGIHandler
from django.http import HttpRequest, HttpResponse
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
        proxy_https = getattr(settings, "SECURE_PROXY_SSL_HEADER", None)
        if proxy_https and proxy_https[0] in meta:
            self.site[proxy_https[0]] = meta[proxy_https[0]]
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
        handler = _wsgi_handler()
        answer = handler.get_response(handler.request_class(self.environ(request)))
        if isinstance(answer, HttpResponse):
            content = answer.content
        else:  # a streamed answer (an export's archive): none of the MCP tools asks for one
            content = b"".join(cast(Iterable[bytes], answer))
        response = requests.Response()
        response.status_code = answer.status_code
        response.reason = answer.reason_phrase
        response.headers = CaseInsensitiveDict(answer.items())
        response.encoding = get_encoding_from_headers(response.headers)
        response._content = content
        response.url = request.url or ""
        response.request = request
        return response

    def close(self) -> None:
        pass
