"""Change request pages: the tenant's inbox, proposing, and a change request's page
with its diffs, reviews, comments and the buttons the user's rights allow.

Each POST handler loads the change request, asks `agentdocs.permissions`, calls one
service and redirects; a refusal shows the change page again with its sentence
under the refusal's own status (409 for a merge conflict, with the conflicts).
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_http_methods, require_POST

from agentdocs import permissions
from agentdocs.core.errors import AgentdocsError, InvalidInput
from agentdocs.models import ChangeRequest, ChangeState
from agentdocs.models.changes import LIVE_STATES
from agentdocs.permissions import ProjectAccess
from agentdocs.selectors import change_evals as evals_selectors
from agentdocs.selectors import changes as change_selectors
from agentdocs.selectors import documents as document_selectors
from agentdocs.selectors import review as review_selectors
from agentdocs.services import changes as change_service
from agentdocs.web import hidden_characters
from agentdocs.web.diffview import SideBySide, file_diffs, side_by_side
from agentdocs.web.forms.changes import ChangeCommentForm, ChangeProposeForm, ChangeReviewForm
from agentdocs.web.pages import form_page, list_page, member_page

CHANGES_PER_PAGE = 50
# The inbox's default: what waits for a review or a merge.
WAITING = "waiting"


@member_page
def change_inbox(request: HttpRequest, tenant: str) -> HttpResponse:
    access = permissions.tenant_access(request.user, tenant)
    state = request.GET.get("state", WAITING) or WAITING
    if state == WAITING:
        rows = change_selectors.change_list_for_tenant(tenant=access.tenant).filter(
            state__in=LIVE_STATES
        )
    else:
        rows = change_selectors.change_list_for_tenant(
            tenant=access.tenant, state=change_selectors.validate_state(state)
        )
    return render(
        request,
        "agentdocs/changes.html",
        {
            "access": access,
            "tenant": access.tenant,
            "changes": list_page(request, rows, per_page=CHANGES_PER_PAGE),
            "state": state,
            "states": _state_filters(change_selectors.state_counts(tenant=access.tenant)),
        },
    )


def _state_filters(counts: dict[str, int]) -> list[tuple[str, str, int]]:
    """The inbox's filters: (state, label, how many)."""
    waiting = sum(counts[state] for state in LIVE_STATES)
    return [
        (WAITING, "waiting for review or merge", waiting),
        *((state, state, counts[state]) for state in ChangeState.values),
    ]


@member_page
@require_http_methods(["GET", "POST"])
def change_propose(request: HttpRequest, tenant: str, project: str) -> HttpResponse:
    """Any member proposes; the document's edit page posts here too ("Propose a change")."""
    access = permissions.project_access(request.user, tenant, project)
    if request.method == "POST":
        form = ChangeProposeForm(request.POST)
        path = str(form["path"].value() or "")
        document = document_selectors.document_get(project=access.project, path=path)
        if not form.is_valid():
            return _propose_page(request, access, document, form)
        try:
            change = change_service.change_propose(
                project=access.project, user=access.user, **form.cleaned_data
            )
        except AgentdocsError as error:
            return _propose_page(request, access, document, form, refusal=error)
        messages.success(request, f"Proposed change #{change.pk} to {path} for review.")
        return redirect(
            "change", tenant=access.tenant.slug, project=access.project.slug, change_id=change.pk
        )
    path = request.GET.get("path", "")
    document = document_selectors.document_get(project=access.project, path=path)
    form = ChangeProposeForm(
        initial={"path": path, "base_version": document.version, "body": document.body}
    )
    return _propose_page(request, access, document, form)


def _propose_page(
    request: HttpRequest,
    access: ProjectAccess,
    document: Any,
    form: ChangeProposeForm,
    *,
    refusal: AgentdocsError | None = None,
) -> HttpResponse:
    context = {
        "access": access,
        "project": access.project,
        "document": document,
        "form": form,
        "offer_hidden_acknowledgement": hidden_characters.offers_acknowledgement(
            tenant_id=access.tenant.pk, form=form, refusal=refusal
        ),
    }
    return form_page(request, "agentdocs/change_propose.html", context, form=form, refusal=refusal)


def _change(request: HttpRequest, tenant: str, project: str, change_id: int):
    access = permissions.project_access(request.user, tenant, project)
    return access, change_selectors.change_get(project=access.project, change_id=change_id)


