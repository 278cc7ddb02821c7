"""Run outcomes: report them on a binding record or by process, and list them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agentdocs.api.access import calling_token, request_project_access
from agentdocs.api.bindings import _record_id
from agentdocs.api.memory_block import process_field
from agentdocs.api.pagination import Pagination
from agentdocs.api.schema import errors
from agentdocs.api.serializers import MomentField, StrictSerializer, TextField, validated
from agentdocs.core.errors import InvalidInput
from agentdocs.core.numbers import MAX_ID
from agentdocs.core.outcomes import (
    COMMENT_LENGTH,
    MAX_OUTCOMES,
    NAME_RULE,
    UNIT_LENGTH,
    OutcomeReport,
    OutcomeValue,
    outcome_value,
    validate_outcome_name,
)
from agentdocs.core.stored_text import refuse_hidden_or_secret
from agentdocs.models import BindingRecord, Outcome, Scope
from agentdocs.paging import LateRows
from agentdocs.permissions import ProjectAccess
from agentdocs.selectors import bindings as binding_selectors
from agentdocs.selectors import outcomes as outcome_selectors
from agentdocs.selectors.outcomes import outcome_comparison
from agentdocs.services import outcomes as outcome_service
from agentdocs.validation import memory_block as memory_block_checks

VALUE_SCHEMA = {"oneOf": [{"type": "boolean"}, {"type": "number"}]}


@extend_schema_field(VALUE_SCHEMA)
class OutcomeValueField(serializers.Field):
    """true/false, or a finite number (`core.outcomes.outcome_value`)."""

    def to_internal_value(self, data: Any) -> OutcomeValue:
        try:
            return outcome_value(data, field=self.field_name or "value")
        except InvalidInput as refused:
            raise serializers.ValidationError(refused.detail) from None

    def to_representation(self, value: Any) -> Any:
        return value


class OutcomeInputSerializer(StrictSerializer):
    class Meta:
        ref_name = "OutcomeInput"

    name = TextField(help_text=NAME_RULE)
    value = OutcomeValueField(help_text="true/false (a rate is compared), or a finite number")
    unit = TextField(
        required=False, default="", max_length=UNIT_LENGTH, help_text="`USD`, `tokens`, `s` ..."
    )
    comment = TextField(required=False, default="", max_length=COMMENT_LENGTH)
    supersedes = serializers.IntegerField(
        required=False,
        allow_null=True,
        default=None,
        min_value=1,
        max_value=MAX_ID,
        help_text="A correction: the id of the run's current outcome of this name, which "
        "stays, superseded",
    )

    def validate_name(self, name: str) -> str:
        try:
            return validate_outcome_name(name, field="name")
        except InvalidInput as refused:
            raise serializers.ValidationError(refused.detail) from None


ITEM_FIELDS = tuple(OutcomeInputSerializer().fields)


class ReportSerializer(StrictSerializer):
    """`{"outcomes": [...]}`; a body that is one outcome's fields is taken as a list of one."""

    class Meta:
        ref_name = "OutcomeReport"

    outcomes = serializers.ListField(
        child=OutcomeInputSerializer(),
        min_length=1,
        max_length=MAX_OUTCOMES,
        help_text=f"The run's outcomes, 1 to {MAX_OUTCOMES}, all recorded or none",
    )

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, Mapping) or "outcomes" in data or "name" not in data:
            return {**super().to_internal_value(data), "single": False}
        single = {key: value for key, value in data.items() if key in ITEM_FIELDS}
        rest = {key: value for key, value in data.items() if key not in ITEM_FIELDS}
        try:
            attrs = super().to_internal_value({**rest, "outcomes": [single]})
        except serializers.ValidationError as error:
            # Named as sent: `value`, not `outcomes.0.value`.
            detail = error.detail
            if isinstance(detail, dict) and isinstance(detail.get("outcomes"), dict):
                inner: Any = detail["outcomes"]
                raise serializers.ValidationError(inner[0]) from None
            raise
        return {**attrs, "single": True}

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        reports = []
        for index, item in enumerate(attrs.pop("outcomes")):
            report = OutcomeReport(
                name=item["name"],
                value=item["value"],
                unit=item["unit"],
                comment=item["comment"],
                supersedes=item["supersedes"],
                field="" if attrs["single"] else f"outcomes.{index}",
            )
            refuse_hidden_or_secret(report.unit, field=report.at("unit"), what="The unit")
            refuse_hidden_or_secret(report.comment, field=report.at("comment"), what="The comment")
            reports.append(report)
        attrs.pop("single")
        return {**attrs, "reports": reports}


