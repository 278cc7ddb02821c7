"""What every page view shares: sign-in, domain errors turned into HTTP, and
form pages answered with the status that says how the submission went.

Pages ask `agentdocs.permissions` for access; its NotFound (outsiders, unknown
names) becomes the 404 page and its Forbidden (members without the right)
becomes the 403 page with the sentence the permission layer wrote; invalid input
that no form caught (a malformed path in the URL) becomes the 400 page.

A service's refusal of a form keeps its own status (`error.status`: 412 for a
stale save, 422 for a secret, 423 for a lock...), so a page answers as the API
does for the same refusal; no view picks a status of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Page
from django.forms import Form
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from agentdocs.core.errors import (
    AdminOnly,
    AgentdocsError,
    ChangeForbidden,
    Forbidden,
    InvalidInput,
    Locked,
    NotFound,
    RateLimited,
)
from agentdocs.core.numbers import positive_int
from agentdocs.paging import CappedPaginator

View = Callable[..., HttpResponse]


def member_page(view: View) -> View:
    """Sign-in required; NotFound → 404, Forbidden → 403, InvalidInput → 400,
    RateLimited → 429 with Retry-After."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        try:
            return view(request, *args, **kwargs)
        except NotFound as error:
            raise Http404(error.detail) from error
        except Forbidden as error:
            # Django logs the refusal and answers with `permission_denied` below.
            raise PermissionDenied(error.detail) from error
        except InvalidInput as error:
            # Forms show a service's refusal beside their fields; what reaches here is
            # a bad URL (a malformed document path, say): the 400 page says what.
            return render(request, "400.html", {"detail": error.detail}, status=400)
        except RateLimited as error:
            response = HttpResponse(error.detail, status=429, content_type="text/plain")
            response["Retry-After"] = str(error.retry_after)
            return response

    return login_required(wrapper)


def refusal_heading(error: Forbidden) -> str:
    """The 403 page's heading: what is true of this refusal, and no more. Only a
    refused change says the member may read (every member reads the whole tenant); an
    admin-only page may be one they cannot read at all (the webhooks)."""
    if isinstance(error, ChangeForbidden):
        return "You may read this, but not change it"
    if isinstance(error, AdminOnly):
        return "For tenant admins only"
    return "Not allowed"


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    """The 403 page (`handler403`): the sentence the permission layer wrote under the
    heading that is true of it; Django's own refusals (the admin) are "Not allowed"."""
    refusal = exception.__cause__
    context = {
        "exception": str(exception),
        "heading": refusal_heading(refusal) if isinstance(refusal, Forbidden) else "Not allowed",
    }
    return render(request, "403.html", context, status=403)


def add_service_error(form: Form, error: AgentdocsError) -> None:
    """Show a service's refusal beside the field it names (or above the form).

    Nested fields such as `params.agentDocument` belong to the `params` field;
    the message keeps the full name so the user sees which entry is wrong.
    """
    field = error.field or ""
    top = field.split(".", 1)[0]
    if top in form.fields:
        message = error.detail if field == top else f"{field}: {error.detail}"
        form.add_error(top, message)
    else:
        form.add_error(None, error.detail)


def form_page(
    request: HttpRequest,
    template_name: str,
    context: dict[str, Any],
    *,
    form: Form,
    refusal: AgentdocsError | None = None,
    beside_form: bool = True,
) -> HttpResponse:
    """Render a page holding `form` (which `context` holds too, under its own name).

    Status: the refusal's own when a service refused, 400 when the form's own
    checks failed, else 200. The refusal's sentence goes beside the field it names;
    `beside_form=False` when the page explains the refusal in its own words (the
    edit page's conflict panel); a lock refusal is left to the page's lock banner.
    """
    if refusal is not None:
        # A lock is explained by the page's lock banner (holder, time, break): once.
        explained_by_banner = isinstance(refusal, Locked) and context.get("lock_held_by_other")
        if beside_form and not explained_by_banner:
            add_service_error(form, refusal)
        status = refusal.status
    else:
        status = 400 if form.errors else 200
    response = render(request, template_name, context, status=status)
    if isinstance(refusal, RateLimited):
        response["Retry-After"] = str(refusal.retry_after)
    return response


def list_page(request: HttpRequest, rows: Any, *, per_page: int, param: str = "page") -> Page:
    """One page of ``rows`` (a queryset, a list, or `LateRows` for deep pages), numbered by
    ``param`` in the query string: a capped count and a slice, whatever the number of
    rows (`agentdocs.paging`). No number, or one that is not a page number, shows the
    first page; one past the end, the last; past the end of a list longer than the
    count limit, the last page the count knows of."""
    number = positive_int(request.GET.get(param)) or 1
    return CappedPaginator(rows, per_page).get_page(number)
