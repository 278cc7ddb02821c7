"""`memory.*` settings (policy) and recipes: validated on the way in, history kept.

Two settings are not policy for agents but for the tenant's own writes:
`security.secretOverride` (tenant scope, `on` or `off`, default on) says whether a
writer may save a text the secret check refused by acknowledging it, and
`security.hiddenOverride` the same for a text holding hidden characters (bidi
controls, zero-width or tag characters). They are stored like the others; the
policy layer of the Memory Block shows only `memory.*` keys.
"""

from __future__ import annotations

from typing import TypeVar

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction

from agentdocs.core import evals as eval_rules
from agentdocs.core import policy as policy_rules
from agentdocs.core import recipes as recipe_rules
from agentdocs.core import review as review_rules
from agentdocs.core.errors import AlreadyExists, Enforced, InvalidInput, NotFound
from agentdocs.core.labels import parse_protected_labels
from agentdocs.core.recipes import ProfileOptions, RecipeParams
from agentdocs.core.stored_text import refuse_hidden_or_secret
from agentdocs.models import ChangeType, Project, Recipe, Setting, Tenant
from agentdocs.models.history import mark_change
from agentdocs.services import events, render_cache

MAX_SETTING_VALUE = 4096


_RenderInput = TypeVar("_RenderInput", Setting, Recipe)


def _mark(
    instance: _RenderInput, *, user: User, reason: str, change_type: ChangeType
) -> _RenderInput:
    """Attach the history details to a setting or recipe about to be written. Both are
    render inputs, so every write that marks one also retires the cached render rows."""
    render_cache.render_inputs_changed(tenant_id=instance.tenant_id)
    return mark_change(instance, user=user, reason=reason, change_type=change_type)


def _validate_review_setting(*, key: str, value: str) -> None:
    """`review.required` holds patterns, `review.approvals` a count (see core.review),
    `review.requireEvals` a boolean and `review.maxRegression` a number (core.evals)."""
    if key == review_rules.REVIEW_REQUIRED_KEY:
        review_rules.parse_patterns(value)
    elif key == review_rules.REVIEW_APPROVALS_KEY:
        review_rules.parse_approvals(value)
    elif key == review_rules.REVIEW_PROTECTED_LABELS_KEY:
        parse_protected_labels(value)
    elif key == review_rules.REVIEW_REQUIRE_EVALS_KEY:
        eval_rules.parse_require_evals(value)
    elif key == review_rules.REVIEW_MAX_REGRESSION_KEY:
        eval_rules.parse_max_regression(value)


def _validate_security_setting(*, key: str, value: str, project: Project | None) -> None:
    """`security.*` settings govern the tenant's writes: tenant scope, a known value."""
    if key not in policy_rules.SECURITY_KEYS:
        return
    if project is not None:
        raise InvalidInput(
            f"`{key}` is a tenant setting; a project cannot set it.",
            field="key",
        )
    if value not in policy_rules.SECRET_OVERRIDE_VALUES:
        raise InvalidInput(f"`{key}` is `on` or `off`.", field="value")


def _validate_setting_value(value: object) -> str:
    if not isinstance(value, str):
        raise InvalidInput("The value must be a string.", field="value")
    if "\n" in value or "\r" in value:
        raise InvalidInput("The value must be one line.", field="value")
    if len(value) > MAX_SETTING_VALUE:
        raise InvalidInput(
            f"The value is longer than {MAX_SETTING_VALUE} characters.", field="value"
        )
    # memory.* values go verbatim into every prompt, like documents.
    refuse_hidden_or_secret(value, field="value", what="The value", prompt=True)
    return value