class ProcessReportSerializer(ReportSerializer):
    class Meta:
        ref_name = "ProcessOutcomeReport"

    process = process_field("`process` is required: the id of the run the outcomes are of.")

    def validate_process(self, process: str) -> str:
        return memory_block_checks.validate_process(process)


class OutcomeSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    binding = serializers.IntegerField(source="binding_id", help_text="The binding record")
    process = serializers.CharField()
    name = serializers.CharField()
    # Not `get_value`: a serializer's own method of that name reads its input.
    value = serializers.SerializerMethodField(method_name="shown_value")
    unit = serializers.CharField()
    comment = serializers.CharField()
    supersedes = serializers.IntegerField(source="supersedes_id", allow_null=True)
    superseded_by = serializers.SerializerMethodField(
        help_text="The outcome that corrects this one; null while it is current"
    )
    current = serializers.SerializerMethodField(
        help_text="Whether this is the run's outcome of its name (nothing supersedes it)"
    )
    reported_by = serializers.CharField(source="reported_by.username", allow_null=True)
    token = serializers.CharField(
        source="reported_with.prefix",
        allow_null=True,
        help_text="The prefix of the API token it was reported with; null without one",
    )
    reported_at = serializers.DateTimeField()

    @extend_schema_field(VALUE_SCHEMA)
    def shown_value(self, outcome: Outcome) -> bool | float | int:
        return OutcomeValue(outcome.value, is_bool=outcome.is_bool).shown()

    def get_superseded_by(self, outcome: Outcome) -> int | None:
        return getattr(outcome, "superseded_by_id", None)

    def get_current(self, outcome: Outcome) -> bool:
        return getattr(outcome, "superseded_by_id", None) is None


class ReportedSerializer(serializers.Serializer):
    outcomes = OutcomeSerializer(many=True)


class OutcomeFilterSerializer(serializers.Serializer):
    process = serializers.CharField(
        required=False, default="", allow_blank=True, help_text="Only this run's outcomes"
    )
    name = serializers.CharField(
        required=False, default="", allow_blank=True, help_text="Only outcomes of this name"
    )


def _report(
    request: Request, binding: BindingRecord, access: ProjectAccess, reports: Any
) -> Response:
    made = outcome_service.outcome_report(
        binding=binding, user=access.user, token=calling_token(request), reports=reports
    )
    return Response(ReportedSerializer({"outcomes": made}).data, status=status.HTTP_201_CREATED)


def _listed(request: Request, view: APIView, outcomes: Any) -> Response:
    paginator = Pagination()
    page = paginator.paginate_queryset(LateRows(outcomes), request, view=view)
    return paginator.get_paginated_response(OutcomeSerializer(page, many=True).data)


REPORT_DESCRIPTION = (
    "Records one or more named results of a run (`task_success: true`, `cost_usd: 0.31`): "
    '`{"outcomes": [{name, value, unit?, comment?, supersedes?}]}`, or one outcome\'s '
    "fields as the body. Who reported it (and with which token) and when are kept. "
    "Outcomes are never changed: a correction names the run's current outcome of that "
    "name in `supersedes`, and both are kept (409 when the run already has one and none "
    "is named, or another is). Readers may report; an API token needs the `render` "
    "scope. A name keeps its kind in a project (a yes/no or a number). 422 when a unit or "
    "comment holds a secret or a hidden character."
)


