"""Webhooks, the pure part: which events exist, what a webhook URL may be, which
addresses a delivery may never reach, the payload shape and the retry schedule.

The services resolve names and send requests; everything here is decided over
plain values, so the rules are tested without a network or a database.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import socket
from collections.abc import Sequence
from datetime import datetime
from typing import Any, TypedDict
from urllib.parse import SplitResult, urlsplit

from agentdocs.core.errors import InvalidInput

# What a webhook may subscribe to, in the order people meet them. `ping` is what the
# test button sends to every webhook, subscribed or not.
EVENT_TYPES: tuple[str, ...] = (
    "document.created",
    "document.updated",
    "document.deleted",
    "document.restored",
    "document.label_moved",
    "document.label_removed",
    "setting.changed",
    "recipe.changed",
    "membership.changed",
    "binding.created",
    "repository.state_changed",
    "change.opened",
    "change.approved",
    "change.merged",
    "change.rejected",
    "change.evals_attached",
    "outcome.reported",
    "audit.chain_broken",
    "ping",
)
PING = "ping"

MAX_URL_LENGTH = 2000
MAX_DESCRIPTION_LENGTH = 500
MAX_PROJECTS = 100

# Cloud metadata services that sit outside the ranges below (169.254.169.254, the
# AWS/GCP/Azure one, is link-local and refused with them).
METADATA_ADDRESSES = frozenset(
    {
        ipaddress.ip_address("fd00:ec2::254"),  # AWS over IPv6
        ipaddress.ip_address("100.100.100.200"),  # Alibaba Cloud
    }
)
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_SHARED = ipaddress.ip_network("100.64.0.0/10")  # carrier-grade NAT


class WebhookPayload(TypedDict):
    """The JSON body every delivery sends (Standard Webhooks' shape, our names)."""

    id: str
    type: str
    created_at: str
    tenant: str
    project: str | None
    data: dict[str, Any]


def payload(
    *,
    event_id: str,
    type: str,
    created_at: datetime,
    tenant: str,
    project: str | None,
    data: dict[str, Any],
) -> WebhookPayload:
    stamp = created_at.isoformat()
    if stamp.endswith("+00:00"):
        stamp = stamp[: -len("+00:00")] + "Z"
    return {
        "id": event_id,
        "type": type,
        "created_at": stamp,
        "tenant": tenant,
        "project": project,
        "data": data,
    }


def validate_events(events: object, *, field: str = "events") -> list[str]:
    """A non-empty list of known event types, deduplicated, in `EVENT_TYPES` order."""
    if not isinstance(events, list) or not events:
        raise InvalidInput(
            f"`{field}` must be a non-empty list of event types: {', '.join(EVENT_TYPES)}.",
            field=field,
        )
    for event in events:
        if not isinstance(event, str) or event not in EVENT_TYPES:
            raise InvalidInput(
                f"Unknown event type {event!r}; the event types are {', '.join(EVENT_TYPES)}.",
                field=field,
            )
    return [event for event in EVENT_TYPES if event in events]


def address_refusal(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    """Why a delivery may not go to ``address`` ("a loopback address"), or None.

    Addresses that embed an IPv4 address (IPv4-mapped, NAT64, 6to4, Teredo) are
    judged by the address they embed, which is where the packets end up.
    """
    if isinstance(address, ipaddress.IPv6Address):
        embedded: ipaddress.IPv4Address | None = address.ipv4_mapped or address.sixtofour
        if embedded is None and address.teredo is not None:
            embedded = address.teredo[1]
        if embedded is None and address in _NAT64:
            embedded = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if embedded is not None:
            return address_refusal(embedded)
    if address in METADATA_ADDRESSES:
        return "a cloud metadata address"
    if address.is_loopback:
        return "a loopback address"
    if address.is_link_local:
        return "a link-local address"
    if address.is_multicast:
        return "a multicast address"
    if address.is_unspecified:
        return "an unspecified address"
    if isinstance(address, ipaddress.IPv6Address) and address in ipaddress.ip_network("fc00::/7"):
        return "a unique-local address"
    if address.is_reserved:
        return "a reserved address"
    if address.is_private or address in _SHARED:
        return "a private address"
    if not address.is_global:
        return "a reserved address"
    return None


def literal_address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address a URL's host names without asking DNS: an IP literal, or one of the
    legacy IPv4 spellings (`2130706433`, `0x7f.1`) that resolvers still accept."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    try:
        return ipaddress.IPv4Address(socket.inet_aton(host))
    except (OSError, ValueError):
        return None


def _is_local_name(host: str) -> bool:
    name = host.lower().rstrip(".")
    return name == "localhost" or name.endswith(".localhost")


def validate_url(url: object, *, allow_private: bool, field: str = "url") -> str:
    """An http(s) URL without credentials, that a delivery could be sent to.

    A host that names a refused address by itself (an IP literal, `localhost`) is
    refused here; a name is resolved, and refused, when each delivery is sent.
    """
    if not isinstance(url, str) or not url.strip():
        raise InvalidInput("`url` must be an http or https URL.", field=field)
    url = url.strip()
    if len(url) > MAX_URL_LENGTH:
        raise InvalidInput(f"The URL is longer than {MAX_URL_LENGTH} characters.", field=field)
    if any(ord(c) < 33 or ord(c) == 127 for c in url):
        raise InvalidInput("The URL may not contain spaces or control characters.", field=field)
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        raise InvalidInput(f"The URL is not valid: {error}.", field=field) from None
    if parts.scheme.lower() not in ("http", "https"):
        raise InvalidInput("The URL must start with http:// or https://.", field=field)
    if "@" in parts.netloc:
        raise InvalidInput(
            "The URL may not hold a user name or password; authenticate the delivery by "
            "its signature instead.",
            field=field,
        )
    host = parts.hostname or ""
    if not host:
        raise InvalidInput("The URL has no host.", field=field)
    if port == 0:
        raise InvalidInput("The URL's port must be from 1 to 65535.", field=field)
    if parts.fragment:
        raise InvalidInput("The URL may not have a #fragment.", field=field)
    if not allow_private:
        address = literal_address(host)
        refusal = address_refusal(address) if address is not None else None
        if refusal is None and _is_local_name(host):
            refusal = "a loopback address"
        if refusal is not None:
            raise InvalidInput(f"Deliveries may not go to {host}: it is {refusal}.", field=field)
    return url


def split_url(url: str) -> tuple[SplitResult, int]:
    """The parts of a stored webhook URL and the port a delivery connects to."""
    parts = urlsplit(url)
    default = 443 if parts.scheme.lower() == "https" else 80
    return parts, parts.port or default


def url_shown(url: str) -> str:
    """A webhook URL as the activity feed and history may show it: its scheme and host.
    Receivers often carry a secret in the path or query (chat services' incoming webhooks)."""
    parts, _ = split_url(url)
    rest = "/…" if (parts.path not in ("", "/") or parts.query) else "/"
    return f"{parts.scheme}://{parts.netloc}{rest}"


# What the key of `url_digest` is derived for; a new purpose, a new key.
_URL_DIGEST_PURPOSE = b"agentdocs webhook url digest v1\0"


def url_digest(url: str, *, secret: str) -> str:
    """HMAC-SHA256 of a webhook URL under a key derived from ``secret``: equal for equal
    URLs, so history shows that a URL changed, and telling nothing of the URL."""
    key = hashlib.sha256(_URL_DIGEST_PURPOSE + secret.encode("utf-8")).digest()
    return hmac.new(key, url.encode("utf-8"), hashlib.sha256).hexdigest()


def retry_delay(schedule: Sequence[float], retries_left: int) -> float | None:
    """Seconds to wait before the next attempt of a delivery that has just failed with
    ``retries_left`` automatic retries still to make, or None when it has none left.

    The schedule is read from its end: the first retry waits ``schedule[0]``, the
    last ``schedule[-1]``."""
    if retries_left < 1 or not schedule:
        return None
    index = max(0, len(schedule) - retries_left)
    return float(schedule[index])
