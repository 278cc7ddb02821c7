"""Per-caller rate limits over Django's cache: a fixed window per scope and caller.

`check("markdown_preview", f"user:{user.pk}")` counts one request and raises
`RateLimited` (429, with `retry_after` in seconds) past the scope's limit. Limits
are read from `settings.AGENTDOCS_RATE_LIMITS` on every call, as
``{"scope": "60/min"}``; a scope that is missing or set to None is not limited, and
`AGENTDOCS_RATE_LIMITS_ENABLED = False` turns every limit off (tests raise or remove
single limits with the `settings` fixture).

Renders, binds, previews and token creations are limited per person too: a
``*_user`` scope keyed by `user_key`, counted across all of a user's tokens and their
session, above the per-token limit keyed by the caller (so a fresh token buys no
more). The count is an atomic increment (`agentdocs.cache.get_many_and_counts`: each
counter's INCR and EXPIRE in one Redis round trip; `cache.add` then `cache.incr`
elsewhere). The render does not pay a round trip of its own: it passes its `Windows`
(the token's and the person's) to the render, which counts them in the same round
trip as its cached reads and calls `Windows.check` before reading anything else.
The count is per deployment with Redis, and per machine with the embedded default's
disk cache, which every process of the machine shares (`agentdocs.cache.DiskCache`).
A fixed window lets a caller send up to twice the limit across a window's edge, which
is enough to stop one member from tying up the workers.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from agentdocs.cache import get_many_and_counts
from agentdocs.core.errors import RateLimited

_UNITS = {"s": 1, "sec": 1, "second": 1, "min": 60, "minute": 60, "h": 3600, "hour": 3600}
_UNITS["day"] = 86400
_RATE = re.compile(r"^\s*(\d+)\s*/\s*(\d*)\s*([a-z]+)\s*$")


def parse_rate(rate: str) -> tuple[int, int]:
    """ "60/min" → (60, 60), "5/10s" → (5, 10): requests allowed, and per how many seconds."""
    match = _RATE.match(rate.lower())
    if match is None or match.group(3) not in _UNITS:
        raise ImproperlyConfigured(
            f"Bad rate limit {rate!r}: write it as requests/period, e.g. '60/min' or '5/10s'."
        )
    requests, multiple, unit = match.groups()
    period = int(multiple or 1) * _UNITS[unit]
    if period <= 0:
        raise ImproperlyConfigured(f"Bad rate limit {rate!r}: the period must be positive.")
    return int(requests), period


def limit_for(scope: str) -> tuple[int, int] | None:
    """(requests, seconds) allowed for ``scope``, or None when it is not limited."""
    if not getattr(settings, "AGENTDOCS_RATE_LIMITS_ENABLED", True):
        return None
    rate = getattr(settings, "AGENTDOCS_RATE_LIMITS", {}).get(scope)
    return parse_rate(rate) if rate else None


@dataclass(frozen=True)
class Window:
    """The current window of one scope's limit for one caller: its counter's key, and
    what the count it reaches allows."""

    counter: str
    requests: int
    period: int
    window: int
    now: float

    @property
    def ttl(self) -> int:
        # The counter outlives its window a little, so a late increment never opens
        # the window again.
        return self.period + 1

    def check(self, count: int | None) -> None:
        """Raise RateLimited when ``count`` (this request's, counted) is past the limit."""
        if count is None or count <= self.requests:
            return
        retry_after = max(1, math.ceil((self.window + 1) * self.period - self.now))
        raise RateLimited(
            f"Too many requests: at most {self.requests} every {self.period} seconds here. "
            f"Try again in {retry_after} seconds.",
            retry_after=retry_after,
        )


def window(scope: str, key: str) -> Window | None:
    """The window a request of ``scope`` by ``key`` counts in; None when not limited.
    The caller counts it (`get_many_and_counts`) and then calls `Window.check`."""
    limit = limit_for(scope)
    if limit is None:
        return None
    requests, period = limit
    now = time.time()
    number = int(now // period)
    counter = f"ratelimit:{scope}:{key}:{number}"
    return Window(counter=counter, requests=requests, period=period, window=number, now=now)


@dataclass(frozen=True)
class Windows:
    """The windows one request counts in at once (a token's and its person's), counted
    together in one round trip (`get_many_and_counts`) and checked together."""

    windows: tuple[Window, ...]

    @property
    def counters(self) -> list[tuple[str, int]]:
        return [(current.counter, current.ttl) for current in self.windows]

    def check(self, counts: Sequence[int]) -> None:
        """Raise RateLimited when any count is past its window's limit; of several, the
        one that lasts longest, so its Retry-After is when every limit allows again."""
        refusals: list[RateLimited] = []
        for current, count in zip(self.windows, counts, strict=True):
            try:
                current.check(count)
            except RateLimited as refusal:
                refusals.append(refusal)
        if refusals:
            raise max(refusals, key=lambda refusal: refusal.retry_after)


def windows(*limits: tuple[str, str]) -> Windows | None:
    """The windows of these (scope, key) limits that are limited; None when none is."""
    found = tuple(current for scope, key in limits if (current := window(scope, key)) is not None)
    return Windows(found) if found else None


def user_key(user_id: int) -> str:
    """The key of a per-person limit: one counter for all of a user's tokens and their
    session (`caller`, the key of a per-token limit, is one per token)."""
    return f"user:{user_id}"


def check(scope: str, key: str, *more: tuple[str, str]) -> None:
    """Count one request of ``scope`` by ``key`` (and of each further (scope, key) in
    ``more``, in the same round trip); raise RateLimited past any of the limits."""
    current = windows((scope, key), *more)
    if current is None:
        return
    _, counts = get_many_and_counts([], counters=current.counters)
    current.check(counts)
