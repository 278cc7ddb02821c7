"""Reads of change requests, scoped to the tenant or project the caller may read; and
what merging one would do now, its two diffs (a skill's: file by file) and its
conflicts, bounded for a page."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace

from django.db.models import Count, QuerySet

from agentdocs.core.diffs import (
    Diff,
    FileDiff,
    bundle_diffs,
    bundle_unified_diff,
    diff_texts,
    unified_diff,
)
from agentdocs.core.errors import InvalidInput, NotFound
from agentdocs.core.merge import ConflictData, MergeResult, three_way
from agentdocs.core.numbers import positive_int
from agentdocs.core.skill_merge import BundleMerge, merge_bundles
from agentdocs.models import ChangeRequest, ChangeState, Document, Project, Skill, Tenant
from agentdocs.models.changes import LIVE_STATES
from agentdocs.selectors import documents as document_selectors
from agentdocs.selectors import skills as skill_selectors

# What a change request shows of each of its two diffs, in the API and on its page:
# less than a document's diff page shows of its one, since the proposal comes with
# them; the whole diff is `change_whole_diff`, a download.
DIFF_MAX_CHANGED_LINES = 1_000
DIFF_MAX_SHOWN_BYTES = 48 * 1024
DIFF_AGAINST = ("base", "current")
# And of the conflicts with the current version, their lines together (the three
# sides of a rewrite of a 256 KiB document would be three times that).
CONFLICTS_MAX_SHOWN_BYTES = 48 * 1024


def validate_state(state: object, *, field: str = "state") -> str | None:
    """A `?state=` filter: one of the states, or empty for all."""
    if state in (None, ""):
        return None
    if state not in ChangeState.values:
        raise InvalidInput(f"`state` is one of {', '.join(ChangeState.values)}.", field=field)
    return str(state)


def _listed(changes: QuerySet[ChangeRequest], state: str | None) -> QuerySet[ChangeRequest]:
    if state is not None:
        changes = changes.filter(state=state)
    return (
        changes.select_related("tenant", "project", "proposer", "merged_by")
        .defer("body", "files")
        .order_by("-id")
    )


def change_list(*, project: Project, state: str | None = None) -> QuerySet[ChangeRequest]:
    return _listed(ChangeRequest.objects.filter(project=project), state)


def change_list_for_tenant(*, tenant: Tenant, state: str | None = None) -> QuerySet[ChangeRequest]:
    return _listed(ChangeRequest.objects.filter(tenant=tenant), state)


def open_count(*, tenant: Tenant) -> int:
    """How many of the tenant's change requests wait for a review or a merge."""
    return ChangeRequest.objects.filter(tenant=tenant, state__in=LIVE_STATES).count()


def state_counts(*, tenant: Tenant) -> dict[str, int]:
    """How many of the tenant's change requests are in each state, in one query."""
    counts = dict.fromkeys(ChangeState.values, 0)
    rows = (
        ChangeRequest.objects.filter(tenant=tenant)
        .order_by()
        .values_list("state")
        .annotate(count=Count("id"))
    )
    counts.update({state: count for state, count in rows})
    return counts


def change_get(*, project: Project, change_id: object) -> ChangeRequest:
    """The project's change request ``change_id``; NotFound for any other id."""
    number = change_id if isinstance(change_id, int) else positive_int(str(change_id))
    change = (
        ChangeRequest.objects.filter(project=project, pk=number)
        .select_related("tenant", "project", "proposer", "merged_by")
        .first()
        if number
        else None
    )
    if change is None:
        raise NotFound(f"No change request #{change_id} in this project.", field="change_id")
    return change


@dataclass(frozen=True)
class MergePreview:
    """What merging would do now: the document as it is, and the three-way result; of a
    skill's change request, the skill as it is, its base version's files and the
    file-by-file merge (`bundle`; None once the skill is gone)."""

    document: Document | None
    base_body: str
    result: MergeResult | None
    skill: Skill | None = None
    base_files: dict[str, str] = field(default_factory=dict)
    bundle: BundleMerge | None = None

    @property
    def mergeable(self) -> bool:
        merge = self.bundle if self.bundle is not None else self.result
        return merge is not None and merge.clean

    @property
    def conflicts(self) -> list[ConflictData]:
        """The conflicts of the merge (a skill's each with its file's `path`)."""
        if self.bundle is not None:
            return copy.deepcopy(self.bundle.conflicts)
        return self.result.conflicts_data() if self.result is not None else []

    @property
    def current_files(self) -> dict[str, str] | None:
        """The skill's files now; None when it is gone (or was never made)."""
        skill = self.skill
        return None if skill is None or skill.is_deleted else skill.files


def merge_preview(change: ChangeRequest) -> MergePreview:
    if change.is_skill:
        return _skill_preview(change)
    document = (
        Document.objects.filter(project_id=change.project_id, path=change.path)
        .select_related("updated_by")
        .first()
    )
    if document is None:
        return MergePreview(document=None, base_body="", result=None)
    base = document_selectors.document_version(document=document, version=change.base_version)
    if document.is_deleted:
        return MergePreview(document=document, base_body=base.body, result=None)
    return MergePreview(
        document=document,
        base_body=base.body,
        result=three_way(base.body, document.body, change.body),
    )


