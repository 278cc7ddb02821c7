"""Per-caller rate limits over Django's cache: a fixed window per scope and caller.

`check("markdown_preview", f"user:{user.pk}")` counts one request and raises
`RateLimited` (429, with `retry_after` in seconds) past the scope's limit. Limits
are read from `settings.AGENTDOCS_RATE_LIMITS` on every call, as
``{"scope": "60/min"}``; a scope that is missing or set to None is not limited, and
`AGENTDOCS_RATE_LIMITS_ENABLED = False` turns every limit off (tests raise or remove
single limits with the `settings` fixture).

The count is `cache.add` then `cache.incr`, both atomic in the local-memory cache
and in Redis; with the local-memory cache each process counts for itself, so the
limit is per process there and per deployment with Redis. A fixed window lets a
caller send up to twice the limit across a window's edge, which is enough to stop
one member from tying up the workers.
"""

from __future__ import annotations

import math
import re
import time

from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import ImproperlyConfigured

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


def check(scope: str, key: str) -> None:
    """Count one request of ``scope`` by ``key``; raise RateLimited past the limit."""
    limit = limit_for(scope)
    if limit is None:
        return
    requests, period = limit
    now = time.time()
    window = int(now // period)
    counter = f"ratelimit:{scope}:{key}:{window}"
    # The counter outlives its window a little, so a late incr never recreates it.
    if cache.add(counter, 1, period + 1):
        count = 1
    else:
        try:
            count = cache.incr(counter)
        except ValueError:  # expired between add and incr: this request opens it again
            cache.add(counter, 1, period + 1)
            count = 1
    if count > requests:
        retry_after = max(1, math.ceil((window + 1) * period - now))
        raise RateLimited(
            f"Too many requests: at most {requests} every {period} seconds here. "
            f"Try again in {retry_after} seconds.",
            retry_after=retry_after,
        )
