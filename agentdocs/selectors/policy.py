"""Reads of settings, recipes and the provider map."""

from __future__ import annotations

from django.db.models import QuerySet

from agentdocs.core.errors import InvalidInput, NotFound
from agentdocs.core.manifest import ManifestError, validate_symbolic_name
from agentdocs.models import Project, ProviderMapping, Recipe, Setting, Tenant


def setting_list(*, tenant: Tenant, project: Project | None) -> QuerySet[Setting]:
    return (
        Setting.objects.filter(tenant=tenant, project=project)
        .select_related("updated_by")
        .order_by("key")
    )


def recipe_list(*, tenant: Tenant) -> QuerySet[Recipe]:
    return Recipe.objects.filter(tenant=tenant).select_related("updated_by").order_by("name")


def provider_list(*, tenant: Tenant) -> QuerySet[ProviderMapping]:
    return (
        ProviderMapping.objects.filter(tenant=tenant)
        .select_related("project", "updated_by")
        .order_by("name")
    )


def provider_get(*, tenant: Tenant, name: str) -> ProviderMapping:
    """The provider map's entry for ``name``; InvalidInput for a name no entry can have,
    NotFound for one the map lacks."""
    try:
        validate_symbolic_name(name, entry="name")
    except ManifestError as error:
        raise InvalidInput(error.detail, field="name") from None
    mapping = (
        ProviderMapping.objects.select_related("project", "updated_by")
        .filter(tenant=tenant, name=name)
        .first()
    )
    if mapping is None:
        raise NotFound(f"The provider map has no name {name!r}.", field="name")
    return mapping
