"""The merge pages of a stale save: the merged page and the three-way page.

A save based on a stale version is merged onto the current one (three-way, by lines):
the merged page then says with whom and shows which lines came from whom. Where both
changed the same lines, the three-way page (`document_resolve`) shows the base, their
change and the user's per conflict and saves the user's choices, recorded as a merge
with the version they met; a choice that drops their changed lines needs an explicit
confirmation.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from agentdocs import permissions
from agentdocs.core.errors import (
    AgentdocsError,
    InvalidInput,
    MergeConflict,
    NotFound,
    VersionConflict,
)
from agentdocs.core.merge import MergeResult, three_way
from agentdocs.models import Document
from agentdocs.permissions import ProjectAccess
from agentdocs.selectors import documents as document_selectors
from agentdocs.selectors.documents import MergedOnto, merged_onto
from agentdocs.services import documents as document_service
from agentdocs.services.documents import Merge, Written
from agentdocs.web import hidden_characters
from agentdocs.web.document_pages import (
    StaleSave,
    current_document,
    document_url,
    edit_page,
    offers_acknowledgement,
)
from agentdocs.web.forms.document_merge import MergeResolutionForm
from agentdocs.web.forms.documents import DocumentEditForm
from agentdocs.web.pages import form_page, member_page


def after_save(
    request: HttpRequest,
    access: ProjectAccess,
    written: Written,
    *,
    before: Document,
    unchanged: str,
    changed: str,
) -> HttpResponse:
    """Where a save from the edit page or the three-way page goes: the merged page when
    the save was merged onto a version saved meanwhile (as `document_write` says), else
    the document, saying ``unchanged`` when no version was written (the text was the
    same) or ``changed``."""
    saved = written.document
    if written.merge is not None:
        return _merged_page(request, access, saved, MergeStory.of(written.merge))
    if saved.version == before.version:
        messages.info(request, unchanged)
    else:
        messages.success(request, changed)
    return redirect(document_url("document", access, saved.path))


@dataclass(frozen=True)
class MergeStory:
    """A merge as a page tells it: the merge of the user's text (based on
    `base_version`) with `theirs`, the version it met."""

    result: MergeResult
    base_version: int
    theirs: MergedOnto

    @classmethod
    def of(cls, merge: Merge) -> MergeStory:
        return cls(result=merge.result, base_version=merge.base_version, theirs=merge.theirs)

    @property
    def their_author(self) -> str:
        return self.theirs.author

    def segments(self, form: MergeResolutionForm | None = None) -> list[dict]:
        """The merged text in order: clean stretches with where they came from, and
        each conflict with its three sides (and, given the form, its fields)."""
        segments: list[dict] = []
        index = 0
        for piece in self.result.pieces:
            if piece.conflict is None:
                lines = piece.text.count("\n") + (0 if piece.text.endswith("\n") else 1)
                segments.append({"origin": piece.origin, "text": piece.text, "lines": lines})
                continue
            segment = {"origin": "conflict", "conflict": piece.conflict, "number": index + 1}
            if form is not None:
                segment["choice"] = form[f"choice_{index}"]
                segment["text"] = form[f"text_{index}"]
            segments.append(segment)
            index += 1
        return segments


def _conflict_story(
    document: Document, *, base_version: int, theirs_version: int, body: str
) -> MergeStory:
    """The three-way page's conflicts, again from what its form sends back: the user's
    text and the two versions it met (the page keeps no state between its requests)."""
    rows = document_selectors.document_versions(
        document=document, versions=(base_version, theirs_version)
    )
    for version in (base_version, theirs_version):
        if version not in rows:
            raise NotFound(
                f"Version {version} does not exist; the document is at version {document.version}.",
                field="version",
            )
    base, theirs = rows[base_version], rows[theirs_version]
    return MergeStory(
        result=three_way(base.body, theirs.body, body),
        base_version=base_version,
        theirs=merged_onto(theirs),
    )


def _merged_page(
    request: HttpRequest, access: ProjectAccess, saved: Document, story: MergeStory
) -> HttpResponse:
    """What a stale save that merged cleanly answers: saved, with whom, and who wrote what."""
    return render(
        request,
        "agentdocs/document_merged.html",
        {
            "access": access,
            "project": access.project,
            "document": saved,
            "story": story,
            "segments": story.segments(),
            "origins": story.result.origins(),
        },
    )


def conflict_page(
    request: HttpRequest,
    access: ProjectAccess,
    path: str,
    error: MergeConflict,
    *,
    body: str,
    reason: str,
    acknowledge_secret: str,
    acknowledge_hidden: str,
) -> HttpResponse:
    """The three-way page for a save whose change overlaps the current version's: the
    user's text, reason and base version ride along, so the choices are saved as theirs."""
    document = current_document(access, path)
    theirs = document_selectors.document_version(document=document, version=error.current_version)
    story = MergeStory(
        result=error.result,
        base_version=error.base_version,
        theirs=merged_onto(theirs),
    )
    form = MergeResolutionForm(
        initial={
            "body": body,
            "base_version": error.base_version,
            "theirs_version": error.current_version,
            "reason": reason,
            "acknowledge_secret": acknowledge_secret,
            "acknowledge_hidden": acknowledge_hidden,
        },
        conflicts=len(error.result.conflicts),
    )
    for index, conflict in enumerate(error.result.conflicts):
        # "Write it myself" starts from both sides, theirs first.
        both = (*conflict.theirs.lines, *conflict.yours.lines)
        form.fields[f"text_{index}"].initial = "".join(line + "\n" for line in both)
    return _resolve_page(request, access, document, form, story, refusal=error)


