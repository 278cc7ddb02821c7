"""What the document pages share: the document as it is now, the document page's
context (with its labels and their forms), its lock and reach, the "save anyway"
offers, a stale save's conflict panel, and the edit page itself (which the editor,
the three-way page and a refused revert all come back to).

A refused save keeps what the user typed on the page: nothing here throws text away.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from django.forms import Form
from django.http import HttpRequest, HttpResponse, QueryDict
from django.urls import reverse

from agentdocs.core.errors import (
    AgentdocsError,
    NotFound,
    SecretDetected,
)
from agentdocs.core.numbers import positive_int
from agentdocs.models import RESERVED_PROJECT, Document
from agentdocs.permissions import ProjectAccess
from agentdocs.selectors import document_locks as lock_selectors
from agentdocs.selectors import documents as document_selectors
from agentdocs.selectors import labels as label_selectors
from agentdocs.selectors import outcomes as outcome_selectors
from agentdocs.selectors import policy as policy_selectors
from agentdocs.selectors import tenancy as tenancy_selectors
from agentdocs.services import costs as cost_service
from agentdocs.web import hidden_characters
from agentdocs.web.diffview import side_by_side
from agentdocs.web.forms.documents import DocumentEditForm
from agentdocs.web.forms.labels import LabelMoveForm, LabelRemoveForm
from agentdocs.web.guideline import measure
from agentdocs.web.markdown import render_markdown
from agentdocs.web.outcomes_chart import comparison_context
from agentdocs.web.pages import form_page, list_page

# One row of a document's history (simple-history builds its class at run time).
DocumentVersion = Any


F = TypeVar("F", bound=Form)


def document_url(name: str, access: ProjectAccess, path: str) -> str:
    return reverse(
        name, kwargs={"tenant": access.tenant.slug, "project": access.project.slug, "path": path}
    )


def reach(access: ProjectAccess, path: str) -> dict | None:
    """For a `_vance` document: the projects that inherit it and those that shadow it."""
    if not access.project.is_reserved:
        return None
    projects = list(tenancy_selectors.project_list_with_document(tenant=access.tenant, path=path))
    return {
        # `has_document` is the selector's annotation.
        "inheriting": [p for p in projects if not p.has_document],  # type: ignore[attr-defined]
        "shadowing": [p for p in projects if p.has_document],  # type: ignore[attr-defined]
    }


def shadowed_tenant_document(access: ProjectAccess, path: str) -> Document | None:
    """The `_vance` document this project's own document hides from the cascade."""
    if access.project.is_reserved:
        return None
    for candidate in document_selectors.cascade_documents(project=access.project, path=path):
        if candidate.project.slug == RESERVED_PROJECT:
            return candidate
    return None


def lock_context(access: ProjectAccess, document: Document) -> dict:
    lock = lock_selectors.lock_state(document)
    held_by_me = lock is not None and document.lock_holder_id == access.user.pk
    return {
        "lock": lock,
        "lock_expires_at": document.lock_expires_at if lock else None,
        "lock_held_by_me": held_by_me,
        "lock_held_by_other": lock is not None and not held_by_me,
    }


def offers_acknowledgement(
    access: ProjectAccess, form: Form, refusal: AgentdocsError | None
) -> bool:
    """Whether the page shows the "save anyway" choice: once the secret check refused
    the text (and the tenant allows overrides), and while the user has it chosen."""
    if form["acknowledge_secret"].value():
        return True
    return isinstance(refusal, SecretDetected) and policy_selectors.secret_override_allowed(
        tenant_id=access.tenant.pk
    )


def current_document(access: ProjectAccess, path: str) -> Document:
    """The document as it is now, deleted or not: history, diffs and refused saves show it."""
    return document_selectors.document_get(project=access.project, path=path, include_deleted=True)


