"""Change requests: propose, list, read (with diffs), review, merge, withdraw, comment.

Any member proposes and comments (a reader's agent token included: those need
only the `read` scope); writers of the path review and merge (tenant admins for
`_vance`); only the proposer withdraws. Outsiders get 404 for all of it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agentdocs import permissions
from agentdocs.api.access import request_project_access
from agentdocs.api.common import ListView
from agentdocs.api.document_history import DiffSerializer, FileDiffSerializer
from agentdocs.api.documents import AcknowledgeHiddenField
from agentdocs.api.memory_block import PlainTextRenderer
from agentdocs.api.renderers import JSONRenderer
from agentdocs.api.schema import CHANGE_MERGE_ERROR, errors, json_errors
from agentdocs.api.serializers import (
    FilesField,
    JSONIntegerField,
    ReasonField,
    StrictSerializer,
    TextField,
    optional_body,
    validated,
)
from agentdocs.core import evals as eval_rules
from agentdocs.core.diffs import Diff, FileDiff
from agentdocs.models import ChangeRequest, ChangeState, ReviewDecision, Scope
from agentdocs.permissions import ProjectAccess
from agentdocs.selectors import change_evals as evals_selectors
from agentdocs.selectors import changes as change_selectors
from agentdocs.selectors import review as review_selectors
from agentdocs.selectors.changes import MergePreview
from agentdocs.services import change_evals as evals_service
from agentdocs.services import changes as change_service


def change_page_path(change: ChangeRequest) -> str:
    """The change request's page."""
    return reverse("change", kwargs=_change_kwargs(change))


def change_api_path(change: ChangeRequest) -> str:
    return reverse("api-change", kwargs=_change_kwargs(change))


def _change_kwargs(change: ChangeRequest) -> dict[str, Any]:
    return {"tenant": change.tenant.slug, "project": change.project.slug, "change_id": change.pk}


class ChangeSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    state = serializers.ChoiceField(choices=ChangeState.choices)
    path = serializers.CharField()
    base_version = serializers.IntegerField()
    reason = serializers.CharField()
    proposer = serializers.CharField(source="proposer.username", allow_null=True)
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    merged_version = serializers.IntegerField(allow_null=True)
    merged_by = serializers.CharField(source="merged_by.username", allow_null=True)
    hidden_acknowledgement = serializers.CharField(
        help_text="`intended` when the proposer acknowledged hidden characters in the body"
    )
    label = serializers.SerializerMethodField(  # type: ignore[assignment]  # the wire name; shadows Field.label in the stubs
        help_text="A label move under review: the label merging moves to `base_version` "
        "(no version is written); null for a change of the body"
    )
    label_action = serializers.SerializerMethodField(
        help_text="With `label`: `move` (merging moves the label to `base_version`) or "
        "`remove` (merging removes the label, which pointed at `base_version` when "
        "proposed); null for a change of the body"
    )
    skill = serializers.SerializerMethodField(
        help_text="A skill's change request: the skill's name (`path` is then "
        "`skills/<name>`; merging writes its next version, or moves or removes its "
        "`label`); null for a document's"
    )
    process = serializers.SerializerMethodField(
        help_text="Proposed by an agent: the process (session) it came from, as its renders "
        "and binding records name it; null otherwise"
    )
    binding_record = serializers.IntegerField(
        source="binding_record_id",
        allow_null=True,
        help_text="With `process`: that process's latest binding record in the project when "
        "it proposed (`.../bindings/{id}`); null when it had none",
    )
    url = serializers.SerializerMethodField(help_text="The change request's page")
    api_url = serializers.SerializerMethodField(help_text="This resource")

    def get_skill(self, change: ChangeRequest) -> str | None:
        return change.skill or None

    def get_process(self, change: ChangeRequest) -> str | None:
        return change.process or None

    def get_label(self, change: ChangeRequest) -> str | None:
        return change.label or None

    def get_label_action(self, change: ChangeRequest) -> str | None:
        return change.label_action

    def _absolute(self, path: str) -> str:
        request = self.context.get("request")
        return request.build_absolute_uri(path) if request is not None else path

    def get_url(self, change: ChangeRequest) -> str:
        return self._absolute(change_page_path(change))

    def get_api_url(self, change: ChangeRequest) -> str:
        return self._absolute(change_api_path(change))


