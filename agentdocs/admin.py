"""The Django admin: one more client of the services, never a second write path.

Nothing here calls ``save()`` or ``delete()`` on a model. Every add, change and
delete goes through `agentdocs.services`, so the admin gets the same checks
(versions, locks, secret-like content, the last admin, reserved slugs) and
leaves the same history rows, with the admin's user and a reason, as the API.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Model, QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.urls import reverse
from simple_history.admin import SimpleHistoryAdmin

from agentdocs.core import policy as policy_rules
from agentdocs.core import recipes as recipe_rules
from agentdocs.core.errors import AgentdocsError
from agentdocs.core.paths import validate_new_path
from agentdocs.core.stored_text import refuse_hidden_or_secret
from agentdocs.models import (
    ApiToken,
    BindingRecord,
    Document,
    Invitation,
    Membership,
    Project,
    ProviderMapping,
    Recipe,
    Setting,
    Skill,
    Tenant,
)
from agentdocs.services import document_locks
from agentdocs.services import documents as document_service
from agentdocs.services import policy as policy_service
from agentdocs.services import tenancy as tenant_service
from agentdocs.validation import documents as document_checks

ADMIN_REASON = "Changed in the Django admin"

_Value = TypeVar("_Value")


def _checked(check: Callable[[_Value], object], value: _Value) -> _Value:
    """Run a service validator and turn its domain error into a form error."""
    try:
        check(value)
    except AgentdocsError as error:
        raise forms.ValidationError(error.detail) from None
    return value


def _staff_user(request: HttpRequest) -> User:
    """The signed-in user; the admin lets no one else reach its views."""
    if not isinstance(request.user, User):
        raise PermissionDenied
    return request.user


def _copy_into(target: Model, source: Model) -> None:
    """Let the admin's log and redirect see what the service stored."""
    for field in type(source)._meta.concrete_fields:
        setattr(target, field.attname, getattr(source, field.attname))
    target._state.adding = False


class ReasonForm(forms.ModelForm):
    reason = forms.CharField(
        max_length=500,
        required=False,
        help_text="Why you make this change; it is recorded in the history.",
        widget=forms.TextInput(attrs={"size": 80}),
    )

    def reason_text(self) -> str:
        return self.cleaned_data.get("reason") or ADMIN_REASON


class HistoryAdmin(SimpleHistoryAdmin):
    """django-simple-history's admin, answering 404 for a history URL that names nothing.

    Its views hand the ids from the URL straight to the database, so an id that
    is not a number (`abc/history/`, `1/change/history/`, `1/history/abc/`)
    failed there with a 500. An id that cannot name a row is checked here first.
    """

    def _ids_or_404(self, object_id: str, version_id: str | None = None) -> None:
        history_model = getattr(self.model, self.model._meta.simple_history_manager_attribute)
        try:
            self.model._meta.pk.to_python(unquote(object_id))
            if version_id is not None:
                history_model.model._meta.pk.to_python(version_id)
        except ValidationError:
            raise Http404("No such object or version.") from None

    def history_view(
        self, request: HttpRequest, object_id: str, extra_context: dict | None = None
    ) -> HttpResponse:
        self._ids_or_404(object_id)
        return super().history_view(request, object_id, extra_context)

    def history_form_view(
        self,
        request: HttpRequest,
        object_id: str,
        version_id: str,
        extra_context: dict | None = None,
    ) -> HttpResponse:
        self._ids_or_404(object_id, version_id)
        return super().history_form_view(request, object_id, version_id, extra_context)


