"""Change requests: propose a new body for a document, review it, merge it.

Any member may propose (a reader's agent token included), `_vance` too; the views
check who may review and merge (writers of the path: tenant admins for `_vance`)
before calling in here. What is checked here is everything else: the proposal
passes the same checks as a document write (path, size, hidden characters, which
the proposer may acknowledge as intended, and the secret scan), nobody
reviews their own change (409 `own_change`), a merged, rejected or withdrawn
request no longer changes (409 `change_closed`), and a merge needs the approvals
`review.approvals` asks for (409 `not_approved`), counting only those whose reviewer
still may review the change at the merge (`approvals`), and, under
`review.requireEvals`, eval results that find the proposal not worse than its base
beyond `review.maxRegression` (409 `evals_missing`, `evals_regressed`).

A merge is a three-way merge of (the text at the base version, the current text,
the proposed text), saved through the one write path (`services.documents`) with
the proposer as author, and the change request, its reviewers and its merger in
the history row. Overlapping edits answer 409 `merge_conflict` with the conflicts
and change nothing. The change request row is locked for the merge, and the
document row after it: of two approved requests merged at once, the second merges
onto the first's result, or answers `merge_conflict`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from agentdocs import permissions
from agentdocs.core import evals as eval_rules
from agentdocs.core.errors import (
    AlreadyExists,
    ChangeClosed,
    EvalsMissing,
    EvalsRegressed,
    Forbidden,
    InvalidInput,
    MergeConflict,
    NotApproved,
    NotFound,
    OwnChange,
    SkillMergeConflict,
)
from agentdocs.core.hidden_characters import find_hidden, has_hidden
from agentdocs.core.merge import three_way
from agentdocs.core.paths import validate_path
from agentdocs.core.skill_merge import merge_bundles
from agentdocs.core.skills import SKILL_FILE, skill_path, validate_skill_name
from agentdocs.core.stored_text import refuse_hidden_or_secret
from agentdocs.models import (
    BindingRecord,
    ChangeComment,
    ChangeRequest,
    ChangeState,
    ChangeType,
    Document,
    Project,
    Review,
    ReviewDecision,
    Skill,
)
from agentdocs.models.history import mark_change
from agentdocs.selectors import change_evals as evals_selectors
from agentdocs.selectors import documents as document_selectors
from agentdocs.selectors import policy as policy_selectors
from agentdocs.selectors import review as review_selectors
from agentdocs.selectors import skills as skill_selectors
from agentdocs.services import documents as document_service
from agentdocs.services import events
from agentdocs.services import labels as label_service
from agentdocs.services import skill_labels as skill_label_service
from agentdocs.services import skills as skill_service
from agentdocs.validation import documents as document_checks
from agentdocs.validation.memory_block import validate_process
from agentdocs.validation.skills import skill_check

MAX_REASON = 500
MAX_COMMENT = 10_000


def _text(value: object, *, field: str, limit: int, required: bool = False) -> str:
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise InvalidInput(f"`{field}` must be a string.", field=field)
    value = value.strip()
    if required and not value:
        raise InvalidInput(f"`{field}` must not be empty.", field=field)
    if len(value) > limit:
        raise InvalidInput(f"`{field}` is longer than {limit} characters.", field=field)
    if "\x00" in value:
        raise InvalidInput(f"`{field}` contains a NUL character.", field=field)
    refuse_hidden_or_secret(value, field=field, what=f"`{field}`")
    return value


def _emit(change: ChangeRequest, *, action: str, actor: User, reason: str = "", **data) -> None:
    events.emit(
        type=f"change.{action}",
        tenant=change.tenant,
        project=change.project,
        actor=actor,
        target=str(change.pk),
        reason=reason,
        version=change.merged_version,
        data={
            "id": change.pk,
            "path": change.path,
            "state": change.state,
            "proposer": change.proposer.get_username() if change.proposer else None,
            "base_version": change.base_version,
            "label": change.label or None,
            "skill": change.skill or None,
            **data,
        },
    )


def _set_state(change: ChangeRequest, state: str, *, user: User, reason: str) -> None:
    change.state = state
    change.updated_at = timezone.now()
    mark_change(change, user=user, reason=reason, change_type=ChangeType.UPDATED)
    change.save()


def _require_live(change: ChangeRequest) -> None:
    if not change.is_live:
        raise ChangeClosed(
            f"Change #{change.pk} is {change.state}; a {change.state} change request "
            "no longer changes.",
            field=None,
            state=change.state,
        )


def _locked(change: ChangeRequest) -> ChangeRequest:
    return (
        ChangeRequest.objects.select_for_update(of=("self",))
        .select_related("tenant", "project", "proposer")
        .get(pk=change.pk)
    )


def _latest_record(project: Project, process: str) -> BindingRecord | None:
    """The process's latest binding record in ``project``: the session a proposal names."""
    return (
        BindingRecord.objects.filter(project=project, process=process)
        .order_by("-created_at", "-id")
        .first()
    )