class ReviewSerializer(serializers.Serializer):
    reviewer = serializers.CharField(source="reviewer.username", allow_null=True)
    decision = serializers.ChoiceField(choices=ReviewDecision.choices)
    comment = serializers.CharField()
    at = serializers.DateTimeField()
    counts = serializers.BooleanField(
        help_text="An approval that counts now: false for a rejection, and for an approval "
        "whose reviewer no longer may review the change (demoted, removed or deleted)"
    )


class CommentSerializer(serializers.Serializer):
    author = serializers.CharField(source="author.username", allow_null=True)
    body = serializers.CharField()
    at = serializers.DateTimeField()


class ChangeDiffSerializer(DiffSerializer):
    class Meta:
        ref_name = "ChangeDiff"

    from_version = serializers.IntegerField(help_text="The version the proposal is compared with")
    truncated = serializers.BooleanField(
        help_text="The hunks and the text stop before the end: at most "
        f"{change_selectors.DIFF_MAX_CHANGED_LINES:,} changed lines and "
        f"{change_selectors.DIFF_MAX_SHOWN_BYTES // 1024} KiB of line text are shown; "
        "`whole_diff_url` has all of it"
    )
    whole_diff_url = serializers.CharField(
        help_text="The whole unified diff, unbounded, as text/plain"
    )


class ChangeFilesSerializer(serializers.Serializer):
    """A skill's change request compared with a version of the skill, file by file."""

    class Meta:
        ref_name = "ChangeFiles"

    from_version = serializers.IntegerField(
        allow_null=True,
        help_text="The version the proposal is compared with (null: a new skill, compared "
        "with no files)",
    )
    files = FileDiffSerializer(many=True, help_text="The files that differ, by path")
    whole_diff_url = serializers.CharField(
        help_text="The whole unified diff of every file, unbounded, as text/plain"
    )


OUTCOME_SCHEMA = {
    "oneOf": [{"type": "boolean"}, {"type": "number", "minimum": 0, "maximum": 1}],
    "description": "true or false (pass or fail), or a score from 0 to 1; a case's `base` "
    "and `proposed` are of one kind",
}


@extend_schema_field(OUTCOME_SCHEMA)
class OutcomeField(serializers.Field):
    """A case's outcome, as stored (checked by `agentdocs.core.evals` when attached)."""

    def to_representation(self, value: Any) -> Any:
        return value

    def to_internal_value(self, data: Any) -> Any:
        return data


class EvalCaseSerializer(serializers.Serializer):
    class Meta:
        ref_name = "EvalCase"

    name = serializers.CharField(help_text="The case's name, unique in the run")
    base = OutcomeField(help_text="With the text of the change's base version")
    proposed = OutcomeField(help_text="With the proposed text")


@extend_schema_field(
    {
        "type": "array",
        "minItems": 1,
        "maxItems": eval_rules.MAX_CASES,
        "items": {"$ref": "#/components/schemas/EvalCase"},
    }
)
class CasesField(serializers.Field):
    """The cases as sent; what makes them valid is `core.evals.parse_cases`, which names
    the first bad one (`cases[3].base`)."""

    def to_internal_value(self, data: Any) -> Any:
        return data

    def to_representation(self, value: Any) -> Any:
        return value


class EvalSummarySerializer(serializers.Serializer):
    class Meta:
        ref_name = "EvalSummary"

    cases = serializers.IntegerField()
    measure = serializers.ChoiceField(
        choices=[eval_rules.PASS_RATE, eval_rules.MEAN_SCORE],
        help_text="`pass_rate` when every case is pass/fail (a pass counts 1), else `mean_score`",
    )
    base = serializers.FloatField(help_text="The base text's pass rate or mean score")
    proposed = serializers.FloatField(help_text="The proposed text's")
    difference = serializers.FloatField(help_text="`proposed` less `base`")
    regression = serializers.FloatField(
        help_text="How much worse the proposed text did (0 when it did not)"
    )
    worse_cases = serializers.IntegerField()
    better_cases = serializers.IntegerField()


