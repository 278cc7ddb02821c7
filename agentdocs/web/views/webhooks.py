"""The webhook pages of a tenant (tenant admins): the list with a create form, and each
webhook's page with its settings, test, secret rotation, deletion and delivery log.

A secret is shown on the page that answers its making (creation or rotation) and on
no other: that page is not cached, and it is never put in a redirect or a session.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from agentdocs import permissions
from agentdocs.core.errors import AgentdocsError
from agentdocs.core.webhooks import EVENT_TYPES, MAX_DESCRIPTION_LENGTH, MAX_URL_LENGTH
from agentdocs.models import Webhook
from agentdocs.permissions import Access
from agentdocs.selectors import webhooks as webhook_selectors
from agentdocs.services import deliveries as delivery_service
from agentdocs.services import webhooks as webhook_service
from agentdocs.web.pages import form_page, list_page, member_page

WEBHOOKS_PER_PAGE = 50
DELIVERIES_PER_PAGE = 25


class WebhookForm(forms.Form):
    url = forms.CharField(
        label="Payload URL",
        max_length=MAX_URL_LENGTH,
        help_text="http:// or https://; each delivery is a signed POST of JSON.",
    )
    events = forms.MultipleChoiceField(
        choices=[(event, event) for event in EVENT_TYPES],
        widget=forms.CheckboxSelectMultiple,
        initial=["document.created", "document.updated", "document.deleted"],
    )
    projects = forms.CharField(
        required=False,
        help_text="Project slugs, separated by spaces or commas; empty: every project and "
        "the tenant-wide events.",
    )
    description = forms.CharField(required=False, max_length=MAX_DESCRIPTION_LENGTH)

    def cleaned_projects(self) -> list[str] | None:
        slugs = self.cleaned_data["projects"].replace(",", " ").split()
        return slugs or None


class WebhookEditForm(WebhookForm):
    active = forms.BooleanField(
        required=False, help_text="Turning it on again forgets its failures."
    )


def _admin(request: HttpRequest, tenant: str) -> Access:
    access = permissions.tenant_access(request.user, tenant)
    access.require_admin("Only tenant admins see and manage the tenant's webhooks.")
    return access


def _list_page(
    request: HttpRequest,
    access: Access,
    form: WebhookForm,
    *,
    refusal: AgentdocsError | None = None,
) -> HttpResponse:
    page = list_page(
        request, webhook_selectors.webhook_list(tenant=access.tenant), per_page=WEBHOOKS_PER_PAGE
    )
    last = webhook_selectors.last_deliveries(list(page))
    rows = [{"webhook": webhook, "last": last.get(webhook.pk)} for webhook in page]
    context = {
        "access": access,
        "tenant": access.tenant,
        "form": form,
        "rows": rows,
        "page": page,
        "disabled_count": sum(1 for w in page if not w.active and w.failing_since is not None),
        "max_webhooks": settings.AGENTDOCS_MAX_WEBHOOKS_PER_TENANT,
    }
    return form_page(request, "agentdocs/webhooks.html", context, form=form, refusal=refusal)


def _detail_page(
    request: HttpRequest,
    access: Access,
    webhook: Webhook,
    form: WebhookEditForm | None = None,
    *,
    new_secret: str | None = None,
    refusal: AgentdocsError | None = None,
) -> HttpResponse:
    if form is None:
        form = WebhookEditForm(
            initial={
                "url": webhook.url,
                "events": webhook.events,
                "projects": " ".join(webhook.projects or []),
                "description": webhook.description,
                "active": webhook.active,
            }
        )
    deliveries = list_page(
        request, webhook_selectors.delivery_list(webhook=webhook), per_page=DELIVERIES_PER_PAGE
    )
    context: dict[str, Any] = {
        "access": access,
        "tenant": access.tenant,
        "webhook": webhook,
        "form": form,
        "deliveries": deliveries,
        "new_secret": new_secret,
    }
    return form_page(request, "agentdocs/webhook.html", context, form=form, refusal=refusal)


@never_cache
@member_page
@require_http_methods(["GET", "POST"])
def webhook_list(request: HttpRequest, tenant: str) -> HttpResponse:
    access = _admin(request, tenant)
    if request.method == "GET":
        return _list_page(request, access, WebhookForm())
    form = WebhookForm(request.POST)
    if not form.is_valid():
        return _list_page(request, access, form)
    try:
        new = webhook_service.webhook_create(
            tenant=access.tenant,
            url=form.cleaned_data["url"],
            events=list(form.cleaned_data["events"]),
            projects=form.cleaned_projects(),
            description=form.cleaned_data["description"],
            user=access.user,
        )
    except AgentdocsError as error:
        return _list_page(request, access, form, refusal=error)
    webhook = webhook_selectors.webhook_get(tenant=access.tenant, webhook_id=new.webhook.pk)
    return _detail_page(request, access, webhook, new_secret=new.secret)


@never_cache
@member_page
@require_http_methods(["GET", "POST"])
def webhook_detail(request: HttpRequest, tenant: str, webhook_id: int) -> HttpResponse:
    access = _admin(request, tenant)
    webhook = webhook_selectors.webhook_get(tenant=access.tenant, webhook_id=webhook_id)
    if request.method == "GET":
        return _detail_page(request, access, webhook)
    form = WebhookEditForm(request.POST)
    if not form.is_valid():
        return _detail_page(request, access, webhook, form)
    try:
        webhook_service.webhook_update(
            webhook=webhook,
            user=access.user,
            url=form.cleaned_data["url"],
            events=list(form.cleaned_data["events"]),
            projects=form.cleaned_projects(),
            description=form.cleaned_data["description"],
            active=form.cleaned_data["active"],
        )
    except AgentdocsError as error:
        webhook.refresh_from_db()
        return _detail_page(request, access, webhook, form, refusal=error)
    messages.success(request, "Saved the webhook.")
    return redirect("webhook", tenant=access.tenant.slug, webhook_id=webhook.pk)


@never_cache
@require_POST
@member_page
def webhook_rotate(request: HttpRequest, tenant: str, webhook_id: int) -> HttpResponse:
    access = _admin(request, tenant)
    webhook = webhook_selectors.webhook_get(tenant=access.tenant, webhook_id=webhook_id)
    rotated = webhook_service.webhook_update(webhook=webhook, user=access.user, rotate_secret=True)
    return _detail_page(request, access, rotated.webhook, new_secret=rotated.secret)


@require_POST
@member_page
def webhook_test(request: HttpRequest, tenant: str, webhook_id: int) -> HttpResponse:
    access = _admin(request, tenant)
    webhook = webhook_selectors.webhook_get(tenant=access.tenant, webhook_id=webhook_id)
    try:
        delivery_service.webhook_test(webhook=webhook, user=access.user)
    except AgentdocsError as error:
        messages.error(request, error.detail)
    else:
        messages.success(
            request,
            "Queued a ping: it is sent within seconds, and the log at the top shows how it "
            "went once it has been (reload the page).",
        )
    return redirect("webhook", tenant=access.tenant.slug, webhook_id=webhook.pk)


@require_POST
@member_page
def webhook_delete(request: HttpRequest, tenant: str, webhook_id: int) -> HttpResponse:
    access = _admin(request, tenant)
    webhook = webhook_selectors.webhook_get(tenant=access.tenant, webhook_id=webhook_id)
    webhook_service.webhook_delete(webhook=webhook, user=access.user)
    messages.success(request, f"Deleted the webhook to {webhook.url}.")
    return redirect("webhooks", tenant=access.tenant.slug)


@require_POST
@member_page
def delivery_redeliver(
    request: HttpRequest, tenant: str, webhook_id: int, delivery_id: int
) -> HttpResponse:
    access = _admin(request, tenant)
    webhook = webhook_selectors.webhook_get(tenant=access.tenant, webhook_id=webhook_id)
    delivery = webhook_selectors.delivery_get(webhook=webhook, delivery_id=delivery_id)
    try:
        delivery_service.delivery_redeliver(delivery=delivery, user=access.user)
    except AgentdocsError as error:
        messages.error(request, error.detail)
    else:
        messages.success(
            request, f"Queued {delivery.event_type} {delivery.event_id} to be sent again."
        )
    return redirect("webhook", tenant=access.tenant.slug, webhook_id=webhook.pk)
