"""Import: a repository's agent files (AGENTS.md, CLAUDE.md, Cursor rules, ...) become
documents of a project, and its skill folders skills (`services.skill_imports`).

`agentdocs.core.agent_files` decides which file becomes which document and with
what text; this module compares that with the project's documents, gives the
plan, and (unless it is a dry run) writes through the one write path in one
transaction: versions, history with the reason "imported from <source>", the
hidden-character and secret checks, the check of the target's name. A refused file fails
the whole import and nothing is written. A file agentdocs generated (it has a provenance
line) is not imported as a document: `services.import_round_trip` sends its edits back
to their documents as change requests.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TypedDict

from django.contrib.auth.models import User
from django.db import transaction

from agentdocs.core import agent_files, export_reading
from agentdocs.core.agent_files import PROVENANCE_STRIPPED, Action, MappedFile, SourceFile
from agentdocs.core.errors import HiddenCharacters, InvalidInput, SecretDetected
from agentdocs.core.hidden_characters import LISTED_IN_REFUSAL, find_hidden
from agentdocs.core.hidden_characters import as_data as hidden_as_data
from agentdocs.core.paths import validate_new_path
from agentdocs.core.scope import same_rules
from agentdocs.models import ChangeRequest, Document, Project
from agentdocs.services import documents as document_service
from agentdocs.services import import_round_trip, skill_imports
from agentdocs.validation import documents as document_checks


@dataclass(frozen=True)
class PlanEntry:
    """What the import does (or did) with one source file."""

    source: str
    target: str | None
    action: Action | import_round_trip.RoundTripAction
    detail: str
    change_request: ChangeRequest | None = None  # opened (or already open) for a proposal


class ImportResult(TypedDict):
    plan: list[PlanEntry]
    applied: bool


@dataclass(frozen=True)
class _Step:
    index: int  # the source's position in the request, for error fields
    mapped: MappedFile
    current: Document | None  # the target as it is now, deleted ones included
    action: Action
    detail: str


def import_targets(*, paths: Sequence[str]) -> list[str]:
    """The documents importing ``paths`` may write: what the caller must be allowed
    to write before the import runs (a dry run too, so it never promises more)."""
    targets = {agent_files.target_for(path) for path in paths}
    return sorted(target for target in targets if target is not None)


def _reason(reason: str, source: str) -> str:
    imported = f"imported from {source}"
    return f"{reason}; {imported}" if reason else imported


def _source_line(content: str, text: str, line: int) -> int:
    """The line of ``content`` holding the ``line``-th line of the stored ``text``,
    so a refusal names the line the user sees in their file."""
    lines = text.splitlines()
    if not 1 <= line <= len(lines):
        return line
    wanted = lines[line - 1]
    for number, candidate in enumerate(content.splitlines(), start=1):
        if candidate == wanted:
            return number
    return line


def _check_target(step: _Step) -> None:
    """The document a file becomes needs a name nobody can misread: a Cursor rule
    named `\u202etxt.mdc` would become `.AGENTS/\u202etxt.md`. Refused naming the
    file's path, before anything is written."""
    field = f"files.{step.index}.path"
    try:
        validate_new_path(step.mapped.target, field=field)
    except InvalidInput as refusal:
        raise type(refusal)(
            f"{step.mapped.source} would become {step.mapped.target!r}: {refusal.detail} "
            "Nothing was imported.",
            field=field,
            source=step.mapped.source,
            **refusal.extra,
        ) from None


def _check_text(step: _Step, content: str) -> None:
    """The write path's checks on the text to store, before anything is written,
    naming the source file and its line."""
    field = f"files.{step.index}.content"
    try:
        document_checks.validate_body(step.mapped.text, field=field)
    except SecretDetected as refusal:
        raw_line = refusal.extra.get("line")
        line = _source_line(content, step.mapped.text, raw_line) if isinstance(raw_line, int) else 0
        raise SecretDetected(
            f"{step.mapped.source}, line {line}: {refusal.detail} Nothing was imported.",
            field=field,
            source=step.mapped.source,
            line=line,
        ) from None
    except HiddenCharacters as refusal:
        # The lines of the source file, which the user sees (the stored text may drop
        # a front matter).
        found = find_hidden(step.mapped.text, limit=LISTED_IN_REFUSAL)
        characters = [
            {**item, "line": _source_line(content, step.mapped.text, item["line"])}
            for item in hidden_as_data(found)
        ]
        raise HiddenCharacters(
            f"{step.mapped.source}: {refusal.detail} Nothing was imported.",
            field=field,
            source=step.mapped.source,
            line=characters[0]["line"],
            column=characters[0]["column"],
            count=refusal.extra["count"],
            characters=characters,
        ) from None
    except InvalidInput as refusal:
        raise InvalidInput(
            f"{step.mapped.source}: {refusal.detail} Nothing was imported.", field=field
        ) from None


def _plan(
    *,
    project: Project,
    files: Sequence[SourceFile],
    generated: Collection[int] = (),
    adopted: Mapping[int, str] | None = None,
) -> list[_Step]:
    """The steps of the files that are not in ``generated`` (by position); ``adopted``
    says, by position, what an adopted file kept of the export it was."""
    kept = [index for index in range(len(files)) if index not in generated]
    mapped = agent_files.map_files([files[index] for index in kept])
    targets = [item.target for item in mapped if not item.skipped and item.target is not None]
    current = {
        document.path: document
        for document in Document.objects.filter(project=project, path__in=targets)
    }
    steps: list[_Step] = []
    for index, item in zip(kept, mapped, strict=True):
        notes = list(item.notes)
        if adopted and index in adopted:
            notes = [adopted[index], *(n for n in notes if n != PROVENANCE_STRIPPED)]
        if item.skipped or item.target is None:
            steps.append(_Step(index, item, None, "skipped", item.skip_reason))
            continue
        document = current.get(item.target)
        action: Action
        if document is None:
            action = "create"
            notes.insert(0, "new document")
        elif document.is_deleted:
            action = "create"
            notes.insert(0, f"restores the document deleted at version {document.version}")
        elif document.body == item.text:
            action = "unchanged"
            notes.insert(0, f"same text as version {document.version}")
        elif same_rules(document.body, item.text):
            # What a person wrote stays as written when the file says the same.
            action = "unchanged"
            notes.insert(0, f"same rules as version {document.version}, written differently")
        else:
            action = "update"
            notes.insert(0, f"version {document.version} → {document.version + 1}")
        steps.append(_Step(index, item, document, action, "; ".join(notes)))
    return steps


def _apply(step: _Step, *, project: Project, user: User, reason: str) -> None:
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
    skill_files = skill_imports.skill_file_indexes(files)
    generated = {
        index: exported
        for index, exported in import_round_trip.generated_files(files).items()
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
        steps = _plan(project=project, files=files, generated=excluded, adopted=adopted)
        round_trip = import_round_trip.round_trip_plan(
            project=project, files=files, generated=generated
        )
        for step in steps:
            if step.action in ("create", "update"):
                _check_target(step)
                _check_text(step, contents[step.index])
        import_round_trip.round_trip_check(round_trip, reason=reason)
        skills = skill_imports.skill_import_plan(project=project, files=files)
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


def round_trip_entry(entry: import_round_trip.RoundTripEntry) -> PlanEntry:
    """A round trip's plan line as an import's."""
    change = entry.proposal.change if entry.proposal is not None else None
    return PlanEntry(entry.source, entry.target, entry.action, entry.detail, change)