class EvalsRunSerializer(serializers.Serializer):
    class Meta:
        ref_name = "ChangeEvals"

    id = serializers.IntegerField()
    harness = serializers.CharField(help_text="What ran the cases")
    submitted_by = serializers.CharField(allow_null=True)
    submitted_at = serializers.DateTimeField()
    cases = EvalCaseSerializer(many=True)
    summary = EvalSummarySerializer()


class EvalsGateSerializer(serializers.Serializer):
    class Meta:
        ref_name = "EvalsGate"

    required = serializers.BooleanField(  # type: ignore[assignment]  # the wire name; shadows Field.required in the stubs
        help_text="`review.requireEvals` in force"
    )
    max_regression = serializers.FloatField(help_text="`review.maxRegression` in force")
    satisfied = serializers.BooleanField(
        help_text="Not required, or the latest evals are within `max_regression`"
    )
    why = serializers.CharField(help_text="Why not, when not satisfied")


class ChangeDetailSerializer(ChangeSerializer):
    class Meta:
        ref_name = "ChangeDetail"

    body = serializers.CharField(source="change.body")
    current_version = serializers.IntegerField(
        allow_null=True,
        help_text="The document's (or skill's) version now; null when it was deleted",
    )
    mergeable = serializers.BooleanField(
        help_text="Open or approved, and merges onto the current version without conflicts"
    )
    approvals = serializers.ListField(
        child=serializers.CharField(),
        help_text="Who approved, of the approvals that count: a reviewer who still may "
        "review the change (checked again at the merge)",
    )
    approvals_not_counting = serializers.ListField(
        child=serializers.CharField(),
        help_text="Who approved but no longer counts: demoted below the right to review the "
        "change, removed from the tenant, or deleted",
    )
    approvals_required = serializers.IntegerField(help_text="`review.approvals` in force")
    diff_against_base = ChangeDiffSerializer(
        allow_null=True, help_text="Null for a skill's change request (`files_against_base`)"
    )
    diff_against_current = ChangeDiffSerializer(allow_null=True)
    files_against_base = ChangeFilesSerializer(
        allow_null=True,
        help_text="A skill's change request: its files against the base version's, file by "
        "file; null for a document's",
    )
    files_against_current = ChangeFilesSerializer(
        allow_null=True,
        help_text="A skill's change request: its files against the skill's current ones; "
        "null for a document's, and once the skill is gone",
    )
    diff_truncated = serializers.BooleanField(
        help_text="Either diff stops before its end (see their `truncated` and `whole_diff_url`)"
    )
    conflicts = serializers.ListField(
        child=serializers.DictField(),
        help_text="Where the proposal and the current version overlap (as a merge's 409), "
        f"their lines {change_selectors.CONFLICTS_MAX_SHOWN_BYTES // 1024} KiB at most in all",
    )
    conflicts_truncated = serializers.BooleanField(
        help_text="`conflicts` stops before the end (the last one shown may be cut); "
        "`diff_against_current.whole_diff_url` has the whole diff"
    )
    reviews = ReviewSerializer(many=True)
    comments = CommentSerializer(many=True)
    evals = EvalsRunSerializer(
        many=True, help_text="Eval results attached, oldest first: the last one counts"
    )
    evals_gate = EvalsGateSerializer(
        help_text="What `review.requireEvals` makes of the latest evals (a merge is refused "
        "with 409 while it is not satisfied)"
    )

    def to_representation(self, instance: Any) -> Any:
        """``instance`` is `change_detail_data(change)`: the change's summary
        (`ChangeSerializer`) and each further field from that data."""
        data = dict(ChangeSerializer(instance["change"], context=self.context).data)
        for name, field in self.fields.items():
            if name not in data:
                value = field.get_attribute(instance)
                data[name] = None if value is None else field.to_representation(value)
        return data


def _whole_diff_url(change: ChangeRequest, *, against: str) -> str:
    """The API's whole diff of the change request (`change_whole_diff`)."""
    path = reverse(
        "api-change-diff",
        kwargs={
            "tenant": change.tenant.slug,
            "project": change.project.slug,
            "change_id": change.pk,
        },
    )
    return f"{path}?against={against}"


def _diff_data(
    diff: Diff | None, version: int | None, *, change: ChangeRequest, against: str
) -> dict[str, Any] | None:
    if diff is None or version is None:
        return None
    whole = _whole_diff_url(change, against=against)
    return {"from_version": version, **diff.as_dict(), "whole_diff_url": whole}