@dataclass(frozen=True)
class StaleSave(Generic[F]):
    """A save refused because the document moved on (VersionConflict).

    `document` is the document as it is now; `form` is what the user sent, with
    its base version moved to the current one: nothing they typed is lost, and
    their next save is a deliberate one over a version they have now seen.
    """

    document: Document
    form: F

    def conflict_panel(self, *, mine: str) -> dict:
        """The edit page's conflict panel: who saved first and why, and what
        differs between their version and the user's unsaved text."""
        document = self.document
        winner = document_selectors.document_version(document=document, version=document.version)
        saved_by = document.updated_by.get_username() if document.updated_by else "someone"
        return {
            "document": document,
            "reason": winner.history_change_reason,
            "old_label": f"Version {document.version}, saved by {saved_by}",
            "diff": side_by_side(document.body, mine),
        }


def stale_save(
    request: HttpRequest, access: ProjectAccess, path: str, form_class: type[F]
) -> StaleSave[F]:
    """What every page that refuses a stale save shows: see `StaleSave`."""
    document = current_document(access, path)
    data = request.POST.copy()
    data["base_version"] = str(document.version)
    form = form_class(data)
    form.is_valid()
    return StaleSave(document=document, form=form)


def edit_page(
    request: HttpRequest,
    access: ProjectAccess,
    document: Document,
    form: DocumentEditForm,
    *,
    refusal: AgentdocsError | None = None,
    conflict: dict | None = None,
) -> HttpResponse:
    body = form["body"].value() or ""
    context = {
        "access": access,
        "project": access.project,
        "document": document,
        "form": form,
        "conflict": conflict,
        "measure": measure(body),
        "preview_html": render_markdown(body),
        "reach": reach(access, document.path),
        "shadowed": shadowed_tenant_document(access, document.path),
        "offer_acknowledgement": offers_acknowledgement(access, form, refusal),
        "offer_hidden_acknowledgement": hidden_characters.offers_acknowledgement(
            tenant_id=access.tenant.pk, form=form, refusal=refusal
        ),
        **lock_context(access, document),
    }
    # The conflict panel explains a stale save in its own words, with the diff.
    return form_page(
        request,
        "agentdocs/document_edit.html",
        context,
        form=form,
        refusal=refusal,
        beside_form=conflict is None,
    )


def version_param(params: QueryDict, name: str, default: int) -> int:
    value = params.get(name, "")
    if not value:
        return default
    version = positive_int(value)
    if version is None:
        raise NotFound(f"`{name}` must be a version number.", field=name)
    return version


# The document page's labels, a page at a time (`?page=`), as the API's list.
LABELS_PER_PAGE = 50


def _canary_block(access: ProjectAccess, labels: Any) -> list[dict[str, Any]]:
    """A document labelled `canary`: canary against production on the project's top
    outcomes (no query for a document without that label)."""
    if not any(label.name == outcome_selectors.CANARY for label in labels):
        return []
    return [
        comparison_context(comparison)
        for comparison in outcome_selectors.canary_comparisons(project=access.project)
    ]


def detail_context(
    request: HttpRequest,
    access: ProjectAccess,
    document: Document,
    shown: DocumentVersion,
    *,
    label_form: LabelMoveForm | None = None,
    remove_form: LabelRemoveForm | None = None,
) -> dict[str, object]:
    path = document.path
    is_current = shown.version == document.version
    labels = list_page(
        request, label_selectors.label_rows(document=document), per_page=LABELS_PER_PAGE
    )
    return {
        "access": access,
        "project": access.project,
        "document": document,
        "shown": shown,
        "shown_author": shown.history_user if shown is not document else document.updated_by,
        "shown_when": shown.history_date if shown is not document else document.updated_at,
        "is_current": is_current,
        "is_deleted": shown.is_deleted,
        "html": render_markdown(shown.body),
        "measure": measure(shown.body),
        "cost": cost_service.document_cost(project=access.project, path=path)
        if is_current and not shown.is_deleted
        else None,
        "may_write": access.may_write(path),
        "reach": reach(access, path),
        "shadowed": shadowed_tenant_document(access, path),
        "labels": labels,
        "canary": _canary_block(access, labels),
        "label_form": label_form or LabelMoveForm(initial={"version": shown.version}),
        "label_remove_form": remove_form or LabelRemoveForm(),
        **lock_context(access, document),
    }