def _change_page(
    request: HttpRequest,
    access: ProjectAccess,
    change: ChangeRequest,
    *,
    refusal: AgentdocsError | None = None,
    review_form: ChangeReviewForm | None = None,
    comment_form: ChangeCommentForm | None = None,
) -> HttpResponse:
    invalid = any(form is not None and form.errors for form in (review_form, comment_form))
    preview = change_selectors.merge_preview(change)
    document = preview.document
    current: Any = document if document is not None and not document.is_deleted else None
    if change.is_skill:
        current = preview.skill if preview.current_files is not None else None
    policy = review_selectors.review_policy(project=change.project)
    needed = policy.approvals
    reviews = list(change.reviews.select_related("reviewer"))
    approvals = permissions.approvals(change, reviews=reviews, protected=policy.protected_labels)
    approvers = [approval.reviewer for approval in approvals if approval.counts]
    may_review = change.is_live and access.may_review(
        change.path, label=change.label, protected=policy.protected_labels
    )
    reviewed = any(review.reviewer_id == access.user.pk for review in reviews)
    conflicts, conflicts_truncated = change_selectors.change_conflicts(preview)
    runs = evals_selectors.change_evals(change)
    evals_gate = evals_selectors.evals_gate(
        change, required=policy.require_evals, max_regression=policy.max_regression, runs=runs
    )
    context = {
        "access": access,
        "project": access.project,
        "change": change,
        "document": document,
        "current": current,
        **_diffs(change, current, preview),
        "base_label": f"Version {change.base_version}",
        "mergeable": change.is_live and preview.mergeable,
        "conflicts": conflicts,
        "conflicts_truncated": conflicts_truncated,
        "conflict_count": len(preview.conflicts),
        "approvers": approvers,
        "approvals_not_counting": [
            approval.reviewer for approval in approvals if not approval.counts
        ],
        "approvals_required": needed,
        "reviews": reviews,
        "comments": list(change.comments.select_related("author")),
        "evals": runs,
        "latest_evals": runs[-1] if runs else None,
        "evals_gate": evals_gate,
        "is_proposer": change.proposer_id == access.user.pk,
        "may_review": may_review and not reviewed and change.proposer_id != access.user.pk,
        "may_merge": may_review and len(approvers) >= needed and evals_gate.satisfied,
        "review_form": review_form or ChangeReviewForm(),
        "comment_form": comment_form or ChangeCommentForm(),
        "refusal": refusal,
    }
    return render(
        request,
        "agentdocs/change.html",
        context,
        status=refusal.status if refusal is not None else (400 if invalid else 200),
    )


def _diffs(
    change: ChangeRequest, current: Any, preview: change_selectors.MergePreview
) -> dict[str, Any]:
    """The page's diffs: a document's text against its base and the current version;
    a skill's files, one by one (as the skill's diff page shows them)."""
    if not change.is_skill:
        return {
            "diff_base": _bounded_diff(preview.base_body, change.body),
            "diff_current": _diff_against_current(current, change, preview),
        }
    files = change.files or {}
    merged = preview.bundle.files if preview.mergeable and preview.bundle else files
    return {
        "files_base": file_diffs(preview.base_files, files),
        "files_current": None if current is None else file_diffs(current.files, merged),
    }


def _diff_against_current(
    current: Any, change: ChangeRequest, preview: change_selectors.MergePreview
) -> Any:
    """What merging would make of the current version (the proposal itself when the
    merge is not clean): edits saved since the base stay, and the page says so."""
    if current is None:
        return None
    if preview.result is not None and preview.result.clean:
        return _bounded_diff(current.body, preview.result.text)
    return _bounded_diff(current.body, change.body)


def _bounded_diff(old: str, new: str) -> SideBySide:
    """The side-by-side view, folded as on the diff page and bounded as the API's
    change request diffs: the page carries two of them, the whole is a download."""
    return side_by_side(
        old,
        new,
        max_changed_lines=change_selectors.DIFF_MAX_CHANGED_LINES,
        max_bytes=change_selectors.DIFF_MAX_SHOWN_BYTES,
    )