def _files_data(
    files: list[FileDiff] | None, version: int | None, *, change: ChangeRequest, against: str
) -> dict[str, Any] | None:
    if files is None:
        return None
    whole = _whole_diff_url(change, against=against)
    return {
        "from_version": version,
        "files": [file.as_dict() for file in files],
        "whole_diff_url": whole,
    }


def _diffs_data(change: ChangeRequest, preview: MergePreview) -> dict[str, Any]:
    """The change's diffs against its base and the current version: a document's text,
    or a skill's files one by one."""
    if change.is_skill:
        skill = preview.skill
        current = skill.version if preview.current_files is not None and skill else None
        base_files, current_files = change_selectors.change_file_diffs(change, preview)
        return {
            "current_version": current,
            "diff_against_base": None,
            "diff_against_current": None,
            "files_against_base": _files_data(
                base_files, change.base_version or None, change=change, against="base"
            ),
            "files_against_current": _files_data(
                current_files, current, change=change, against="current"
            ),
            "diff_truncated": any(
                file.diff.truncated for file in [*base_files, *(current_files or [])]
            ),
        }
    against_base, against_current = change_selectors.change_diffs(change, preview)
    document = preview.document
    current = None if document is None or document.is_deleted else document.version
    return {
        "current_version": current,
        "diff_against_base": _diff_data(
            against_base, change.base_version, change=change, against="base"
        ),
        "diff_against_current": _diff_data(
            against_current, current, change=change, against="current"
        ),
        "files_against_base": None,
        "files_against_current": None,
        "diff_truncated": against_base.truncated
        or (against_current is not None and against_current.truncated),
    }


def change_detail_data(change: ChangeRequest) -> dict[str, Any]:
    """Everything the change request's page and API show, as plain data."""
    preview = change_selectors.merge_preview(change)
    conflicts, conflicts_truncated = change_selectors.change_conflicts(preview)
    policy = review_selectors.review_policy(project=change.project)
    reviews = list(change.reviews.select_related("reviewer"))
    approvals = permissions.approvals(change, reviews=reviews, protected=policy.protected_labels)
    counting = {approval.reviewer for approval in approvals if approval.counts}
    runs = evals_selectors.change_evals(change)
    return {
        "change": change,
        "preview": preview,
        **_diffs_data(change, preview),
        "mergeable": change.is_live and preview.mergeable,
        "approvals": [approval.reviewer for approval in approvals if approval.counts],
        "approvals_not_counting": [
            approval.reviewer for approval in approvals if not approval.counts
        ],
        "approvals_required": policy.approvals,
        "conflicts": conflicts,
        "conflicts_truncated": conflicts_truncated,
        "reviews": [
            {
                "reviewer": review.reviewer,
                "decision": review.decision,
                "comment": review.comment,
                "at": review.at,
                "counts": review.decision == ReviewDecision.APPROVE
                and review.reviewer is not None
                and review.reviewer.get_username() in counting,
            }
            for review in reviews
        ],
        "comments": list(change.comments.select_related("author")),
        "evals": runs,
        "evals_gate": evals_selectors.evals_gate(
            change,
            required=policy.require_evals,
            max_regression=policy.max_regression,
            runs=runs,
        ),
    }


def _detail_response(request: Request, change: ChangeRequest, *, status_code: int = 200):
    """The change request in detail, through `ChangeDetailSerializer`."""
    data = change_detail_data(change)
    detail = ChangeDetailSerializer(data, context={"request": request}).data
    return Response(detail, status=status_code)


def _access(request: Request, tenant: str, project: str) -> ProjectAccess:
    return request_project_access(request, tenant, project)


def _change(request: Request, tenant: str, project: str, change_id: str):
    access = _access(request, tenant, project)
    return access, change_selectors.change_get(project=access.project, change_id=change_id)