def _base(read: Callable[[], Any], version: int, *, holds: str) -> Any:
    """The history row of the version a proposal is based on, as ``read`` reads it:
    NotFound or InvalidInput (a deletion) naming `base_version`."""
    try:
        base = read()
    except NotFound as error:
        raise NotFound(error.detail, field="base_version") from None
    if base.is_deleted:
        raise InvalidInput(
            f"Version {version} is a deletion; base the change on a version with {holds}.",
            field="base_version",
        )
    return base


def change_propose(
    *,
    project: Project,
    path: str,
    body: object,
    base_version: object,
    reason: object,
    user: User,
    acknowledge_hidden: object = "",
    process: str = "",
) -> ChangeRequest:
    """Propose ``body`` for the document at ``path``, written against ``base_version``.

    ``process`` names the agent process (session) the proposal came from, checked as a
    render checks it; the change keeps it with that process's latest binding record in
    the project."""
    validate_path(path)
    if process:
        process = validate_process(process)
    reason = _text(reason, field="reason", limit=MAX_REASON)
    checked = document_checks.validate_proposed_body(
        body,
        acknowledge_hidden=acknowledge_hidden,
        reason=reason,
        overridable=policy_selectors.overrides(lambda: project.tenant_id),
    )
    body = checked.text
    if not isinstance(base_version, int) or isinstance(base_version, bool) or base_version < 1:
        raise InvalidInput("`base_version` must be a positive integer.", field="base_version")
    document = Document.objects.filter(project=project, path=path).select_related("project").first()
    if document is None or document.is_deleted:
        raise NotFound(
            f"No document at {path!r} in this project; a change request changes one "
            "(restore a deleted one first).",
            field="path",
        )
    base = _base(
        lambda: document_selectors.document_version(document=document, version=base_version),
        base_version,
        holds="text",
    )
    if base.body == body:
        raise InvalidInput(
            f"The body is the text of version {base_version}: it proposes no change.",
            field="body",
        )
    change = ChangeRequest(
        tenant=project.tenant,
        project=project,
        path=path,
        body=body,
        base_version=base_version,
        reason=reason,
        proposer=user,
        hidden_acknowledgement=checked.hidden_acknowledgement,
        process=process,
        binding_record=_latest_record(project, process) if process else None,
    )
    return _open(change, user=user, reason=reason)


def _open(change: ChangeRequest, *, user: User, reason: str) -> ChangeRequest:
    """Save a new change request with its history row and its `change.opened` event."""
    with transaction.atomic():
        mark_change(change, user=user, reason=reason, change_type=ChangeType.CREATED)
        change.save()
        _emit(change, action="opened", actor=user, reason=reason)
    return change


