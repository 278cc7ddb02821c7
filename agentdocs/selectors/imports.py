"""Import, the plan: what importing a repository's agent files would do to each, a
read that checks every text it would store (so a dry run answers with it and a refused
file fails the whole import before anything is written).

`agentdocs.core.agent_files` decides which file becomes which document and with what
text; this compares that with the project's documents. The plan's other parts are the
round trip's (`selectors.import_round_trip`) and the skills' (`selectors.skill_imports`);
`services.imports` writes them all, in one transaction.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from agentdocs.core import agent_files
from agentdocs.core.agent_files import PROVENANCE_STRIPPED, Action, MappedFile, SourceFile
from agentdocs.core.errors import HiddenCharacters, InvalidInput, SecretDetected
from agentdocs.core.hidden_characters import LISTED_IN_REFUSAL, find_hidden
from agentdocs.core.hidden_characters import as_data as hidden_as_data
from agentdocs.core.paths import validate_new_path
from agentdocs.core.scope import same_rules
from agentdocs.models import ChangeRequest, Document, Project
from agentdocs.selectors.import_round_trip import RoundTripAction, RoundTripEntry
from agentdocs.validation import documents as document_checks


@dataclass(frozen=True)
class PlanEntry:
    """What the import does (or did) with one source file."""

    source: str
    target: str | None
    action: Action | RoundTripAction
    detail: str
    change_request: ChangeRequest | None = None  # opened (or already open) for a proposal


@dataclass(frozen=True)
class ImportStep:
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


def _check_target(step: ImportStep) -> None:
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


def _check_text(step: ImportStep, content: str) -> None:
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


def import_plan(
    *,
    project: Project,
    files: Sequence[SourceFile],
    generated: Collection[int] = (),
    adopted: Mapping[int, str] | None = None,
) -> list[ImportStep]:
    """The steps of the files that are not in ``generated`` (by position); ``adopted``
    says, by position, what an adopted file kept of the export it was."""
    kept = [index for index in range(len(files)) if index not in generated]
    mapped = agent_files.map_files([files[index] for index in kept])
    targets = [item.target for item in mapped if not item.skipped and item.target is not None]
    current = {
        document.path: document
        for document in Document.objects.filter(project=project, path__in=targets)
    }
    steps: list[ImportStep] = []
    for index, item in zip(kept, mapped, strict=True):
        notes = list(item.notes)
        if adopted and index in adopted:
            notes = [adopted[index], *(n for n in notes if n != PROVENANCE_STRIPPED)]
        if item.skipped or item.target is None:
            steps.append(ImportStep(index, item, None, "skipped", item.skip_reason))
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
        steps.append(ImportStep(index, item, document, action, "; ".join(notes)))
    return steps


def round_trip_entry(entry: RoundTripEntry) -> PlanEntry:
    """A round trip's plan line as an import's."""
    change = entry.proposal.change if entry.proposal is not None else None
    return PlanEntry(entry.source, entry.target, entry.action, entry.detail, change)


def import_check(steps: Sequence[ImportStep], *, contents: Sequence[str]) -> None:
    """Every step that creates or updates a document passes the write path's checks on
    its target's name and its text, naming the file (``contents``: each file as sent,
    for the line a refusal names)."""
    for step in steps:
        if step.action in ("create", "update"):
            _check_target(step)
            _check_text(step, contents[step.index])
