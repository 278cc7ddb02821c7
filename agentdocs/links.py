"""Where a change is seen: the page and API paths of what an event names, built from the
URL conf, the one place that knows both faces' URL names.

Services record ids (`Event.data`); the links are added here when an event is
serialized: the webhook payload's `data` (`event_data`, when its deliveries are made)
and the activity feed's `url` (`event_page`). Paths only: the webhook's receiver knows
the server it registered with. Events stored before the links moved here hold theirs
already, and keep them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict
from urllib.parse import urlencode

from django.urls import reverse

from agentdocs.models import Event


class Links(TypedDict):
    """`page`: the page that shows the change (the document, or the history of a
    setting, recipe, membership or provider); `api`: where the API serves the changed
    thing."""

    page: str
    api: str


def document_links(*, tenant: str, project: str, path: str) -> Links:
    kwargs = {"tenant": tenant, "project": project, "path": path}
    return {
        "page": reverse("document", kwargs=kwargs),
        "api": reverse("api-document", kwargs=kwargs),
    }


def label_links(*, tenant: str, project: str, path: str, label: str) -> Links:
    kwargs = {"tenant": tenant, "project": project, "path": path}
    return {
        "page": reverse("document", kwargs=kwargs),
        "api": reverse("api-document-label", kwargs={**kwargs, "label": label}),
    }


def setting_links(*, tenant: str, project: str | None, key: str) -> Links:
    query = f"?{urlencode({'project': project})}" if project else ""
    page = reverse("setting-history", kwargs={"tenant": tenant, "key": key}) + query
    if project is None:
        api = reverse("api-tenant-setting", kwargs={"tenant": tenant, "key": key})
    else:
        api = reverse(
            "api-project-setting", kwargs={"tenant": tenant, "project": project, "key": key}
        )
    return {"page": page, "api": api}


def recipe_links(*, tenant: str, name: str) -> Links:
    kwargs = {"tenant": tenant, "name": name}
    return {
        "page": reverse("recipe-history", kwargs=kwargs),
        "api": reverse("api-recipe", kwargs=kwargs),
    }


def membership_links(*, tenant: str, username: str) -> Links:
    kwargs = {"tenant": tenant, "username": username}
    return {
        "page": reverse("membership-history", kwargs=kwargs),
        "api": reverse("api-member", kwargs=kwargs),
    }


def provider_links(*, tenant: str, name: str) -> Links:
    kwargs = {"tenant": tenant, "name": name}
    return {
        "page": reverse("provider-history", kwargs=kwargs),
        "api": reverse("api-provider", kwargs=kwargs),
    }


def binding_links(*, tenant: str, project: str, record_id: int) -> Links:
    return {
        "page": reverse(
            "binding", kwargs={"tenant": tenant, "project": project, "record_id": record_id}
        ),
        "api": reverse(
            "api-binding", kwargs={"tenant": tenant, "project": project, "record": str(record_id)}
        ),
    }


def outcome_links(*, tenant: str, project: str, record_id: int) -> Links:
    """The run's page and its outcomes in the API (`outcome.reported`)."""
    return {
        "page": binding_links(tenant=tenant, project=project, record_id=record_id)["page"],
        "api": reverse(
            "api-binding-outcomes",
            kwargs={"tenant": tenant, "project": project, "record": str(record_id)},
        ),
    }


def audit_links(*, tenant: str) -> Links:
    return {
        "page": reverse("tenant", kwargs={"tenant": tenant}),
        "api": reverse("api-audit-verify", kwargs={"tenant": tenant}),
    }


def repository_links(*, tenant: str, project: str, repository_id: int) -> Links:
    kwargs = {"tenant": tenant, "project": project, "repository_id": repository_id}
    return {
        "page": reverse("repository", kwargs=kwargs),
        "api": reverse("api-repository", kwargs=kwargs),
    }


def change_links(*, tenant: str, project: str, change_id: int) -> Links:
    kwargs = {"tenant": tenant, "project": project, "change_id": change_id}
    return {"page": reverse("change", kwargs=kwargs), "api": reverse("api-change", kwargs=kwargs)}


def propose_url(*, tenant: str, project: str) -> str:
    """Where a change to a protected document is proposed (`review_required`)."""
    return reverse("api-changes", kwargs={"tenant": tenant, "project": project})


def _links(type: str, tenant: str, project: str | None, data: Mapping[str, Any]) -> Links | None:
    """The links of an event of ``type`` whose `data` is ``data``; None for the types
    that carry none (skills, webhooks, change requests: theirs are `url` and `api_url`)."""
    kind, _, action = type.partition(".")
    if kind == "document" and project is not None:
        if action in ("label_moved", "label_removed"):
            return label_links(
                tenant=tenant, project=project, path=data["path"], label=data["label"]
            )
        return document_links(tenant=tenant, project=project, path=data["path"])
    if kind == "setting":
        return setting_links(tenant=tenant, project=data["project"], key=data["key"])
    if kind == "recipe":
        return recipe_links(tenant=tenant, name=data["name"])
    if kind == "membership":
        return membership_links(tenant=tenant, username=data["username"])
    if kind == "provider":
        return provider_links(tenant=tenant, name=data["name"])
    if kind == "binding" and project is not None:
        return binding_links(tenant=tenant, project=project, record_id=data["id"])
    if kind == "outcome" and project is not None:
        return outcome_links(tenant=tenant, project=project, record_id=data["binding"])
    if kind == "audit":
        return audit_links(tenant=tenant)
    if kind == "repository" and project is not None:
        return repository_links(tenant=tenant, project=project, repository_id=data["id"])
    return None


def _slugs(event: Event) -> tuple[str, str | None]:
    return event.tenant.slug, event.project.slug if event.project is not None else None


def event_data(event: Event) -> dict[str, Any]:
    """The webhook payload's `data` of ``event``: its stored data with its links, in
    the place receivers have always had them (`links` before a restore's
    `restored_from`, else last; a change request's `url` and `api_url` after its
    `label`)."""
    data = dict(event.data)
    if "links" in data or (event.kind == "change" and "url" in data):
        return data  # stored with its links
    tenant, project = _slugs(event)
    if event.kind == "change" and project is not None and "label" in data:
        links = change_links(tenant=tenant, project=project, change_id=data["id"])
        return _after(data, "label", {"url": links["page"], "api_url": links["api"]})
    try:
        built = _links(event.type, tenant, project, data)
    except KeyError:
        built = None  # data without what its links are built from: none, as before
    if built is None:
        return data
    if "restored_from" in data:
        restored_from = data.pop("restored_from")
        return {**data, "links": built, "restored_from": restored_from}
    return {**data, "links": built}


def _after(data: dict[str, Any], key: str, added: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in data.items():
        out[name] = value
        if name == key:
            out.update(added)
    return out


def event_page(event: Event) -> str | None:
    """The page that shows ``event``'s change, for the activity feed (None for the
    types without links; the feed's rows come with their tenant and project)."""
    stored = event.data.get("links") if isinstance(event.data, dict) else None
    if isinstance(stored, dict):
        return stored.get("page")
    if not isinstance(event.data, dict):
        return None
    tenant, project = _slugs(event)
    try:
        links = _links(event.type, tenant, project, event.data)
    except KeyError:
        return None
    return links["page"] if links is not None else None