class BindingOutcomes(APIView):
    required_scopes = {"POST": Scope.RENDER}
    pagination_class = Pagination

    @extend_schema(
        tags=["outcomes"],
        summary="List a run's outcomes",
        description="The outcomes of the run (process) this record is of, oldest first, "
        "corrections and the outcomes they supersede alike, each saying whether it is current.",
        responses={200: OutcomeSerializer(many=True), **errors(400, 404)},
    )
    def get(self, request: Request, tenant: str, project: str, record: str) -> Response:
        access = request_project_access(request, tenant, project)
        binding = binding_selectors.binding_record_get(
            project=access.project, record_id=_record_id(record)
        )
        return _listed(
            request, self, outcome_selectors.outcome_list(project=access.project, binding=binding)
        )

    @extend_schema(
        tags=["outcomes"],
        summary="Report a run's outcomes",
        description=REPORT_DESCRIPTION,
        request=ReportSerializer,
        responses={201: ReportedSerializer, **errors(400, 404, 409, 422)},
    )
    def post(self, request: Request, tenant: str, project: str, record: str) -> Response:
        access = request_project_access(request, tenant, project)
        binding = binding_selectors.binding_record_get(
            project=access.project, record_id=_record_id(record)
        )
        data = validated(ReportSerializer, request.data)
        return _report(request, binding, access, data["reports"])


class ProjectOutcomes(APIView):
    required_scopes = {"POST": Scope.RENDER}
    pagination_class = Pagination

    @extend_schema(
        tags=["outcomes"],
        summary="List a project's outcomes",
        description="Oldest first, paged; `?process=` keeps one run's, `?name=` one metric's.",
        parameters=[OutcomeFilterSerializer],
        responses={200: OutcomeSerializer(many=True), **errors(400, 404)},
    )
    def get(self, request: Request, tenant: str, project: str) -> Response:
        access = request_project_access(request, tenant, project)
        query = validated(OutcomeFilterSerializer, request.query_params)
        outcomes = outcome_selectors.outcome_list(
            project=access.project, process=query["process"] or None, name=query["name"] or None
        )
        return _listed(request, self, outcomes)

    @extend_schema(
        tags=["outcomes"],
        summary="Report a run's outcomes by its process",
        description=REPORT_DESCRIPTION
        + " The outcomes go to the newest binding record of `process` (404 when it has none).",
        request=ProcessReportSerializer,
        responses={201: ReportedSerializer, **errors(400, 404, 409, 422)},
    )
    def post(self, request: Request, tenant: str, project: str) -> Response:
        access = request_project_access(request, tenant, project)
        data = validated(ProcessReportSerializer, request.data)
        binding = outcome_selectors.binding_record_of_process(
            project=access.project, process=data["process"]
        )
        return _report(request, binding, access, data["reports"])


class CompareQuerySerializer(serializers.Serializer):
    metric = serializers.CharField(help_text="The outcome's name, as `task_success`")
    by = serializers.ChoiceField(
        list(outcome_selectors.COHORTS_BY),
        help_text="What groups the runs: the label their block was read by, the version of "
        "`document` they saw, or their recipe",
        error_messages={"invalid_choice": "`by` must be label, version or recipe."},
    )
    document = serializers.CharField(
        required=False, default="", help_text="With `by=version`: the document's path"
    )
    since = MomentField(required=False, default=None, help_text="Runs bound at or after")
    until = MomentField(required=False, default=None, help_text="Runs bound before")
    baseline = serializers.CharField(
        required=False,
        default="",
        help_text="The cohort the others are compared with (default: `production`, else "
        "the one with the most runs with the metric)",
    )
    lower_is_better = serializers.BooleanField(
        required=False,
        default=False,
        help_text="A metric such as `cost_usd`: a lower value is the better one",
    )
    effect = serializers.FloatField(
        required=False,
        default=None,
        min_value=1e-9,
        help_text="The difference to detect, in the metric's units (default: 0.05 for a "
        "rate, a fifth of the baseline's standard deviation for a number)",
    )

    def validate_metric(self, metric: str) -> str:
        try:
            return validate_outcome_name(metric, field="metric")
        except InvalidInput as refused:
            raise serializers.ValidationError(refused.detail) from None

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs["by"] == "version" and not attrs["document"]:
            raise InvalidInput(
                "`document` is required with `by=version`: the path whose versions group "
                "the runs, as `agent.md`.",
                field="document",
            )
        if attrs["effect"] is not None and attrs["effect"] > 1e12:
            raise InvalidInput("`effect` is too large.", field="effect")
        return attrs


