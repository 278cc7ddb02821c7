"""The skill pages (issue 37): a project's skills, one skill with its files and
versions, the editor of its `SKILL.md` (the document editor's preview and size
meter) and the diff of two versions, file by file.

Reads see the skill the project offers (its own, else its tenant's from `_vance`);
the editor writes the project's own skill only, through the one write path.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from agentdocs import permissions
from agentdocs.core.agent_files import split_frontmatter
from agentdocs.core.errors import AgentdocsError
from agentdocs.core.skills import SKILL_FILE, body_warnings, skill_body_warnings, skill_path
from agentdocs.models import Skill
from agentdocs.permissions import ProjectAccess
from agentdocs.selectors import skills as skill_selectors
from agentdocs.services import changes as change_service
from agentdocs.services import skill_review
from agentdocs.web.diffview import file_diffs
from agentdocs.web.document_pages import version_param
from agentdocs.web.forms.skills import SkillEditForm
from agentdocs.web.guideline import measure
from agentdocs.web.markdown import render_markdown
from agentdocs.web.pages import form_page, list_page, member_page

SKILLS_PER_PAGE = 50
VERSIONS_SHOWN = 50


def _files(skill: Skill) -> list[dict[str, object]]:
    return [
        {"path": path, "size": len(text.encode("utf-8")), "text": text}
        for path, text in sorted(skill.files.items())
    ]


@member_page
def skill_list(request: HttpRequest, tenant: str, project: str) -> HttpResponse:
    access = permissions.project_access(request.user, tenant, project)
    skills = list_page(
        request, skill_selectors.skill_list(project=access.project), per_page=SKILLS_PER_PAGE
    )
    return render(
        request,
        "agentdocs/skills.html",
        {"access": access, "project": access.project, "skills": skills},
    )


@member_page
def skill_detail(request: HttpRequest, tenant: str, project: str, name: str) -> HttpResponse:
    access = permissions.project_access(request.user, tenant, project)
    skill = skill_selectors.skill_get(project=access.project, name=name)
    own = skill.project_id == access.project.pk
    versions = list(skill_selectors.skill_versions(skill=skill)[:VERSIONS_SHOWN])
    return render(
        request,
        "agentdocs/skill.html",
        {
            "access": access,
            "project": access.project,
            "skill": skill,
            "own": own,
            "may_edit": own and access.may_write(),
            "files": _files(skill),
            "warnings": skill_body_warnings(skill.files),
            "skill_html": render_markdown(split_frontmatter(skill.files.get(SKILL_FILE, ""))[2]),
            "versions": versions,
            "more_versions": skill.version > len(versions),
        },
    )


def _edit_page(
    request: HttpRequest,
    access: ProjectAccess,
    skill: Skill,
    form: SkillEditForm,
    *,
    refusal: AgentdocsError | None = None,
) -> HttpResponse:
    body = form["body"].value() or ""
    return form_page(
        request,
        "agentdocs/skill_edit.html",
        {
            "access": access,
            "project": access.project,
            "skill": skill,
            "form": form,
            "measure": measure(body),
            "preview_html": render_markdown(body),
            "warnings": body_warnings(split_frontmatter(body)[2]),
            "review_path": skill_path(skill.name),
        },
        form=form,
        refusal=refusal,
    )


def _beside_the_editor(error: AgentdocsError) -> AgentdocsError:
    """A refusal naming `SKILL.md` (`files/SKILL.md#description`) shown at the editor."""
    if (error.field or "").startswith(f"files/{SKILL_FILE}"):
        where = error.field.partition("#")[2] if error.field else ""
        detail = f"{where}: {error.detail}" if where else error.detail
        return type(error)(detail, field="body", **error.extra)
    return error


@member_page
@require_http_methods(["GET", "POST"])
def skill_edit(request: HttpRequest, tenant: str, project: str, name: str) -> HttpResponse:
    access = permissions.project_access(request.user, tenant, project)
    skill = skill_selectors.own_skill_get(project=access.project, name=name)
    access.require_write()
    if request.method != "POST":
        form = SkillEditForm(
            initial={"body": skill.files.get(SKILL_FILE, ""), "base_version": skill.version}
        )
        return _edit_page(request, access, skill, form)
    form = SkillEditForm(request.POST)
    if not form.is_valid():
        return _edit_page(request, access, skill, form)
    files = {**skill.files, SKILL_FILE: form.cleaned_data["body"]}
    if form.cleaned_data["bypass_review"]:
        access.require_bypass_review()
    try:
        if form.cleaned_data["propose"]:
            # A protected skill (`review.required`): the save is a proposal for review,
            # as the document editor's "Propose a change".
            change = change_service.change_propose_skill(
                project=access.project,
                name=name,
                files=files,
                base_version=form.cleaned_data["base_version"],
                reason=form.cleaned_data["reason"],
                user=access.user,
            )
            messages.success(request, f"Proposed change #{change.pk} to {name} for review.")
            return redirect("change", tenant=tenant, project=project, change_id=change.pk)
        written = skill_review.skill_write_request(
            skill=skill,
            files=files,
            base_version=form.cleaned_data["base_version"],
            user=access.user,
            reason=form.cleaned_data["reason"],
            bypass_review=form.cleaned_data["bypass_review"],
        )
    except AgentdocsError as error:
        return _edit_page(request, access, skill, form, refusal=_beside_the_editor(error))
    version = written.skill.version
    if version == form.cleaned_data["base_version"]:
        messages.info(request, f"No changes: {name} is still version {version}.")
    else:
        messages.success(request, f"Saved {name} as version {version}.")
    return redirect("skill", tenant=tenant, project=project, name=name)


@member_page
def skill_diff(request: HttpRequest, tenant: str, project: str, name: str) -> HttpResponse:
    access = permissions.project_access(request.user, tenant, project)
    skill = skill_selectors.skill_get(project=access.project, name=name)
    new_version = version_param(request.GET, "to", skill.version)
    old_version = version_param(request.GET, "from", max(new_version - 1, 1))
    rows = skill_selectors.skill_versions_by_number(
        skill=skill, versions=(old_version, new_version)
    )
    for number in (old_version, new_version):
        if number not in rows:
            skill_selectors.skill_version(skill=skill, version=number)  # raises NotFound
    files = file_diffs(rows[old_version].files, rows[new_version].files)
    return render(
        request,
        "agentdocs/skill_diff.html",
        {
            "access": access,
            "project": access.project,
            "skill": skill,
            "old_version": old_version,
            "new_version": new_version,
            "old_label": f"Version {old_version}",
            "new_label": f"Version {new_version}",
            "files": files,
        },
    )
