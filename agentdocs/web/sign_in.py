"""Throttled sign-in: failed sign-ins pause signing in, per account and per address.

django-axes counts the failures in the database (shared by every worker, kept across
restarts) and refuses a paused account or address before any password is checked, on
the sign-in page and the admin's alike. Settings name the parts of it that are ours:
the address a request comes from (`client_address`), what a success clears
(`SignInAttempts`) and the page a paused sign-in gets (`paused_response`).
"""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Iterable
from datetime import datetime, timedelta

from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_username, get_cool_off, get_failure_limit
from axes.models import AccessAttempt
from django.conf import settings
from django.contrib.auth.forms import AuthenticationForm
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme


def client_address(request: HttpRequest) -> str | None:
    """The address a request's failures count against.

    REMOTE_ADDR, unless ``AGENTDOCS_TRUSTED_PROXIES`` names n proxies in front of the
    app: each appends the address it was reached from to X-Forwarded-For, so the client
    is the n-th entry from the right. Entries left of it were written by the client
    and are never believed; a header shorter than n, or an entry that is not an
    address, falls back to REMOTE_ADDR. None when there is no address at all (a Unix
    socket): such requests share one count.
    """
    remote = _address(request.META.get("REMOTE_ADDR", ""))
    proxies = settings.AGENTDOCS_TRUSTED_PROXIES
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")
    if proxies < 1 or len(forwarded) < proxies:
        return remote
    return _address(forwarded[-proxies]) or remote


def _address(text: str) -> str | None:
    try:
        return str(ipaddress.ip_address(text.strip()))
    except ValueError:
        return None


class SignInAttempts(AxesDatabaseHandler):
    """django-axes' database handler, with a success clearing less.

    axes clears every counter the request matches: an attacker spraying accounts from
    one address could sign in to an account of their own every few tries and start the
    address's count again. Here a success clears only that account's failures from that
    address; failures of other accounts, or of this one from elsewhere, still count.
    """

    def reset_user_attempts(self, request: HttpRequest, credentials: dict | None = None) -> int:
        count, _ = AccessAttempt.objects.filter(
            username=get_client_username(request, credentials),
            ip_address=request.axes_ip_address,  # type: ignore[attr-defined]
        ).delete()
        return count


def pause_end(
    failures: Iterable[tuple[datetime, int]], *, limit: int, cool_off: timedelta
) -> datetime | None:
    """When a counter paused by ``failures`` (each row's latest failure and its count)
    falls back under ``limit``, or None if it is not paused.

    A row counts until ``cool_off`` after its latest failure; newest first, the row that
    brings the sum to the limit is the one whose expiry ends the pause.
    """
    total = 0
    for latest, count in sorted(failures, reverse=True):
        total += count
        if total >= limit:
            return latest + cool_off
    return None


def _pause_sentence(*, reasons: list[str], until: datetime, now: datetime) -> str:
    minutes = max(1, math.ceil((until - now).total_seconds() / 60))
    # Rounded up to the minute, so that trying again at the time shown works.
    local = timezone.localtime(until)
    if local.second or local.microsecond:
        local = local.replace(second=0, microsecond=0) + timedelta(minutes=1)
    same_day = local.date() == timezone.localtime(now).date()
    at = f"{local:%H:%M}" if same_day else f"{local:%Y-%m-%d %H:%M}"
    unit = "minute" if minutes == 1 else "minutes"
    return (
        f"Too many failed sign-ins {' and '.join(reasons)}. Sign-in is paused for "
        f"{minutes} {unit}; try again at {at} {local.tzname()}."
    )


def paused_response(
    request: HttpRequest, original_response: HttpResponse | None, credentials: dict | None
) -> HttpResponse:
    """The sign-in page, answered 429 with Retry-After, saying why sign-in is paused and
    until when (django-axes' AXES_LOCKOUT_CALLABLE, for the app's and the admin's
    sign-in)."""
    now = request.axes_attempt_time or timezone.now()  # type: ignore[attr-defined]
    cool_off = get_cool_off(request) or timedelta(0)
    limit = get_failure_limit(request, credentials)
    username = get_client_username(request, credentials)
    address = request.axes_ip_address  # type: ignore[attr-defined]
    recent = AccessAttempt.objects.filter(attempt_time__gte=now - cool_off)
    # The two counters as axes counts them (a missing address is one more address).
    counters = {
        "for this account": recent.filter(username=username),
        "from your network address": recent.filter(ip_address=address),
    }
    ends = {
        reason: end
        for reason, attempts in counters.items()
        if (
            end := pause_end(
                attempts.values_list("attempt_time", "failures_since_start"),
                limit=limit,
                cool_off=cool_off,
            )
        )
    }
    until = max(ends.values(), default=now + cool_off)
    next_url = request.POST.get("next") or request.GET.get("next") or ""
    if not url_has_allowed_host_and_scheme(
        next_url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        next_url = ""
    response = render(
        request,
        "registration/login.html",
        {
            "form": AuthenticationForm(request, initial={"username": username or ""}),
            "next": next_url,
            "paused": _pause_sentence(reasons=list(ends) or ["here"], until=until, now=now),
        },
        status=429,
    )
    response["Retry-After"] = str(max(1, math.ceil((until - now).total_seconds())))
    return response
