"""Sending one webhook request, and refusing to send it where it must not go.

The host is resolved here, every address it resolves to is checked, and the
connection goes to the checked address itself (the Host header and the TLS
server name keep the URL's host), so a name that resolves to a public address
when checked and to a private one a moment later cannot steer the request.
Redirects are not followed: a 3xx is an answer like any other non-2xx.
"""

from __future__ import annotations

import ipaddress
import socket
import time
from dataclasses import dataclass

import certifi
import urllib3
from urllib3.exceptions import (
    ConnectTimeoutError,
    HTTPError,
    NewConnectionError,
    ReadTimeoutError,
    SSLError,
)
from urllib3.exceptions import TimeoutError as Urllib3TimeoutError

from agentdocs.core.webhooks import address_refusal, split_url

USER_AGENT = "agentdocs-webhooks"
MAX_ERROR_LENGTH = 500

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True)
class SendResult:
    status_code: int | None
    error: str
    response_body: str
    duration_ms: int

    @property
    def succeeded(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


class Refused(Exception):
    """The request was not sent: the host resolves to an address deliveries may not reach."""


class _Timeout(Exception):
    pass


def resolve(host: str, port: int, *, allow_private: bool) -> list[Address]:
    """Every address ``host`` resolves to, each checked; Refused names the first refused."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    addresses: list[Address] = []
    for info in infos:
        # An IPv6 link-local address may carry its zone ("fe80::1%eth0").
        address = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
        if address not in addresses:
            addresses.append(address)
    if not allow_private:
        for address in addresses:
            refusal = address_refusal(address)
            if refusal is not None:
                raise Refused(f"refused: {address} is {refusal}")
    if not addresses:
        raise socket.gaierror(socket.EAI_NONAME, "no address")
    return addresses


def _read_capped(response: urllib3.BaseHTTPResponse, cap: int, deadline: float) -> bytes:
    """At most ``cap`` bytes of the body, read as they come, and no later than ``deadline``."""
    chunks: list[bytes] = []
    size = 0
    while size < cap:
        if time.monotonic() > deadline:
            raise _Timeout()
        chunk = response.read(min(1024, cap - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _excerpt(data: bytes) -> str:
    # A database text column holds no NUL.
    return data.decode("utf-8", "replace").replace("\x00", "\ufffd")


def _post(
    *,
    address: Address,
    url: str,
    body: bytes,
    headers: dict[str, str],
    timeout: float,
    body_cap: int,
    deadline: float,
    ca_certs: str,
) -> tuple[int, bytes, str]:
    parts, port = split_url(url)
    host = parts.hostname or ""
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    default_port = 443 if parts.scheme.lower() == "https" else 80
    host_header = f"[{host}]" if ":" in host else host
    if port != default_port:
        host_header = f"{host_header}:{port}"
    pool: urllib3.HTTPConnectionPool
    options = {
        "port": port,
        "timeout": urllib3.Timeout(total=timeout),
        "retries": False,
        "maxsize": 1,
    }
    if parts.scheme.lower() == "https":
        pool = urllib3.HTTPSConnectionPool(
            str(address),
            server_hostname=host,
            assert_hostname=host,
            cert_reqs="CERT_REQUIRED",
            ca_certs=ca_certs,
            **options,  # type: ignore[arg-type]
        )
    else:
        pool = urllib3.HTTPConnectionPool(str(address), **options)  # type: ignore[arg-type]
    try:
        response = pool.urlopen(
            "POST",
            path,
            body=body,
            headers={**headers, "Host": host_header},
            redirect=False,
            retries=False,
            assert_same_host=False,
            preload_content=False,
            release_conn=False,
        )
        try:
            data = _read_capped(response, body_cap, deadline)
            location = response.headers.get("Location", "")
            return response.status, data, location
        finally:
            response.close()
    finally:
        pool.close()


def send(
    *,
    url: str,
    body: bytes,
    headers: dict[str, str],
    timeout: float,
    body_cap: int,
    allow_private: bool,
    ca_certs: str | None = None,
) -> SendResult:
    """POST ``body`` to ``url``; whatever happens is a result, never an exception.
    An https URL's certificate is checked against ``ca_certs`` (default: certifi's)."""
    started = time.monotonic()
    deadline = started + timeout
    status: int | None = None
    data = b""
    error = ""
    parts, port = split_url(url)
    host = parts.hostname or ""
    try:
        addresses = resolve(host, port, allow_private=allow_private)
        status, data, location = _post(
            address=addresses[0],
            url=url,
            body=body,
            headers={
                **headers,
                "Content-Type": "application/json",
                "User-Agent": USER_AGENT,
            },
            timeout=timeout,
            body_cap=body_cap,
            deadline=deadline,
            ca_certs=ca_certs or certifi.where(),
        )
        if 300 <= status < 400:
            where = f" to {location}" if location else ""
            error = f"redirect (HTTP {status}{where}) not followed"
        elif not 200 <= status < 300:
            error = f"HTTP {status}"
    except Refused as refused:
        error = str(refused)
    except socket.gaierror as failure:
        error = f"could not resolve {host}: {failure.strerror or failure}"
    except NewConnectionError as failure:
        # Before the timeouts: urllib3 makes it a ConnectTimeoutError for old callers.
        cause = failure.__cause__ or failure.__context__
        error = f"connection failed: {getattr(cause, 'strerror', None) or failure}"
    except (_Timeout, ConnectTimeoutError, ReadTimeoutError, Urllib3TimeoutError, TimeoutError):
        error = f"timed out after {timeout:g} s"
    except SSLError as failure:
        error = f"TLS failed: {failure}"
    except (HTTPError, OSError) as failure:
        error = f"connection failed: {failure}"
    duration_ms = int((time.monotonic() - started) * 1000)
    return SendResult(
        status_code=status,
        error=error[:MAX_ERROR_LENGTH],
        response_body=_excerpt(data),
        duration_ms=duration_ms,
    )
