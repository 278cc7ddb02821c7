"""The provider map: each tenant's symbolic source names and the documents they name."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction

from agentdocs.core.errors import AlreadyExists, InvalidInput
from agentdocs.core.manifest import validate_provider_name
from agentdocs.core.paths import validate_new_path
from agentdocs.models import ChangeType, ProviderMapping, Tenant
from agentdocs.models.history import mark_change
from agentdocs.selectors import policy as policy_selectors
from agentdocs.services import events, render_cache


def provider_set(
    *,
    tenant: Tenant,
    name: str,
    project_slug: str,
    path: str,
    user: User,
    reason: str = "",
) -> tuple[ProviderMapping, bool]:
    """Map a name to a document (project and path) of the tenant. Returns (mapping, created).

    The document need not exist yet: a binding reports a name whose document is
    missing as unresolved, which is the evidence a later reader needs.
    """
    validate_provider_name(name)
    validate_new_path(path)
    if not isinstance(project_slug, str) or not project_slug:
        raise InvalidInput(
            "`project` must be the slug of a project of this tenant.", field="project"
        )
    project = tenant.projects.filter(slug=project_slug).first()
    if project is None:
        raise InvalidInput(f"This tenant has no project {project_slug!r}.", field="project")
    with transaction.atomic():
        mapping = (
            ProviderMapping.objects.select_for_update().filter(tenant=tenant, name=name).first()
        )
        created = mapping is None
        previous: events.ProviderTarget | None = None
        if mapping is None:
            mapping = ProviderMapping(tenant=tenant, name=name)
        elif mapping.project_id == project.pk and mapping.path == path:
            return mapping, False
        else:
            previous = {"project": mapping.project.slug, "path": mapping.path}
        mapping.project = project
        mapping.path = path
        mapping.updated_by = user
        # Nothing rendered or validated reads the provider map today; retiring the
        # tenant's cached answers keeps it so when something does.
        render_cache.render_inputs_changed(tenant_id=tenant.pk)
        mark_change(
            mapping,
            user=user,
            reason=reason,
            change_type=ChangeType.CREATED if created else ChangeType.UPDATED,
        )
        try:
            with transaction.atomic():
                mapping.save()
                _provider_changed(
                    mapping,
                    action="created" if created else "updated",
                    previous=previous,
                    user=user,
                    reason=reason,
                )
        except IntegrityError:
            raise AlreadyExists(
                f"The name {name!r} was mapped by another request at the same time; "
                "read it and try again.",
                field="name",
            ) from None
    return mapping, created


@transaction.atomic
def provider_delete(*, tenant: Tenant, name: str, user: User, reason: str = "") -> None:
    mapping = policy_selectors.provider_get(tenant=tenant, name=name)
    previous: events.ProviderTarget = {"project": mapping.project.slug, "path": mapping.path}

    render_cache.render_inputs_changed(tenant_id=tenant.pk)
    mark_change(mapping, user=user, reason=reason, change_type=ChangeType.DELETED)
    mapping.delete()
    _provider_changed(mapping, action="deleted", previous=previous, user=user, reason=reason)


def _provider_changed(
    mapping: ProviderMapping,
    *,
    action: str,
    previous: events.ProviderTarget | None,
    user: User,
    reason: str,
) -> None:
    deleted = action == "deleted"
    data: events.ProviderEventData = {
        "name": mapping.name,
        "action": action,
        "project": None if deleted else mapping.project.slug,
        "path": None if deleted else mapping.path,
        "previous": previous,
        "actor": user.get_username(),
        "reason": reason,
    }
    events.emit(
        type=events.PROVIDER_CHANGED,
        action=action,
        tenant=mapping.tenant,
        project=None,
        actor=user,
        target=mapping.name,
        reason=reason,
        data=data,
    )