def _validate_bool(value: object, *, field: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidInput("Must be true or false.", field=field)
    return value


@transaction.atomic
def setting_set(
    *,
    tenant: Tenant,
    project: Project | None,
    key: str,
    value: str,
    enforced: bool = False,
    user: User,
    reason: str = "",
) -> tuple[Setting, bool]:
    """Create or replace a setting. Returns (setting, created)."""
    policy_rules.validate_setting_key(key)
    _validate_setting_value(value)
    _validate_security_setting(key=key, value=value, project=project)
    _validate_review_setting(key=key, value=value)
    _validate_bool(enforced, field="enforced")
    if project is not None and project.tenant_id != tenant.pk:
        raise InvalidInput("The project belongs to another tenant.", field="project")
    if project is not None and enforced:
        raise InvalidInput(
            "Only tenant settings can be enforced; a project setting cannot.", field="enforced"
        )
    if project is not None:
        enforced_by_tenant = Setting.objects.filter(
            tenant=tenant, project=None, key=key, enforced=True
        ).first()
        if enforced_by_tenant is not None:
            # Rendering would refuse the override anyway; saying so now spares the
            # project admin a value that silently does nothing.
            raise Enforced(
                f"The tenant enforces {key} = {enforced_by_tenant.value!r}; "
                "a project cannot override it.",
                field="key",
            )
    existing = Setting.objects.select_for_update().filter(tenant=tenant, project=project, key=key)
    setting = existing.first()
    if setting is None:
        setting = Setting(
            tenant=tenant, project=project, key=key, value=value, enforced=enforced, updated_by=user
        )
        try:
            with transaction.atomic():
                _mark(setting, user=user, reason=reason, change_type=ChangeType.CREATED).save()
                _setting_changed(setting, action="created", previous=None, user=user, reason=reason)
            return setting, True
        except IntegrityError:
            # A concurrent request created the key after the read above (the row lock
            # cannot cover a row that does not exist yet). Its insert has committed,
            # so this request becomes an update of that row, not a 500.
            setting = existing.first()
            if setting is None:
                raise
    if setting.value == value and setting.enforced == enforced:
        return setting, False
    previous: events.SettingValue = {"value": setting.value, "enforced": setting.enforced}
    setting.value = value
    setting.enforced = enforced
    setting.updated_by = user
    _mark(setting, user=user, reason=reason, change_type=ChangeType.UPDATED).save()
    _setting_changed(setting, action="updated", previous=previous, user=user, reason=reason)
    return setting, False


def _setting_changed(
    setting: Setting,
    *,
    action: str,
    previous: events.SettingValue | None,
    user: User,
    reason: str,
) -> None:
    tenant, project = setting.tenant, setting.project
    deleted = action == "deleted"
    data: events.SettingEventData = {
        "key": setting.key,
        "scope": "tenant" if project is None else "project",
        "project": project.slug if project is not None else None,
        "action": action,
        "value": None if deleted else setting.value,
        "enforced": None if deleted else setting.enforced,
        "previous": previous,
        "actor": user.get_username(),
        "reason": reason,
    }
    events.emit(
        type=events.SETTING_CHANGED,
        action=action,
        tenant=tenant,
        project=project,
        actor=user,
        target=setting.key,
        reason=reason,
        data=data,
    )


@transaction.atomic
def setting_delete(
    *, tenant: Tenant, project: Project | None, key: str, user: User, reason: str = ""
) -> None:
    policy_rules.validate_setting_key(key)
    setting = Setting.objects.filter(tenant=tenant, project=project, key=key).first()
    if setting is None:
        raise NotFound(f"No setting {key!r} here.", field="key")
    previous: events.SettingValue = {"value": setting.value, "enforced": setting.enforced}
    _mark(setting, user=user, reason=reason, change_type=ChangeType.DELETED).delete()
    _setting_changed(setting, action="deleted", previous=previous, user=user, reason=reason)


def recipe_create(
    *,
    tenant: Tenant,
    name: str,
    params: RecipeParams,
    profiles: dict[str, ProfileOptions],
    user: User,
    reason: str = "",
) -> Recipe:
    recipe_rules.validate_recipe_name(name)
    recipe_rules.validate_params(params)
    recipe_rules.validate_profiles(profiles)
    recipe = Recipe(tenant=tenant, name=name, params=params, profiles=profiles, updated_by=user)
    try:
        with transaction.atomic():
            _mark(recipe, user=user, reason=reason, change_type=ChangeType.CREATED).save()
            _recipe_changed(recipe, action="created", previous=None, user=user, reason=reason)
    except IntegrityError:
        raise AlreadyExists(f"A recipe {name!r} already exists.", field="name") from None
    return recipe


@transaction.atomic
def recipe_update(
    *,
    recipe: Recipe,
    params: RecipeParams,
    profiles: dict[str, ProfileOptions],
    user: User,
    reason: str = "",
) -> Recipe:
    recipe_rules.validate_params(params)
    recipe_rules.validate_profiles(profiles)
    recipe = Recipe.objects.select_for_update().get(pk=recipe.pk)
    if recipe.params == params and recipe.profiles == profiles:
        return recipe
    previous: events.RecipeValue = {"params": recipe.params, "profiles": recipe.profiles}
    recipe.params = params
    recipe.profiles = profiles
    recipe.updated_by = user
    _mark(recipe, user=user, reason=reason, change_type=ChangeType.UPDATED).save()
    _recipe_changed(recipe, action="updated", previous=previous, user=user, reason=reason)
    return recipe


@transaction.atomic
def recipe_delete(*, recipe: Recipe, user: User, reason: str = "") -> None:
    # Read afresh: the history row and the event keep the values deleted, not those
    # of a copy the caller read before someone else's change.
    current = Recipe.objects.select_for_update().filter(pk=recipe.pk).first()
    if current is None:
        raise NotFound(f"No recipe {recipe.name!r} in this tenant.", field="name")
    recipe = current
    previous: events.RecipeValue = {"params": recipe.params, "profiles": recipe.profiles}
    _mark(recipe, user=user, reason=reason, change_type=ChangeType.DELETED).delete()
    _recipe_changed(recipe, action="deleted", previous=previous, user=user, reason=reason)


def _recipe_changed(
    recipe: Recipe,
    *,
    action: str,
    previous: events.RecipeValue | None,
    user: User,
    reason: str,
) -> None:
    deleted = action == "deleted"
    data: events.RecipeEventData = {
        "name": recipe.name,
        "action": action,
        "params": None if deleted else dict(recipe.params),
        "profiles": None if deleted else dict(recipe.profiles),
        "previous": previous,
        "actor": user.get_username(),
        "reason": reason,
    }
    events.emit(
        type=events.RECIPE_CHANGED,
        action=action,
        tenant=recipe.tenant,
        project=None,
        actor=user,
        target=recipe.name,
        reason=reason,
        data=data,
    )