class ChangeListCreate(ListView):
    required_scopes = {"POST": Scope.READ}

    class QuerySerializer(serializers.Serializer):
        state = serializers.CharField(
            required=False,
            default="",
            allow_blank=True,
            help_text="open, approved, merged, rejected or withdrawn; all when left out",
        )

        def validate_state(self, value: str) -> str | None:
            return change_selectors.validate_state(value)

    class InputSerializer(StrictSerializer):
        class Meta:
            ref_name = "ChangePropose"

        path = TextField(required=False, help_text="The document's path (with `body`)")
        body = TextField(required=False, help_text="The document's proposed text")
        skill = TextField(
            required=False,
            help_text="Instead of `path` and `body`: the name of the project's skill whose "
            "next version `files` proposes",
        )
        files = FilesField(
            required=False,
            help_text="With `skill`: every file of the proposed version, its path mapped to "
            "its text (the whole set: a file left out is removed)",
        )
        base_version = JSONIntegerField(
            help_text="The version the body (or the files) was written against; for a skill, "
            "0 proposes a new one"
        )
        reason = ReasonField()
        acknowledge_hidden = AcknowledgeHiddenField()
        process = TextField(
            required=False,
            default="",
            help_text="Proposed by an agent: its process id (as its renders name it); the "
            "change keeps it with that process's latest binding record",
        )

        def run_validation(self, data: Any = serializers.empty) -> Any:
            """A document's change (`path`, `body`) or a skill's (`skill`, `files`): which
            fields were given is read from ``data`` itself, since `validated` runs a shared
            instance that never sees it as `initial_data`."""
            checked = super().run_validation(data)
            given = set(data) if isinstance(data, Mapping) else set()
            return self.kind_fields(checked, given)

        @staticmethod
        def kind_fields(data: dict[str, Any], given: set[str]) -> dict[str, Any]:
            wanted, other = (
                (("skill", "files"), ("path", "body", "acknowledge_hidden"))
                if "skill" in given
                else (("path", "body"), ("files",))
            )
            for name in other:
                if name in given:
                    raise serializers.ValidationError(
                        {name: [f"`{name}` is not part of this change: {' and '.join(wanted)}."]}
                    )
            for name in wanted:
                if name not in data:
                    raise serializers.ValidationError({name: [f"`{name}` is required."]})
            return data

    OutputSerializer = ChangeSerializer

    def paginate(self, request: Request, queryset: Any) -> Response:
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(queryset, request, view=self)
        data = self.OutputSerializer(page, many=True, context={"request": request}).data
        return paginator.get_paginated_response(data)

    @extend_schema(
        tags=["changes"],
        summary="List a project's change requests",
        description="Newest first, paged; `?state=` keeps one state. Members read.",
        responses={200: OutputSerializer(many=True), **errors(400, 404)},
        parameters=[QuerySerializer],
    )
    def get(self, request: Request, tenant: str, project: str) -> Response:
        access = _access(request, tenant, project)
        state = validated(self.QuerySerializer, request.query_params)["state"]
        return self.paginate(
            request, change_selectors.change_list(project=access.project, state=state)
        )

    @extend_schema(
        tags=["changes"],
        summary="Propose a change",
        description="Proposes `body` for the document at `path`, written against "
        "`base_version`, or `files` as the next version of the project's `skill`, for "
        "writers of the project to review (tenant admins for `_vance`). A skill's files pass "
        "the checks of a skill write (422 naming the file: `files/<path>`). "
        "Any member may propose, with a token of any scope. 404 if there is no such "
        "document or version; 422 if the body looks like it holds a secret, or holds hidden "
        "characters (`hidden_characters`; see `acknowledge_hidden`).",
        request=InputSerializer,
        responses={201: ChangeSerializer, **errors(400, 404, 413, 422)},
    )
    def post(self, request: Request, tenant: str, project: str) -> Response:
        access = _access(request, tenant, project)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        if "skill" in data:
            data.pop("acknowledge_hidden", None)
            change = change_service.change_propose_skill(
                project=access.project, user=access.user, name=data.pop("skill"), **data
            )
        else:
            change = change_service.change_propose(project=access.project, user=access.user, **data)
        return Response(
            ChangeSerializer(change, context={"request": request}).data,
            status=status.HTTP_201_CREATED,
        )