@member_page
@require_POST
def document_resolve(request: HttpRequest, tenant: str, project: str, path: str) -> HttpResponse:
    """Save the three-way page's choices: their change, yours, both or a text of one's
    own per conflict, merged again onto whatever was saved meanwhile."""
    access = permissions.project_access(request.user, tenant, project)
    document = permissions.document_for(access, path, intent="write", include_deleted=True)
    # First the text and its two versions: they say how many conflicts there are.
    given = MergeResolutionForm(request.POST)
    given.is_valid()
    if not {"body", "base_version", "theirs_version"} <= set(given.cleaned_data):
        raise InvalidInput("The merge form is incomplete; open the editor again.", field="body")
    story = _conflict_story(
        document,
        base_version=given.cleaned_data["base_version"],
        theirs_version=given.cleaned_data["theirs_version"],
        body=given.cleaned_data["body"],
    )
    form = MergeResolutionForm(request.POST, conflicts=len(story.result.conflicts))
    if not form.is_valid():
        return _resolve_page(request, access, document, form, story)
    choices = form.resolutions()
    dropped = story.result.discarded(choices)
    if dropped and not form.cleaned_data["discard_theirs"]:
        numbers = ", ".join(str(index + 1) for index in dropped)
        form.add_error(
            "discard_theirs",
            f"Your choice for conflict {numbers} drops {story.their_author}'s change. "
            f"Tick “I am discarding {story.their_author}'s change” to save it so, or "
            "choose their change or both.",
        )
        return _resolve_page(request, access, document, form, story)
    resolved = story.result.resolve(choices)
    theirs_version = form.cleaned_data["theirs_version"]
    reason = form.cleaned_data["reason"]
    acknowledge_secret = form.cleaned_data["acknowledge_secret"]
    acknowledge_hidden = form.cleaned_data["acknowledge_hidden"]
    try:
        # Based on the version it resolves the conflicts with, and recorded as a merge
        # with it; merged again onto anything saved since.
        written = document_service.document_write(
            document=document,
            body=resolved,
            base_version=theirs_version,
            user=access.user,
            reason=reason,
            acknowledge_secret=acknowledge_secret,
            acknowledge_hidden=acknowledge_hidden,
            merge=True,
            resolves_merge_with=theirs_version,
        )
    except MergeConflict as error:
        # Saved again meanwhile, over the same lines: resolve against that version.
        return conflict_page(
            request,
            access,
            path,
            error,
            body=resolved,
            reason=reason,
            acknowledge_secret=acknowledge_secret,
            acknowledge_hidden=acknowledge_hidden,
        )
    except VersionConflict as error:
        current = current_document(access, path)
        edit_form = DocumentEditForm(
            {
                "body": resolved,
                "base_version": current.version,
                "reason": reason,
                "acknowledge_secret": acknowledge_secret,
                "acknowledge_hidden": acknowledge_hidden,
            }
        )
        edit_form.is_valid()
        conflict = StaleSave(document=current, form=edit_form).conflict_panel(mine=resolved)
        return edit_page(request, access, current, edit_form, refusal=error, conflict=conflict)
    except AgentdocsError as error:
        return _resolve_page(
            request, access, current_document(access, path), form, story, refusal=error
        )
    version = written.document.version
    return after_save(
        request,
        access,
        written,
        before=document,
        unchanged=f"No changes: {path} version {version} already says that.",
        changed=f"Saved {path} as version {version} with your choices.",
    )


def _resolve_page(
    request: HttpRequest,
    access: ProjectAccess,
    document: Document,
    form: MergeResolutionForm,
    story: MergeStory,
    *,
    refusal: AgentdocsError | None = None,
) -> HttpResponse:
    context = {
        "access": access,
        "project": access.project,
        "document": document,
        "form": form,
        "story": story,
        "segments": story.segments(form),
        "conflict_count": len(story.result.conflicts),
        "offer_acknowledgement": offers_acknowledgement(access, form, refusal),
        "offer_hidden_acknowledgement": hidden_characters.offers_acknowledgement(
            tenant_id=access.tenant.pk, form=form, refusal=refusal
        ),
    }
    # A merge conflict is what the page is about: it says so in its own words.
    return form_page(
        request,
        "agentdocs/document_resolve.html",
        context,
        form=form,
        refusal=refusal,
        beside_form=not isinstance(refusal, MergeConflict),
    )