def change_propose_label(
    *,
    document: Document | None = None,
    skill: Skill | None = None,
    label: str,
    version: int,
    reason: object,
    user: User,
    removal: bool = False,
) -> ChangeRequest:
    """Propose moving the label ``label`` of ``document`` (or of ``skill``) to
    ``version`` (checked by `services.label_review`): a change request whose body (and
    a skill's files) is that version's and whose merge moves the label instead of
    writing a version. With ``removal``, proposing to remove the label, which points at
    ``version``: merging it removes the label."""
    reason = _text(reason, field="reason", limit=MAX_REASON)
    change = ChangeRequest(
        base_version=version, reason=reason, proposer=user, label=label, label_removal=removal
    )
    if skill is not None:
        files = skill_selectors.skill_version(skill=skill, version=version).files
        _for_skill(change, skill.project, skill.name, files)
    else:
        assert document is not None
        change.tenant, change.project = document.project.tenant, document.project
        change.path = document.path
        change.body = document_selectors.document_version(document=document, version=version).body
    return _open(change, user=user, reason=reason)


def _for_skill(change: ChangeRequest, project: Project, name: str, files: dict[str, str]) -> None:
    change.tenant, change.project = project.tenant, project
    change.skill, change.path = name, skill_path(name)
    change.files, change.body = files, files.get(SKILL_FILE, "")


def change_propose_skill(
    *,
    project: Project,
    name: str,
    files: object,
    base_version: object,
    reason: object,
    user: User,
    process: str = "",
) -> ChangeRequest:
    """Propose ``files`` as the next version of the project's skill ``name``, written
    against ``base_version`` (0: a new skill). The files pass every check a skill write
    makes (`skill_check`: the specification, caps, secrets, hidden characters), each
    refusal naming its file; the base version is one with files (404, 400 naming
    `base_version`); the same files as the base propose nothing (400 naming `files`)."""
    validate_skill_name(name)
    if process:
        process = validate_process(process)
    reason = _text(reason, field="reason", limit=MAX_REASON)
    checked = skill_check(name=name, files=files)
    if not isinstance(base_version, int) or isinstance(base_version, bool) or base_version < 0:
        raise InvalidInput(
            "`base_version` must be a version number (0 for a new skill).", field="base_version"
        )
    skill = Skill.objects.filter(project=project, name=name).first()
    live = skill is not None and not skill.is_deleted
    if base_version == 0 and live:
        assert skill is not None
        raise AlreadyExists(
            f"The skill {name!r} exists (version {skill.version}): propose its next version "
            "based on the version you changed.",
            field="base_version",
            current_version=skill.version,
        )
    base_files: dict[str, str] = {}
    if base_version:
        if skill is None or not live:
            raise NotFound(
                f"No skill {name!r} in this project; a change request changes one (restore "
                "a deleted one first, or propose a new one with base version 0).",
                field="name",
            )
        base_files = _base(
            lambda: skill_selectors.skill_version(skill=skill, version=base_version),
            base_version,
            holds="files",
        ).files
    if base_files == checked.files:
        raise InvalidInput(
            f"The files are those of version {base_version}: they propose no change.",
            field="files",
        )
    change = ChangeRequest(
        base_version=base_version,
        reason=reason,
        proposer=user,
        process=process,
        binding_record=_latest_record(project, process) if process else None,
    )
    _for_skill(change, project, name, checked.files)
    return _open(change, user=user, reason=reason)


def change_review(
    *, change: ChangeRequest, user: User, decision: object, comment: object = ""
) -> Review:
    """Record a review: a rejection closes the request; enough approvals approve it.

    The caller has checked that ``user`` may review the path (a writer of it)."""
    if decision not in ReviewDecision.values:
        raise InvalidInput("`decision` is `approve` or `reject`.", field="decision")
    comment = _text(comment, field="comment", limit=MAX_COMMENT)
    with transaction.atomic():
        change = _locked(change)
        _require_live(change)
        if change.proposer_id == user.pk:
            raise OwnChange(
                f"You proposed change #{change.pk}: someone else reviews it.", field=None
            )
        review = Review(
            change_request=change, reviewer=user, decision=str(decision), comment=comment
        )
        # The decision is a history row in the tenant's chain, with its reviewer and why.
        mark_change(
            review, user=user, reason=comment or str(decision), change_type=ChangeType.CREATED
        )
        review.save()
        if decision == ReviewDecision.REJECT:
            _set_state(change, ChangeState.REJECTED, user=user, reason=comment or "rejected")
            _emit(change, action="rejected", actor=user, reason=comment)
            return review
        if change.state == ChangeState.OPEN:
            names = permissions.approvers(change)
            needed = review_selectors.review_policy(project=change.project).approvals
            if len(names) >= needed:
                _set_state(change, ChangeState.APPROVED, user=user, reason=comment or "approved")
                _emit(change, action="approved", actor=user, reason=comment, approved_by=names)
        return review