class CohortSerializer(serializers.Serializer):
    cohort = serializers.CharField(
        allow_null=True, help_text="The label, version or recipe; null: the runs that saw none"
    )
    runs = serializers.IntegerField(help_text="Runs (processes) bound in the window")
    runs_with_metric = serializers.IntegerField()
    rate = serializers.FloatField(allow_null=True, help_text="A yes/no metric: the share true")
    mean = serializers.FloatField(allow_null=True, help_text="A number: the mean")
    interval = serializers.ListField(
        child=serializers.FloatField(),
        allow_null=True,
        help_text="[low, high], 95%: Wilson for a rate, Student's t for a mean",
    )
    difference = serializers.FloatField(allow_null=True, help_text="This cohort − the baseline")
    difference_interval = serializers.ListField(
        child=serializers.FloatField(),
        allow_null=True,
        help_text="[low, high], 95%: Newcombe's for rates, Welch's t for means",
    )
    verdict = serializers.ChoiceField(["baseline", "better", "worse", "no difference yet"])
    runs_needed = serializers.IntegerField(
        allow_null=True,
        help_text="More runs with the metric this cohort needs for a difference of `effect` "
        "to be found (95% confidence, 80% power); null when the spread is unknown",
    )


class ComparisonSerializer(serializers.Serializer):
    metric = serializers.CharField()
    by = serializers.CharField()
    document = serializers.CharField(allow_null=True)
    kind = serializers.ChoiceField(
        ["rate", "mean"], allow_null=True, help_text="null: no run reported the metric"
    )
    baseline = serializers.CharField(allow_null=True)
    lower_is_better = serializers.BooleanField()
    effect = serializers.FloatField(allow_null=True)
    runs_per_cohort_needed = serializers.IntegerField(allow_null=True)
    cohorts = CohortSerializer(many=True)


class OutcomeCompare(APIView):
    @extend_schema(
        tags=["outcomes"],
        summary="Compare cohorts of runs on an outcome",
        description="Groups the project's runs by what they saw (`by=label`, `by=recipe`, "
        "or `by=version&document=agent.md`) and answers per cohort its runs, the runs that "
        "reported `metric` (the current outcome of each run only), the rate or mean with "
        "its 95% interval, the difference to the baseline cohort with its interval, a "
        "verdict (`better`, `worse`, `no difference yet`; higher is better unless "
        "`lower_is_better=true`) and how many more runs would find a difference of "
        "`effect`. `since`/`until` bound when the runs were bound.",
        parameters=[CompareQuerySerializer],
        responses={200: ComparisonSerializer, **errors(400, 404)},
    )
    def get(self, request: Request, tenant: str, project: str) -> Response:
        access = request_project_access(request, tenant, project)
        query = validated(CompareQuerySerializer, request.query_params)
        comparison = outcome_comparison(
            project=access.project,
            metric=query["metric"],
            by=query["by"],
            document=query["document"] or None,
            since=query["since"],
            until=query["until"],
            baseline=query["baseline"] or None,
            lower_is_better=query["lower_is_better"],
            effect=query["effect"],
        )
        return Response(ComparisonSerializer(comparison).data)
