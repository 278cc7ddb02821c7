"""Reads of settings, recipes and the provider map."""

from __future__ import annotations

from collections.abc import Callable

from django.db.models import QuerySet

from agentdocs.core import policy as policy_rules
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


def override_allowed(*, tenant_id: int, key: str) -> bool:
    """Whether the tenant lets a writer override the check its setting ``key`` names
    (`security.secretOverride`, `security.hiddenOverride`): on unless set to `off`."""
    value = (
        Setting.objects.filter(tenant_id=tenant_id, project=None, key=key)
        .values_list("value", flat=True)
        .first()
    )
    return value != "off"


def secret_override_allowed(*, tenant_id: int) -> bool:
    """Whether the tenant lets a writer save a refused text by acknowledging it (on
    unless the tenant set `security.secretOverride: off`)."""
    return override_allowed(tenant_id=tenant_id, key=policy_rules.SECRET_OVERRIDE_KEY)


def hidden_override_allowed(*, tenant_id: int) -> bool:
    """Whether the tenant lets a writer save a text holding hidden characters by
    acknowledging them as intended (on unless the tenant set
    `security.hiddenOverride: off`)."""
    return override_allowed(tenant_id=tenant_id, key=policy_rules.HIDDEN_OVERRIDE_KEY)


def overrides(tenant_id: int | Callable[[], int]) -> Callable[[str], bool]:
    """`override_allowed` for the tenant ``tenant_id`` (or what it returns, when a call
    finds it), as the body checks take it (`agentdocs.validation.documents.checked_body`):
    asked only when an acknowledgement meets a refusal, so ordinary writes read no
    setting, nor the row that names their tenant."""

    def allowed(key: str) -> bool:
        tenant = tenant_id if isinstance(tenant_id, int) else tenant_id()
        return override_allowed(tenant_id=tenant, key=key)

    return allowed