class ChangeDetail(APIView):
    OutputSerializer = ChangeDetailSerializer

    @extend_schema(
        tags=["changes"],
        summary="Read a change request",
        description="The proposal with its diff against its base version and against the "
        "current version, whether it merges cleanly now (`mergeable`, else `conflicts`), "
        "its approvals, reviews and comments.",
        responses={200: OutputSerializer, **errors(404)},
    )
    def get(self, request: Request, tenant: str, project: str, change_id: str) -> Response:
        _, change = _change(request, tenant, project, change_id)
        return _detail_response(request, change)


class ChangeDiff(APIView):
    """The whole diff of a change request, which its representation shows bounded."""

    renderer_classes = [PlainTextRenderer, JSONRenderer]

    def finalize_response(self, request: Request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        if response.status_code >= 400:
            # Errors are the JSON error shape, whatever was accepted.
            response.accepted_renderer = JSONRenderer()
            response.accepted_media_type = JSONRenderer.media_type
        return response

    class QuerySerializer(serializers.Serializer):
        against = serializers.CharField(
            required=False,
            default="base",
            help_text="`base` (the version the proposal was written against, the default) "
            "or `current`",
        )

    @extend_schema(
        tags=["changes"],
        summary="The whole diff of a change request",
        description="The unified diff, unbounded, of the proposal against its base "
        "version (`?against=base`) or the current version (`?against=current`), as "
        "text/plain: the change request's `diff_against_*` show at most "
        f"{change_selectors.DIFF_MAX_CHANGED_LINES:,} changed lines. 400 naming `against` "
        "for another value; 404 for `current` once the document was deleted.",
        parameters=[QuerySerializer],
        responses={
            (200, "text/plain"): OpenApiResponse(OpenApiTypes.STR, description="The diff"),
            **json_errors(400, 404),
        },
    )
    def get(self, request: Request, tenant: str, project: str, change_id: str) -> Response:
        _, change = _change(request, tenant, project, change_id)
        against = validated(self.QuerySerializer, request.query_params)["against"]
        preview = change_selectors.merge_preview(change)
        text = change_selectors.change_whole_diff(change, preview, against=against)
        return Response(text, content_type="text/plain; charset=utf-8")


class ChangeReviewCreate(APIView):
    class InputSerializer(StrictSerializer):
        class Meta:
            ref_name = "ChangeReview"

        decision = serializers.ChoiceField(choices=ReviewDecision.choices)
        comment = TextField(required=False, default="")

    OutputSerializer = ChangeDetailSerializer

    @extend_schema(
        tags=["changes"],
        summary="Review a change request",
        description="`approve` or `reject`. Writers of the document's path (tenant admins "
        "for `_vance`; of a label's change request, whoever may move that label: 403 "
        "otherwise). A rejection closes the request; with the approvals `review.approvals` "
        "asks for (default 1) that count it is approved: an approval counts only while its "
        "reviewer still may review the change. 409 `own_change` for the proposer, "
        "`change_closed` once merged, rejected or withdrawn.",
        request=InputSerializer,
        responses={201: OutputSerializer, **errors(400, 404, 409)},
    )
    def post(self, request: Request, tenant: str, project: str, change_id: str) -> Response:
        access, change = _change(request, tenant, project, change_id)
        permissions.require_change_review(access, change)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        change_service.change_review(change=change, user=access.user, **serializer.validated_data)
        change.refresh_from_db()
        return _detail_response(request, change, status_code=status.HTTP_201_CREATED)


class ChangeMerge(APIView):
    OutputSerializer = ChangeDetailSerializer

    @extend_schema(
        tags=["changes"],
        summary="Merge a change request",
        description="Three-way merges the proposal (base version, current version, "
        "proposal) and saves the result as a new version with the proposer as author; the "
        "history row names the change request, its approvers and the merger. Writers of "
        "the path (tenant admins for `_vance`; of a label's change request, whoever may "
        "move that label), which moves or removes the label instead (`label_action`). 409 "
        "`not_approved` without enough approvals that count (an approval whose reviewer "
        "was since demoted, removed or deleted does not), `merge_conflict` (with "
        "`conflicts`) when the edits overlap (the request stays open), `change_closed` "
        "once closed, `too_many_labels` when a new label would pass the document's cap; "
        "under `review.requireEvals`, `evals_missing` until eval results are attached and "
        "`evals_regressed` while the latest find the proposed text worse than the base "
        "beyond `review.maxRegression` (with `regression` and `max_regression`).",
        request=None,
        responses={
            200: OutputSerializer,
            **errors(404, 409, 422, 423),
            409: OpenApiResponse(
                CHANGE_MERGE_ERROR,
                description="`merge_conflict` (with `conflicts`: base, theirs and yours of "
                "each overlap, and `current_version`), `not_approved`, `change_closed`, "
                "`too_many_labels` (with `limit`), `evals_missing` or `evals_regressed` "
                "(with `regression` and `max_regression`).",
            ),
        },
    )
    def post(self, request: Request, tenant: str, project: str, change_id: str) -> Response:
        access, change = _change(request, tenant, project, change_id)
        permissions.require_change_review(access, change)
        change = change_service.change_merge(change=change, user=access.user)
        return _detail_response(request, change)


class ChangeWithdraw(APIView):
    required_scopes = {"POST": Scope.READ}

    class InputSerializer(StrictSerializer):
        class Meta:
            ref_name = "ChangeWithdraw"

        reason = ReasonField()

    OutputSerializer = ChangeDetailSerializer

    @extend_schema(
        tags=["changes"],
        summary="Withdraw a change request",
        description="Its proposer takes it back (403 for anyone else); 409 `change_closed` "
        "once merged, rejected or withdrawn.",
        request=InputSerializer,
        responses={200: OutputSerializer, **errors(400, 404, 409)},
    )
    def post(self, request: Request, tenant: str, project: str, change_id: str) -> Response:
        access, change = _change(request, tenant, project, change_id)
        serializer = self.InputSerializer(data=optional_body(request.data))
        serializer.is_valid(raise_exception=True)
        change = change_service.change_withdraw(
            change=change, user=access.user, **serializer.validated_data
        )
        return _detail_response(request, change)


class ChangeCommentCreate(APIView):
    required_scopes = {"POST": Scope.READ}

    class InputSerializer(StrictSerializer):
        class Meta:
            ref_name = "ChangeComment"

        body = TextField()

    OutputSerializer = CommentSerializer

    @extend_schema(
        tags=["changes"],
        summary="Comment on a change request",
        description="Any member of the tenant; 409 `change_closed` once merged, rejected "
        "or withdrawn.",
        request=InputSerializer,
        responses={201: OutputSerializer, **errors(400, 404, 409)},
    )
    def post(self, request: Request, tenant: str, project: str, change_id: str) -> Response:
        access, change = _change(request, tenant, project, change_id)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        comment = change_service.change_comment(
            change=change, user=access.user, **serializer.validated_data
        )
        return Response(CommentSerializer(comment).data, status=status.HTTP_201_CREATED)


class ChangeEvalsCreate(APIView):
    required_scopes = {"POST": Scope.READ}

    class InputSerializer(StrictSerializer):
        class Meta:
            ref_name = "ChangeEvalsInput"

        harness = TextField(help_text="What ran the cases: its name and version, one line")
        cases = CasesField(
            help_text="Each case: `name`, and its outcome with the base version's text "
            "(`base`) and with the proposed text (`proposed`): both true/false, or both "
            "scores from 0 to 1"
        )

    OutputSerializer = ChangeDetailSerializer

    @extend_schema(
        tags=["changes"],
        summary="Attach eval results to a change request",
        description="A harness's results of running each case against the base text and "
        "the proposed text. Stored whole and never changed (results run again are attached "
        "again; the latest counts), with who attached them in the history. Any member of "
        "the tenant, with a token of any scope. Answers the change request, whose `evals` "
        "list them with their comparison (pass rate, or mean score) and `evals_gate` says "
        "what `review.requireEvals` makes of the latest. 400 naming the first bad field "
        "(`cases[2].proposed`); 409 `change_closed` once merged, rejected or withdrawn; "
        "422 if the harness or a case's name holds a secret or hidden characters.",
        request=InputSerializer,
        responses={201: OutputSerializer, **errors(400, 404, 409, 422)},
    )
    def post(self, request: Request, tenant: str, project: str, change_id: str) -> Response:
        access, change = _change(request, tenant, project, change_id)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        evals_service.change_evals_attach(
            change=change, user=access.user, **serializer.validated_data
        )
        change.refresh_from_db()
        return _detail_response(request, change, status_code=status.HTTP_201_CREATED)