@member_page
def change_diff_download(
    request: HttpRequest, tenant: str, project: str, change_id: int
) -> HttpResponse:
    """The whole unified diff of the proposal against its base (`?against=base`) or
    the current version (`?against=current`), as a file."""
    _, change = _change(request, tenant, project, change_id)
    against = request.GET.get("against", "base")
    preview = change_selectors.merge_preview(change)
    text = change_selectors.change_whole_diff(change, preview, against=against)
    response = HttpResponse(text, content_type="text/plain; charset=utf-8")
    filename = f"change-{change.pk}-against-{against}.diff"
    response["Content-Disposition"] = content_disposition_header(True, filename) or "attachment"
    return response


@member_page
@require_http_methods(["GET", "POST"])
def change_detail(request: HttpRequest, tenant: str, project: str, change_id: int) -> HttpResponse:
    """The change request (GET); its forms post here with their `action`, so a refused
    review, comment, merge or withdrawal shows the page again at its own address."""
    access, change = _change(request, tenant, project, change_id)
    if request.method == "GET":
        return _change_page(request, access, change)
    action = CHANGE_ACTIONS.get(request.POST.get("action", ""))
    if action is None:
        raise InvalidInput(
            f"`action` must be one of {', '.join(sorted(CHANGE_ACTIONS))}.", field="action"
        )
    return action(request, access, change)


def _done(request: HttpRequest, change: ChangeRequest, message: str) -> HttpResponse:
    messages.success(request, message)
    return redirect(
        "change", tenant=change.tenant.slug, project=change.project.slug, change_id=change.pk
    )


# The addresses below stay for scripts that used them; the page posts to itself.
@member_page
@require_POST
def change_review(request: HttpRequest, tenant: str, project: str, change_id: int) -> HttpResponse:
    return _review(request, *_change(request, tenant, project, change_id))


@member_page
@require_POST
def change_merge(request: HttpRequest, tenant: str, project: str, change_id: int) -> HttpResponse:
    return _merge(request, *_change(request, tenant, project, change_id))


@member_page
@require_POST
def change_withdraw(
    request: HttpRequest, tenant: str, project: str, change_id: int
) -> HttpResponse:
    return _withdraw(request, *_change(request, tenant, project, change_id))


@member_page
@require_POST
def change_comment(request: HttpRequest, tenant: str, project: str, change_id: int) -> HttpResponse:
    return _comment(request, *_change(request, tenant, project, change_id))


def _review(request: HttpRequest, access: ProjectAccess, change: ChangeRequest) -> HttpResponse:
    permissions.require_change_review(access, change)
    form = ChangeReviewForm(request.POST)
    if not form.is_valid():
        return _change_page(request, access, change, review_form=form)
    try:
        change_service.change_review(change=change, user=access.user, **form.cleaned_data)
    except AgentdocsError as error:
        return _change_page(request, access, change, refusal=error, review_form=form)
    verb = "Approved" if form.cleaned_data["decision"] == "approve" else "Rejected"
    return _done(request, change, f"{verb} change #{change.pk}.")


def _merge(request: HttpRequest, access: ProjectAccess, change: ChangeRequest) -> HttpResponse:
    permissions.require_change_review(access, change)
    try:
        merged = change_service.change_merge(change=change, user=access.user)
    except AgentdocsError as error:
        return _change_page(request, access, change, refusal=error)
    what = f"the skill {merged.skill}" if merged.is_skill else merged.path
    if merged.label_action == "remove":
        done = f"the label {merged.label} of {what} is removed"
    elif merged.label_action == "move":
        done = f"the label {merged.label} of {what} is at version {merged.merged_version}"
    else:
        done = f"{what} is now version {merged.merged_version}"
    return _done(request, merged, f"Merged change #{merged.pk}: {done}.")


def _withdraw(request: HttpRequest, access: ProjectAccess, change: ChangeRequest) -> HttpResponse:
    try:
        change_service.change_withdraw(change=change, user=access.user)
    except AgentdocsError as error:
        return _change_page(request, access, change, refusal=error)
    return _done(request, change, f"Withdrew change #{change.pk}.")


def _comment(request: HttpRequest, access: ProjectAccess, change: ChangeRequest) -> HttpResponse:
    form = ChangeCommentForm(request.POST)
    if not form.is_valid():
        return _change_page(request, access, change, comment_form=form)
    try:
        change_service.change_comment(change=change, user=access.user, **form.cleaned_data)
    except AgentdocsError as error:
        return _change_page(request, access, change, refusal=error, comment_form=form)
    return _done(request, change, "Comment added.")


CHANGE_ACTIONS = {"review": _review, "merge": _merge, "withdraw": _withdraw, "comment": _comment}