class ServiceAdmin(HistoryAdmin):
    """Shows history; writes only through services; a refused write becomes a message.

    The forms check what they can before saving, so most refusals are form errors.
    What only the service can decide under its row locks (a race with another
    writer, the last admin) arrives here as a domain error, after the admin's
    transaction was rolled back.
    """

    def get_actions(self, request: HttpRequest) -> dict:
        actions = super().get_actions(request)
        # The bulk delete would call QuerySet.delete(): no service, no history reason.
        actions.pop("delete_selected", None)
        return actions

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        for obj in queryset:
            self.delete_model(request, obj)

    def changeform_view(
        self,
        request: HttpRequest,
        object_id: str | None = None,
        form_url: str = "",
        extra_context: dict | None = None,
    ) -> HttpResponse:
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except AgentdocsError as error:
            self.message_user(request, f"Nothing was saved: {error.detail}", messages.ERROR)
            return HttpResponseRedirect(request.get_full_path())

    def delete_view(
        self, request: HttpRequest, object_id: str, extra_context: dict | None = None
    ) -> HttpResponse:
        try:
            return super().delete_view(request, object_id, extra_context)
        except AgentdocsError as error:
            self.message_user(request, f"Nothing was deleted: {error.detail}", messages.ERROR)
            return HttpResponseRedirect(request.get_full_path())


# Documents ----------------------------------------------------------------------------


class DocumentForm(ReasonForm):
    # Kept as typed: stripping would silently drop a document's final newline.
    body = forms.CharField(
        required=False,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 24, "cols": 100, "class": "vLargeTextField"}),
    )
    base_version = forms.IntegerField(widget=forms.HiddenInput, required=False)

    class Meta:
        model = Document
        fields = ["project", "path", "body"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            self.fields["base_version"].initial = self.instance.version

    def clean_path(self) -> str:
        return _checked(validate_new_path, self.cleaned_data["path"])

    def clean_body(self) -> str:
        # Browsers send a textarea with CRLF line ends; documents use LF.
        body = self.cleaned_data["body"].replace("\r\n", "\n")
        return _checked(document_checks.validate_body, body)

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data
        base_version = cleaned.get("base_version")
        if self.instance.pk and base_version is not None:
            current = (
                Document.objects.filter(pk=self.instance.pk)
                .values_list("version", flat=True)
                .first()
            )
            if current != base_version:
                raise forms.ValidationError(
                    f"This document changed since you opened it (version {base_version}); "
                    f"it is now at version {current}. Nothing was saved: reload the page "
                    "and apply your change again."
                )
        return cleaned


@admin.register(Document)
class DocumentAdmin(ServiceAdmin):
    form = DocumentForm
    list_display = ("path", "project", "version", "is_deleted", "updated_by", "updated_at")
    list_filter = ("is_deleted", "project__tenant")
    list_select_related = ("project__tenant", "updated_by")
    search_fields = ("path", "project__slug", "project__tenant__slug")
    history_list_display = ["version", "change_type"]
    actions = ["break_locks"]

    def get_fields(self, request: HttpRequest, obj: Document | None = None) -> list[str]:
        if obj is None:
            return ["project", "path", "body", "reason"]
        return [
            "project",
            "path",
            "version",
            "is_deleted",
            "body",
            "reason",
            "base_version",
            "sha256",
            "size",
            "updated_by",
            "updated_at",
            "lock_holder",
            "lock_expires_at",
        ]

    def get_readonly_fields(self, request: HttpRequest, obj: Document | None = None) -> list[str]:
        if obj is None:
            return []
        return [
            "project",
            "path",
            "version",
            "is_deleted",
            "sha256",
            "size",
            "updated_by",
            "updated_at",
            "lock_holder",
            "lock_expires_at",
        ]

    def has_delete_permission(self, request: HttpRequest, obj: Document | None = None) -> bool:
        if obj is not None and obj.is_deleted:
            return False
        return super().has_delete_permission(request, obj)

    def save_model(
        self, request: HttpRequest, obj: Document, form: DocumentForm, change: bool
    ) -> None:
        if not change or obj.is_deleted:
            # Creating at a deleted path brings the document back as its next version.
            document = document_service.document_create(
                project=obj.project,
                path=obj.path,
                body=obj.body,
                user=_staff_user(request),
                reason=form.reason_text(),
            )
        else:
            document = document_service.document_write(
                document=obj,
                body=obj.body,
                base_version=form.cleaned_data.get("base_version") or obj.version,
                user=_staff_user(request),
                reason=form.reason_text(),
            ).document
        _copy_into(obj, document)

    def delete_model(self, request: HttpRequest, obj: Document) -> None:
        document_service.document_delete(
            document=obj,
            base_version=obj.version,
            user=_staff_user(request),
            reason="Deleted in the Django admin",
        )

    def history_form_view(
        self,
        request: HttpRequest,
        object_id: str,
        version_id: str,
        extra_context: dict | None = None,
    ) -> HttpResponse:
        """Reverting to an old version is a `document_revert`: a new version like any other."""
        self._ids_or_404(object_id, version_id)
        if request.method != "POST":
            return super().history_form_view(request, object_id, version_id, extra_context)
        document = get_object_or_404(Document, pk=object_id)
        if not self.has_change_permission(request, document):
            raise PermissionDenied
        record = get_object_or_404(Document.history.model, id=object_id, history_id=version_id)
        try:
            document = document_service.document_revert(
                document=document,
                version=record.version,
                user=_staff_user(request),
                reason=request.POST.get("reason", "").strip()
                or f"Reverted to version {record.version} in the Django admin",
            )
        except AgentdocsError as error:
            self.message_user(request, f"Nothing was reverted: {error.detail}", messages.ERROR)
            return HttpResponseRedirect(request.path)
        self.message_user(
            request, f"{document} now has the body of version {record.version}.", messages.SUCCESS
        )
        return HttpResponseRedirect(reverse("admin:agentdocs_document_change", args=[document.pk]))

    @admin.action(description="Break the edit lock of the selected documents")
    def break_locks(self, request: HttpRequest, queryset: QuerySet[Document]) -> None:
        for document in queryset:
            document_locks.document_unlock(document=document, user=_staff_user(request), force=True)
        self.message_user(request, f"Released the locks of {len(queryset)} documents.")


# Tenants, projects and members --------------------------------------------------------


class TenantForm(forms.ModelForm):
    class Meta:
        model = Tenant
        fields = ["slug", "name"]


@admin.register(Tenant)
class TenantAdmin(ServiceAdmin):
    """Tenants are created here (with their `_vance` project); there is no rename service."""

    form = TenantForm
    list_display = ("slug", "name", "created_at")
    search_fields = ("slug", "name")

    def has_change_permission(self, request: HttpRequest, obj: Tenant | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Tenant | None = None) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: Tenant, form: TenantForm, change: bool) -> None:
        tenant = tenant_service.tenant_create(
            slug=obj.slug, name=obj.name, user=_staff_user(request)
        )
        _copy_into(obj, tenant)


