"""Import: a repository's agent files (AGENTS.md, CLAUDE.md, Cursor rules, ...) become
documents of a project, and its skill folders skills (`services.skill_imports`).

`agentdocs.selectors.imports` makes the plan (`agentdocs.core.agent_files` decides
which file becomes which document and with what text) and checks it: the
hidden-character and secret checks, the check of the target's name. A refused file
fails the whole import and nothing is written. Unless it is a dry run, this module then
writes the plan through the one write path in one transaction: versions, history with
the reason "imported from <source>". A file agentdocs generated (it has a provenance
line) is not imported as a document: `services.import_round_trip` sends its edits back
to their documents as change requests.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict

from django.contrib.auth.models import User
from django.db import transaction

from agentdocs.core import agent_files, export_reading
from agentdocs.core.agent_files import SourceFile
from agentdocs.core.errors import HiddenCharacters, InvalidInput, SecretDetected
from agentdocs.models import Project
from agentdocs.selectors.import_round_trip import generated_files, round_trip_check, round_trip_plan
from agentdocs.selectors.imports import (
    ImportStep,
    PlanEntry,
    import_check,
    import_plan,
    round_trip_entry,
)
from agentdocs.selectors.skill_imports import skill_file_indexes, skill_import_plan
from agentdocs.services import documents as document_service
from agentdocs.services import import_round_trip, skill_imports


class ImportResult(TypedDict):
    plan: list[PlanEntry]
    applied: bool


def _reason(reason: str, source: str) -> str:
    imported = f"imported from {source}"
    return f"{reason}; {imported}" if reason else imported


def _apply(step: ImportStep, *, project: Project, user: User, reason: str) -> None:
    mapped = step.mapped
    if step.action not in ("create", "update") or mapped.target is None:
        return
    try:
        if step.action == "create":
            document_service.document_create(
                project=project,
                path=mapped.target,
                body=mapped.text,
                user=user,
                reason=_reason(reason, mapped.source),
            )
        elif step.action == "update":
            assert step.current is not None
            document_service.document_write(
                document=step.current,
                body=mapped.text,
                base_version=step.current.version,
                user=user,
                reason=_reason(reason, mapped.source),
            )
    except (SecretDetected, HiddenCharacters, InvalidInput) as refusal:
        if refusal.field != "body":
            raise
        raise type(refusal)(
            f"{mapped.source}: {refusal.detail} Nothing was imported.",
            field=f"files.{step.index}.content",
            **refusal.extra,
        ) from None


def project_import(
    *,
    project: Project,
    user: User,
    files: Sequence[SourceFile],
    dry_run: bool,
    reason: str = "",
    adopt: bool = False,
) -> ImportResult:
    """Plan the import of ``files`` into ``project`` and, unless ``dry_run``, apply it.

    A file agentdocs generated goes round trip (its edits proposed to the documents it
    came from); with ``adopt`` it is imported like a hand-written file instead, without
    its provenance line (of a main file, its agent notes): how a project starts from
    another project's rules.

    The plan has one entry per file, in the order given. Every text to store passes
    the write path's checks first (a dry run too, so it tells whether the import
    would go through); applying then writes all or nothing in one transaction, each
    update based on the version the plan read (a document changed meanwhile is a
    version conflict, and nothing is written).
    """
    skill_files = skill_file_indexes(files)
    generated = {
        index: exported
        for index, exported in generated_files(files).items()
        if index not in skill_files
    }
    adopted: dict[int, str] = {}
    nothing: list[tuple[int, PlanEntry]] = []  # adopted files that hold no document
    if adopt:
        files = list(files)
        for index, exported in generated.items():
            per_folder = agent_files.source_kind(files[index].path) == "nested"
            taken = export_reading.adopt(exported, per_folder=per_folder)
            adopted[index] = taken.note
            if taken.content is None:
                nothing.append((index, PlanEntry(files[index].path, None, "skipped", taken.note)))
            else:
                files[index] = SourceFile(path=files[index].path, content=taken.content)
        generated = {}
    excluded = {*generated, *skill_files, *(index for index, _entry in nothing)}
    contents = [source.content for source in files]
    with transaction.atomic():
        steps = import_plan(project=project, files=files, generated=excluded, adopted=adopted)
        round_trip = round_trip_plan(project=project, files=files, generated=generated)
        import_check(steps, contents=contents)
        round_trip_check(round_trip, reason=reason)
        skills = skill_import_plan(project=project, files=files)
        if not dry_run:
            for step in steps:
                _apply(step, project=project, user=user, reason=reason)
            import_round_trip.round_trip_apply(round_trip, user=user, reason=reason)
            skill_imports.skill_import_apply(skills, project=project, user=user, reason=reason)
    plan = (
        [
            (
                step.index,
                PlanEntry(step.mapped.source, step.mapped.target, step.action, step.detail),
            )
            for step in steps
        ]
        + [(entry.index, round_trip_entry(entry)) for entry in round_trip]
        + [
            (step.index, PlanEntry(step.source, step.target, step.action, step.detail))
            for step in skills
        ]
        + nothing
    )
    return ImportResult(
        plan=[entry for _index, entry in sorted(plan, key=lambda pair: pair[0])],
        applied=not dry_run,
    )
