"""A skill read by a process, recorded: a binding record of that process with `skills`.

A record is signed and never changed, so each read is a record of its own (as an MCP
session's start is): the process's records together answer which procedures the run
followed, and `binding_reconstruct` restores each skill's files from its history.
"""

from __future__ import annotations

from django.contrib.auth.models import User

from agentdocs.core.skill_reads import bound_skill
from agentdocs.models import BindingRecord, Project, Skill, Tenant
from agentdocs.services import bindings as binding_service

# A skill read binds the skill, not a manifest of files.
NO_SOURCES: dict[str, list[object]] = {"context": [], "local": []}


def skill_read_record(
    *,
    tenant: Tenant,
    project: Project,
    user: User,
    process: str,
    skill: Skill,
    label: str | None = None,
) -> BindingRecord:
    """Record that ``process`` (checked by its face) read ``skill`` at its current
    version, by ``label`` when its client reads by one."""
    entry = bound_skill(
        skill_id=skill.pk,
        project=skill.project.slug,
        name=skill.name,
        version=skill.version,
        label=label,
        sha256=skill.sha256,
        files=skill.files,
    )
    result = binding_service.binding_create(
        tenant=tenant,
        project=project,
        user=user,
        process=process,
        manifest=NO_SOURCES,
        skills=[entry],
    )
    return result.record