class ProjectForm(forms.ModelForm):
    class Meta:
        model = Project
        fields = ["tenant", "slug", "name"]


@admin.register(Project)
class ProjectAdmin(ServiceAdmin):
    form = ProjectForm
    list_display = ("slug", "tenant", "name", "created_at")
    list_filter = ("tenant",)
    list_select_related = ("tenant",)
    search_fields = ("slug", "name", "tenant__slug")

    def has_change_permission(self, request: HttpRequest, obj: Project | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Project | None = None) -> bool:
        return False

    def save_model(
        self, request: HttpRequest, obj: Project, form: ProjectForm, change: bool
    ) -> None:
        project = tenant_service.project_create(
            tenant=obj.tenant, slug=obj.slug, name=obj.name, user=_staff_user(request)
        )
        _copy_into(obj, project)


class MembershipForm(ReasonForm):
    class Meta:
        model = Membership
        fields = ["tenant", "user", "role"]


@admin.register(Membership)
class MembershipAdmin(ServiceAdmin):
    form = MembershipForm
    list_display = ("user", "tenant", "role", "created_at")
    list_filter = ("role", "tenant")
    list_select_related = ("user", "tenant")
    search_fields = ("user__username", "tenant__slug")

    def get_readonly_fields(self, request: HttpRequest, obj: Membership | None = None) -> list[str]:
        return ["tenant", "user"] if obj is not None else []

    def save_model(
        self, request: HttpRequest, obj: Membership, form: MembershipForm, change: bool
    ) -> None:
        membership, _ = tenant_service.membership_set(
            tenant=obj.tenant,
            username=obj.user.get_username(),
            role=obj.role,
            actor=_staff_user(request),
            reason=form.reason_text(),
        )
        _copy_into(obj, membership)

    def delete_model(self, request: HttpRequest, obj: Membership) -> None:
        tenant_service.membership_remove(
            tenant=obj.tenant,
            username=obj.user.get_username(),
            actor=_staff_user(request),
            reason="Removed in the Django admin",
        )