def _merge_reason(change: ChangeRequest, *, names: list[str], user: User) -> str:
    note = (
        f"change #{change.pk}, approved by {', '.join(names) or 'nobody'}, "
        f"merged by {user.get_username()}"
    )
    room = MAX_REASON - len(note) - 3
    reason = change.reason
    if len(reason) > room:
        cut = reason[: room - 1]
        # A cut inside an emoji sequence (a joiner, a flag's tags) would leave a hidden
        # character the history reason's check refuses: cut before it.
        found = find_hidden(cut + "…", limit=1)
        reason = cut[: found[0].offset] + "…" if found else cut + "…"
    return f"{reason} ({note})" if reason else note


def _require_evals(change: ChangeRequest, policy: review_selectors.ReviewPolicy) -> None:
    """`review.requireEvals`: 409 until the change's latest evals find the proposed text
    not worse than the base beyond `review.maxRegression`."""
    if not policy.require_evals:
        return
    runs = evals_selectors.change_evals(change)
    gate = evals_selectors.evals_gate(
        change, required=True, max_regression=policy.max_regression, runs=runs
    )
    if gate.satisfied:
        return
    error = EvalsMissing if gate.code == eval_rules.EVALS_MISSING else EvalsRegressed
    raise error(
        gate.why,
        field=None,
        regression=runs[-1].summary["regression"] if runs else None,
        max_regression=policy.max_regression,
    )


def change_merge(*, change: ChangeRequest, user: User) -> ChangeRequest:
    """Merge an approved change request onto the document's current version.

    The caller has checked that ``user`` may write the path."""
    with transaction.atomic():
        change = _locked(change)
        _require_live(change)
        names = permissions.approvers(change)
        policy = review_selectors.review_policy(project=change.project)
        needed = policy.approvals
        if len(names) < needed:
            raise NotApproved(
                f"Change #{change.pk} has {len(names)} of the {needed} approval"
                f"{'' if needed == 1 else 's'} it needs to be merged.",
                field=None,
                approvals=len(names),
                approvals_required=needed,
            )
        _require_evals(change, policy)
        if change.is_skill:
            return _merge_skill(change, names=names, user=user)
        document = (
            Document.objects.select_for_update(of=("self",))
            .select_related("project")
            .filter(project_id=change.project_id, path=change.path)
            .first()
        )
        if document is None or document.is_deleted:
            raise NotFound(
                f"{change.path} was deleted since the proposal; restore it to merge.",
                field="path",
            )
        if change.label:
            return _merge_label(change, document=document, names=names, user=user)
        base = document_selectors.document_version(document=document, version=change.base_version)
        result = three_way(base.body, document.body, change.body)
        if not result.clean:
            raise MergeConflict(
                result=result,
                base_version=change.base_version,
                current_version=document.version,
                detail=f"Change #{change.pk} and version {document.version} (saved since "
                f"version {change.base_version}) change the same lines; nothing was merged. "
                "Propose the change again against the current version.",
            )
        saved = document_service.document_write(
            document=document,
            body=result.text,
            base_version=document.version,
            user=change.proposer or user,
            reason=_merge_reason(change, names=names, user=user),
            # The proposer's acknowledgement, while the merged text still holds some.
            acknowledge_hidden=change.hidden_acknowledgement if has_hidden(result.text) else "",
            change_request_id=change.pk,
        ).document
        change.merged_version = saved.version
        return _merged(change, names=names, user=user, done=f"merged as v{saved.version}")