def _skill_preview(change: ChangeRequest) -> MergePreview:
    """A skill's change request merged now: onto the skill's files, or (proposing a new
    skill) onto none; no merge once a skill it changes is gone."""
    skill = (
        Skill.objects.filter(project_id=change.project_id, name=change.skill)
        .select_related("updated_by")
        .first()
    )
    base: dict[str, str] = {}
    if skill is not None and change.base_version:
        base = skill_selectors.skill_version(skill=skill, version=change.base_version).files
    preview = MergePreview(document=None, base_body="", result=None, skill=skill, base_files=base)
    current = preview.current_files
    if current is None and change.base_version:
        return preview
    bundle = merge_bundles(base, current or {}, change.files or {})
    return replace(preview, bundle=bundle)


def change_diffs(change: ChangeRequest, preview: MergePreview) -> tuple[Diff, Diff | None]:
    """The proposal against its base, and against the current version (None when the
    document is gone), each bounded (`DIFF_MAX_CHANGED_LINES`, `DIFF_MAX_SHOWN_BYTES`)."""
    diffs = [
        diff_texts(
            old,
            change.body,
            old_label=old_label,
            new_label=new_label,
            max_changed_lines=DIFF_MAX_CHANGED_LINES,
            max_bytes=DIFF_MAX_SHOWN_BYTES,
        )
        for old, old_label, new_label in _diff_sides(change, preview)
    ]
    return diffs[0], diffs[1] if len(diffs) > 1 else None


def _diff_sides(change: ChangeRequest, preview: MergePreview) -> list[tuple[str, str, str]]:
    """(old text, old label, new label) of the diff against the base, and against the
    current version when the document is there."""
    new_label = f"{change.path} (change #{change.pk})"
    sides = [(preview.base_body, f"{change.path}@{change.base_version}", new_label)]
    document = preview.document
    if document is not None and not document.is_deleted:
        sides.append((document.body, f"{change.path}@{document.version}", new_label))
    return sides


def change_file_diffs(
    change: ChangeRequest, preview: MergePreview
) -> tuple[list[FileDiff], list[FileDiff] | None]:
    """A skill's change request: its files against its base version's, and against the
    skill's current files (None when the skill is gone), each file's diff bounded as a
    document's change is."""
    return tuple(  # type: ignore[return-value]
        bundle_diffs(
            old,
            change.files or {},
            old_label=old_label,
            new_label=new_label,
            max_changed_lines=DIFF_MAX_CHANGED_LINES,
            max_bytes=DIFF_MAX_SHOWN_BYTES,
        )
        if old is not None
        else None
        for old, old_label, new_label in _file_sides(change, preview)
    )


def _file_sides(
    change: ChangeRequest, preview: MergePreview
) -> list[tuple[dict[str, str] | None, str, str]]:
    new_label = f"{change.skill} (change #{change.pk})"
    skill = preview.skill
    current = preview.current_files
    now = f"{change.skill}@{skill.version}" if skill is not None else change.skill
    return [
        (preview.base_files, f"{change.skill}@{change.base_version}", new_label),
        (current, now, new_label),
    ]


def change_conflicts(preview: MergePreview) -> tuple[list[ConflictData], bool]:
    """The conflicts a merge would meet now, in order, bounded: their lines hold at
    most `CONFLICTS_MAX_SHOWN_BYTES` in all (a region cut there keeps its `start`, and
    no conflict follows it). The second value is True when some were left out."""
    left = CONFLICTS_MAX_SHOWN_BYTES
    shown: list[ConflictData] = []
    for conflict in preview.conflicts:
        cut = False
        for side in ("base", "theirs", "yours"):
            region = conflict[side]
            kept: list[str] = []
            for line in region["lines"]:
                size = len(line.encode("utf-8", "surrogatepass")) + 1
                if size > left:
                    cut = True
                    break
                left -= size
                kept.append(line)
            region["lines"] = kept
        shown.append(conflict)
        if cut:
            return shown, True
    return shown, False


def change_whole_diff(change: ChangeRequest, preview: MergePreview, *, against: str) -> str:
    """The whole unified diff of the proposal against its base version (``against``
    "base") or the current one ("current"), unbounded, for a download. InvalidInput
    naming `against` for anything else; NotFound naming it when the document is gone."""
    if against not in DIFF_AGAINST:
        raise InvalidInput("`against` must be base or current.", field="against")
    if change.is_skill:
        old_files, old_label, new_label = _file_sides(change, preview)[DIFF_AGAINST.index(against)]
        if old_files is None:
            raise NotFound("The skill was deleted: there is no current version.", field="against")
        return bundle_unified_diff(
            old_files, change.files or {}, old_label=old_label, new_label=new_label
        )
    sides = _diff_sides(change, preview)
    if against == "current" and len(sides) < 2:
        raise NotFound("The document was deleted: there is no current version.", field="against")
    old, old_label, new_label = sides[DIFF_AGAINST.index(against)]
    return unified_diff(old, change.body, old_label=old_label, new_label=new_label)
