"""Round trips, the write: the change requests an import's round trip proposes
(`agentdocs.selectors.import_round_trip` makes the plan and checks it), each edit
once, naming the agent process the edits came from. `round_trip_propose` is the whole
of `POST .../propose/`; it writes nothing but change requests.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db import transaction

from agentdocs.core.agent_files import SourceFile
from agentdocs.core.errors import AgentdocsError, HiddenCharacters, InvalidInput, SecretDetected
from agentdocs.core.targets import skill_owner
from agentdocs.models import Project
from agentdocs.selectors.import_round_trip import (
    NOT_GENERATED,
    RoundTripEntry,
    change_reason,
    generated_files,
    proposals,
    refused,
    round_trip_check,
    round_trip_plan,
    skill_proposals,
    skill_round_trip_plan,
)
from agentdocs.services import changes as change_service
from agentdocs.validation.memory_block import validate_process


def round_trip_apply(
    entries: Sequence[RoundTripEntry], *, user: User, reason: str, process: str = ""
) -> None:
    """Open the change requests the plan proposes (each edit once), naming the agent
    ``process`` they came from when given."""
    for proposal in proposals(entries):
        if proposal.change is not None:
            continue
        try:
            proposal.change = change_service.change_propose(
                project=proposal.document.project,
                path=proposal.document.path,
                body=proposal.body,
                base_version=proposal.base_version,
                reason=change_reason(reason, proposal),
                user=user,
                process=process,
            )
        except (InvalidInput, SecretDetected, HiddenCharacters) as refusal:
            raise refused(refusal, proposal) from None
    for skill_proposal in skill_proposals(entries):
        if skill_proposal.change is not None:
            continue
        skill = skill_proposal.skill
        try:
            skill_proposal.change = change_service.change_propose_skill(
                project=skill.project,
                name=skill.name,
                files=skill_proposal.files,
                base_version=skill_proposal.base_version,
                reason=change_reason(reason, skill_proposal),
                user=user,
                process=process,
            )
        except AgentdocsError as refusal:
            raise refused(refusal, skill_proposal) from None


@dataclass(frozen=True)
class ProposeResult:
    entries: list[RoundTripEntry]
    applied: bool


def round_trip_propose(
    *,
    project: Project,
    user: User,
    files: Sequence[SourceFile],
    dry_run: bool,
    reason: str = "",
    process: str = "",
    base_hashes: dict[str, str] | None = None,
) -> ProposeResult:
    """Send the edits of generated ``files`` back to their documents as change requests,
    and the edits of exported skills' files (each with the digest it was synced at,
    ``base_hashes`` by path) back to their skills; any other file is skipped (this
    writes nothing but change requests). Any member may propose; the caller has checked
    membership. ``process``: the agent process the edits came from
    (`validate_process`), kept on each change request."""
    if process:
        process = validate_process(process)
    generated = generated_files(files)
    skill_files = [
        index
        for index, file in enumerate(files)
        if index not in generated and skill_owner(file.path) is not None
    ]
    with transaction.atomic():
        entries = round_trip_plan(project=project, files=files, generated=generated)
        entries += skill_round_trip_plan(
            project=project, files=files, indexes=skill_files, base_hashes=base_hashes or {}
        )
        round_trip_check(entries, reason=reason)
        if not dry_run:
            round_trip_apply(entries, user=user, reason=reason, process=process)
    skipped = [
        RoundTripEntry(index, file.path, None, "skipped", NOT_GENERATED)
        for index, file in enumerate(files)
        if index not in generated and index not in skill_files
    ]
    ordered = sorted([*entries, *skipped], key=lambda entry: entry.index)
    return ProposeResult(entries=ordered, applied=not dry_run)