def _merge_label(
    change: ChangeRequest,
    *,
    document: Document | None = None,
    skill: Skill | None = None,
    names: list[str],
    user: User,
) -> ChangeRequest:
    """Merging a label move: the label (of ``document`` or ``skill``) moves to the
    proposed version, with the proposer as who moved it; merging a removal removes the
    label. No version is written."""
    reason = _merge_reason(change, names=names, user=user)
    author = change.proposer or user
    if change.label_removal:
        if skill is not None:
            skill_label_service.skill_label_remove(
                skill=skill, name=change.label, user=author, reason=reason
            )
        else:
            assert document is not None
            label_service.label_remove(
                document=document, name=change.label, user=author, reason=reason
            )
        change.merged_version = None
        done = f"removed {change.label}"
    else:
        if skill is not None:
            skill_label_service.skill_label_move(
                skill=skill,
                name=change.label,
                version=change.base_version,
                user=author,
                reason=reason,
            )
        else:
            assert document is not None
            label_service.label_move(
                document=document,
                name=change.label,
                version=change.base_version,
                user=author,
                reason=reason,
            )
        change.merged_version = change.base_version
        done = f"moved {change.label} to v{change.base_version}"
    return _merged(change, names=names, user=user, done=done)


def _merged(change: ChangeRequest, *, names: list[str], user: User, done: str) -> ChangeRequest:
    change.merged_by = user
    _set_state(change, ChangeState.MERGED, user=user, reason=done)
    _emit(change, action="merged", actor=user, reason=change.reason, approved_by=names)
    return change


def _merge_skill(change: ChangeRequest, *, names: list[str], user: User) -> ChangeRequest:
    """Merging a skill's change request: its files merged onto the skill's current
    version, three-way and file by file (`core.skill_merge`), and saved through the
    skills' one write path with the proposer as author (a new skill, for base version
    0, is created); a label's change moves or removes the skill's label. Conflicts
    answer 409 `merge_conflict`, each naming its file, and change nothing."""
    skill = (
        Skill.objects.select_for_update(of=("self",))
        .select_related("project__tenant")
        .filter(project_id=change.project_id, name=change.skill)
        .first()
    )
    gone = skill is None or skill.is_deleted
    if gone and (change.label or change.base_version):
        raise NotFound(
            f"The skill {change.skill!r} was deleted since the proposal; restore it to merge.",
            field="name",
        )
    if change.label:
        return _merge_label(change, skill=skill, names=names, user=user)
    files = change.files or {}
    author = change.proposer or user
    reason = _merge_reason(change, names=names, user=user)
    if gone:
        saved = skill_service.skill_create(
            project=change.project, name=change.skill, files=files, user=author, reason=reason
        ).skill
    else:
        assert skill is not None
        base = {}
        if change.base_version:
            base = skill_selectors.skill_version(skill=skill, version=change.base_version).files
        made = merge_bundles(base, skill.files, files)
        if not made.clean:
            raise SkillMergeConflict(
                conflicts=made.conflicts,
                base_version=change.base_version,
                current_version=skill.version,
                detail=f"Change #{change.pk} and version {skill.version} (saved since version "
                f"{change.base_version}) change the same lines of {{files}}; nothing was "
                "merged. Propose the change again against the current version.",
            )
        saved = skill_service.skill_write(
            skill=skill,
            files=made.files,
            base_version=skill.version,
            user=author,
            reason=reason,
        ).skill
    change.merged_version = saved.version
    return _merged(change, names=names, user=user, done=f"merged as v{saved.version}")


def change_withdraw(*, change: ChangeRequest, user: User, reason: object = "") -> ChangeRequest:
    """The proposer takes the request back."""
    reason = _text(reason, field="reason", limit=MAX_REASON)
    with transaction.atomic():
        change = _locked(change)
        if change.proposer_id != user.pk:
            raise Forbidden("Only the proposer withdraws a change request.", field=None)
        _require_live(change)
        _set_state(change, ChangeState.WITHDRAWN, user=user, reason=reason or "withdrawn")
        _emit(change, action="withdrawn", actor=user, reason=reason)
        return change


def change_comment(*, change: ChangeRequest, user: User, body: object) -> ChangeComment:
    body = _text(body, field="body", limit=MAX_COMMENT, required=True)
    with transaction.atomic():
        change = _locked(change)
        _require_live(change)
        return ChangeComment.objects.create(change_request=change, author=user, body=body)