# Policy: memory.* settings and recipes --------------------------------------------------


class SettingForm(ReasonForm):
    value = forms.CharField(
        required=False,
        strip=False,
        max_length=policy_service.MAX_SETTING_VALUE,
        widget=forms.TextInput(attrs={"size": 80}),
    )

    class Meta:
        model = Setting
        fields = ["tenant", "project", "key", "value", "enforced"]

    def clean_key(self) -> str:
        return _checked(policy_rules.validate_setting_key, self.cleaned_data["key"])

    def clean_value(self) -> str:
        # memory.* values go into every prompt: the service's checks, as a form error.
        return _checked(
            partial(refuse_hidden_or_secret, field="value", what="The value", prompt=True),
            self.cleaned_data["value"],
        )

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data
        tenant = cleaned.get("tenant", self.instance.tenant if self.instance.pk else None)
        project = cleaned.get("project", self.instance.project if self.instance.pk else None)
        if project is not None and tenant is not None and project.tenant_id != tenant.pk:
            self.add_error("project", "This project belongs to another tenant.")
        if project is not None and cleaned.get("enforced"):
            self.add_error("enforced", "Only tenant settings can be enforced.")
        return cleaned


@admin.register(Setting)
class SettingAdmin(ServiceAdmin):
    form = SettingForm
    list_display = ("key", "value", "tenant", "project", "enforced", "updated_by", "updated_at")
    list_filter = ("enforced", "tenant")
    list_select_related = ("tenant", "project", "updated_by")
    search_fields = ("key", "value")

    def get_fields(self, request: HttpRequest, obj: Setting | None = None) -> list[str]:
        return ["tenant", "project", "key", "value", "enforced", "reason"]

    def get_readonly_fields(self, request: HttpRequest, obj: Setting | None = None) -> list[str]:
        return ["tenant", "project", "key"] if obj is not None else []

    def save_model(
        self, request: HttpRequest, obj: Setting, form: SettingForm, change: bool
    ) -> None:
        setting, _ = policy_service.setting_set(
            tenant=obj.tenant,
            project=obj.project,
            key=obj.key,
            value=obj.value,
            enforced=obj.enforced,
            user=_staff_user(request),
            reason=form.reason_text(),
        )
        _copy_into(obj, setting)

    def delete_model(self, request: HttpRequest, obj: Setting) -> None:
        policy_service.setting_delete(
            tenant=obj.tenant,
            project=obj.project,
            key=obj.key,
            user=_staff_user(request),
            reason="Deleted in the Django admin",
        )


class RecipeForm(ReasonForm):
    class Meta:
        model = Recipe
        fields = ["tenant", "name", "params", "profiles"]
        help_texts = {
            "params": 'For example {"agentDocument": ""} (no agent document) or '
            '{"agentDocument": "notes/team.md"}. Leave agentDocument out for the default.',
            "profiles": 'For example {"cli": {"useClientAgentDoc": true}}.',
        }

    def clean_name(self) -> str:
        return _checked(recipe_rules.validate_recipe_name, self.cleaned_data["name"])

    def clean_params(self) -> dict:
        return _checked(recipe_rules.validate_params, self.cleaned_data["params"])

    def clean_profiles(self) -> dict:
        return _checked(recipe_rules.validate_profiles, self.cleaned_data["profiles"])


@admin.register(Recipe)
class RecipeAdmin(ServiceAdmin):
    form = RecipeForm
    list_display = ("name", "tenant", "params", "profiles", "updated_by", "updated_at")
    list_filter = ("tenant",)
    list_select_related = ("tenant", "updated_by")
    search_fields = ("name", "tenant__slug")

    def get_fields(self, request: HttpRequest, obj: Recipe | None = None) -> list[str]:
        return ["tenant", "name", "params", "profiles", "reason"]

    def get_readonly_fields(self, request: HttpRequest, obj: Recipe | None = None) -> list[str]:
        return ["tenant", "name"] if obj is not None else []

    def save_model(self, request: HttpRequest, obj: Recipe, form: RecipeForm, change: bool) -> None:
        if change:
            recipe = policy_service.recipe_update(
                recipe=obj,
                params=obj.params,
                profiles=obj.profiles,
                user=_staff_user(request),
                reason=form.reason_text(),
            )
        else:
            recipe = policy_service.recipe_create(
                tenant=obj.tenant,
                name=obj.name,
                params=obj.params,
                profiles=obj.profiles,
                user=_staff_user(request),
                reason=form.reason_text(),
            )
        _copy_into(obj, recipe)

    def delete_model(self, request: HttpRequest, obj: Recipe) -> None:
        policy_service.recipe_delete(
            recipe=obj, user=_staff_user(request), reason="Deleted in the Django admin"
        )


# Binding records, the provider map and skills: shown, not edited ----------------------------------


class ViewOnlyAdmin(admin.ModelAdmin):
    """For rows with their own API and service: the admin only shows them."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


@admin.register(ProviderMapping)
class ProviderMappingAdmin(ViewOnlyAdmin, HistoryAdmin):
    """Edited by tenant admins through the provider map API."""

    list_display = ("name", "tenant", "project", "path", "updated_by", "updated_at")
    list_filter = ("tenant",)
    list_select_related = ("tenant", "project", "updated_by")
    search_fields = ("name", "path")


@admin.register(Skill)
class SkillAdmin(ViewOnlyAdmin, HistoryAdmin):
    """Written through the skills API, whose one write path checks every file."""

    list_display = ("name", "project", "version", "is_deleted", "updated_by", "updated_at")
    list_filter = ("project__tenant",)
    list_select_related = ("project__tenant", "updated_by")
    search_fields = ("name", "description")


@admin.register(BindingRecord)
class BindingRecordAdmin(ViewOnlyAdmin):
    """Immutable evidence of what a run was bound to."""

    list_display = ("pk", "process", "project", "problem_count", "created_by", "created_at")
    list_filter = ("tenant",)
    list_select_related = ("project__tenant", "created_by")
    search_fields = ("process",)


@admin.register(Invitation)
class InvitationAdmin(ViewOnlyAdmin, HistoryAdmin):
    """Sent by tenant admins and answered by the invited user, through the API and pages."""

    list_display = (
        "pk",
        "tenant",
        "username",
        "email",
        "role",
        "state",
        "invited_by",
        "created_at",
    )
    list_filter = ("state", "tenant")
    list_select_related = ("tenant", "invited_by")
    search_fields = ("username", "email")


@admin.register(ApiToken)
class ApiTokenAdmin(ViewOnlyAdmin, HistoryAdmin):
    """Only the hash of a token is stored: the admin shows who holds which, never a key."""

    list_display = ("prefix", "name", "user", "tenant", "scopes", "expires_at", "revoked_at")
    list_filter = ("tenant",)
    list_select_related = ("user", "tenant")
    search_fields = ("prefix", "name", "user__username")
    exclude = ("key_hash",)
