"""Repositories: a repository reports what `agentdocs sync`, `sync --check` or
`bind --repo` found there; members list the project's repositories with their state
against the server's export now, and read one with the first page of its checks and
bound runs (the rest paged at `.../checks/` and `.../runs/`)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from agentdocs import ratelimit
from agentdocs.api.access import caller, calling_token, request_project_access
from agentdocs.api.common import ListView
from agentdocs.api.pagination import Pagination
from agentdocs.api.schema import RETRY_AFTER, errors
from agentdocs.api.serializers import StrictBooleanField, StrictSerializer, TextField
from agentdocs.core import repositories as core
from agentdocs.core.errors import InvalidInput
from agentdocs.core.numbers import MAX_ID, positive_int
from agentdocs.models import RepositoryCheck, Scope
from agentdocs.selectors import repositories as selectors
from agentdocs.services import repositories as repository_service


def _repository_id(raw: str) -> int:
    repository_id = positive_int(raw, maximum=MAX_ID)
    if repository_id is None:
        raise InvalidInput("A repository id is a positive integer.", field="repository")
    return repository_id


class LastRunSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    process = serializers.CharField()
    created_at = serializers.DateTimeField()
    url = serializers.CharField(help_text="The binding record in the API")


class RepositorySerializer(serializers.Serializer):
    class Meta:
        ref_name = "Repository"

    id = serializers.IntegerField()
    remote = serializers.CharField(allow_null=True, help_text="The git remote, without credentials")
    name = serializers.CharField(
        allow_null=True, help_text="For a repository without a remote: the name its client gave"
    )
    branch = serializers.CharField(allow_null=True, help_text="null: a detached HEAD")
    last_commit = serializers.CharField(allow_null=True)
    first_seen = serializers.DateTimeField()
    last_seen = serializers.DateTimeField()
    dirty = serializers.BooleanField()
    formats = serializers.ListField(child=serializers.CharField())
    recipe = serializers.CharField(allow_null=True)
    profile = serializers.CharField(allow_null=True)
    export_sha256 = serializers.CharField(help_text="The export the repository holds")
    current_export_sha256 = serializers.CharField(
        allow_null=True,
        help_text="The server's export of the same formats now (null: it cannot be made)",
    )
    state = serializers.ChoiceField(
        choices=list(core.LISTED_STATES),
        help_text="`not-computed`: this answer's page held more distinct (formats, "
        "recipe, profile) sets than one request builds; read a smaller page or the "
        "repository itself",
    )
    files = serializers.DictField(
        child=serializers.CharField(), help_text="path: state, as last reported"
    )
    behind_by = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="Per exported file, the versions its source documents moved since the "
        "repository last held the server's export",
    )
    last_run = LastRunSerializer(allow_null=True)
    url = serializers.CharField()


def repository_data(
    status: selectors.RepositoryStatus, *, tenant: str, project: str
) -> dict[str, Any]:
    row = status.repository
    run = row.last_run
    kwargs = {"tenant": tenant, "project": project}
    return {
        "id": row.pk,
        "remote": row.remote or None,
        "name": row.name or None,
        "branch": row.branch or None,
        "last_commit": row.last_commit or None,
        "first_seen": row.first_seen,
        "last_seen": row.last_seen,
        "dirty": row.dirty,
        "formats": row.formats.split(","),
        "recipe": row.recipe or None,
        "profile": row.profile or None,
        "export_sha256": row.export_sha256,
        "current_export_sha256": status.current_export_sha256,
        "state": status.state,
        "files": row.files,
        "behind_by": status.behind_by,
        "last_run": None
        if run is None
        else {
            "id": run.pk,
            "process": run.process,
            "created_at": run.created_at,
            "url": reverse("api-binding", kwargs={**kwargs, "record": str(run.pk)}),
        },
        "url": reverse("api-repository", kwargs={**kwargs, "repository_id": row.pk}),
    }


class RepositoryListReport(ListView):
    # Reporting is what a sync or a run does: a `render` token may, as for binding.
    required_scopes = {"POST": Scope.RENDER}
    OutputSerializer = RepositorySerializer

    class InputSerializer(StrictSerializer):
        class Meta:
            ref_name = "RepositoryReport"

        kind = serializers.ChoiceField(
            choices=list(core.KINDS), help_text="What reports: sync, check (`sync --check`) or bind"
        )
        remote = TextField(
            required=False,
            allow_null=True,
            default=None,
            help_text="The git remote (credentials are stripped); remote and branch "
            "identify the repository",
        )
        name = TextField(
            required=False,
            allow_null=True,
            default=None,
            help_text="Without a remote: a stable name for the repository (`--repo-name`)",
        )
        branch = TextField(required=False, allow_null=True, default=None)
        commit = TextField(required=False, allow_null=True, default=None)
        dirty = StrictBooleanField(required=False, default=False)
        formats = serializers.JSONField(
            required=False,
            allow_null=True,
            default=None,
            help_text="The export formats the repository holds: a list, or comma-separated",
        )
        format = serializers.JSONField(
            required=False,
            allow_null=True,
            default=None,
            help_text="One format: the same as `formats`",
        )
        recipe = TextField(required=False, allow_null=True, default=None)
        profile = TextField(required=False, allow_null=True, default=None)
        export_sha256 = serializers.JSONField(
            help_text="The export_sha256 of what the repository holds (its lock file's)"
        )
        files = serializers.JSONField(
            help_text="path: state, of at most `AGENTDOCS_REPOSITORY_MAX_FILES` files (200 "
            "by default), each path at most `AGENTDOCS_REPOSITORY_MAX_PATH` bytes of UTF-8 "
            "(255)"
        )
        binding = serializers.JSONField(
            required=False,
            allow_null=True,
            default=None,
            help_text="With kind bind: the binding record of the run",
        )

        def validate_remote(self, value: str | None) -> str | None:
            return core.one_line(value, field="remote", limit=core.MAX_REMOTE)

        def validate_name(self, value: str | None) -> str | None:
            return core.one_line(value, field="name", limit=core.MAX_NAME)

        def validate_branch(self, value: str | None) -> str | None:
            return core.one_line(value, field="branch", limit=core.MAX_BRANCH)

        def validate_recipe(self, value: str | None) -> str | None:
            return core.one_line(value, field="recipe", limit=core.MAX_NAME)

        def validate_profile(self, value: str | None) -> str | None:
            return core.one_line(value, field="profile", limit=core.MAX_NAME)

        def validate_commit(self, value: str | None) -> str | None:
            return core.parse_commit(value)

        def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
            given = attrs.pop("format")
            if attrs["formats"] is None and given is None:
                raise InvalidInput("`formats` is required: the export formats.", field="formats")
            if attrs["formats"] is not None and given is not None:
                raise InvalidInput("Send `formats` or `format`, not both.", field="format")
            attrs["formats"] = core.parse_formats(
                attrs["formats"] if given is None else given,
                field="formats" if given is None else "format",
            )
            return attrs

        def validate_export_sha256(self, value: object) -> str:
            return core.parse_sha256(value, field="export_sha256")

        def validate_files(self, value: object) -> dict[str, str]:
            return core.parse_files(
                value,
                max_files=settings.AGENTDOCS_REPOSITORY_MAX_FILES,
                max_path=settings.AGENTDOCS_REPOSITORY_MAX_PATH,
            )

        def validate_binding(self, value: object) -> int | None:
            if value is None:
                return None
            if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= MAX_ID:
                raise InvalidInput(
                    "`binding` must be a binding record id, or null.", field="binding"
                )
            return value

    @extend_schema(
        tags=["repositories"],
        summary="List a project's repositories",
        description="Every repository that reported to the project (`agentdocs sync`, "
        "`sync --check`, `bind --repo`), paged, with its state against the server's export "
        "now: `in-sync`, `behind` (the server moved on, or files are missing), "
        "`edited-locally` or `never-checked` (its last report compared no file).",
        responses={200: RepositorySerializer(many=True), **errors(400, 404)},
    )
    def get(self, request: Request, tenant: str, project: str) -> Response:
        access = request_project_access(request, tenant, project)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(
            selectors.repository_list(project=access.project), request, view=self
        )
        statuses = selectors.repository_statuses(project=access.project, repositories=page or [])
        return paginator.get_paginated_response(
            [repository_data(row, tenant=tenant, project=project) for row in statuses]
        )

    @extend_schema(
        tags=["repositories"],
        summary="Report a repository's agent files",
        description="What a sync, a check or a repository run found: the export the "
        "repository holds and each file's state. The first report of a remote and branch "
        "makes the repository (201), later ones update it (200). Readers may report; an "
        "API token needs the `render` scope. A report that changes the repository's state "
        "emits `repository.state_changed`. A field holding a hidden character or a secret "
        "is refused with 422 naming it (`files` for a path: `line` is its position); a "
        "remote that cannot be read with 400 `invalid_remote`. Reports are rate-limited "
        "per token and per person (429).",
        request=InputSerializer,
        responses={
            200: RepositorySerializer,
            201: RepositorySerializer,
            **errors(400, 404, 422, 429),
        },
        parameters=[RETRY_AFTER],
    )
    def post(self, request: Request, tenant: str, project: str) -> Response:
        access = request_project_access(request, tenant, project)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        ratelimit.check(
            "repository_report",
            caller(request),
            ("repository_report_user", ratelimit.user_key(access.user.pk)),
        )
        result = repository_service.repository_report(
            project=access.project,
            user=access.user,
            token=calling_token(request),
            **serializer.validated_data,
        )
        data = repository_data(result, tenant=tenant, project=project)
        response = Response(
            data, status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK
        )
        response["Location"] = data["url"]
        return response


class CheckSerializer(serializers.Serializer):
    class Meta:
        ref_name = "RepositoryCheck"

    id = serializers.IntegerField()
    kind = serializers.CharField()
    commit = serializers.CharField(allow_null=True)
    branch = serializers.CharField(allow_null=True)
    dirty = serializers.BooleanField()
    formats = serializers.ListField(child=serializers.CharField())
    export_sha256 = serializers.CharField()
    files = serializers.DictField(child=serializers.CharField())
    state = serializers.CharField(help_text="The state the report left, as of then")
    binding = serializers.IntegerField(allow_null=True)
    reported_at = serializers.DateTimeField()
    reported_by = serializers.CharField(allow_null=True)


class RunSerializer(serializers.Serializer):
    class Meta:
        ref_name = "RepositoryRun"

    id = serializers.IntegerField()
    process = serializers.CharField()
    created_at = serializers.DateTimeField()
    problem_count = serializers.IntegerField()
    tool = serializers.CharField(allow_null=True)
    url = serializers.CharField()


def check_data(check: RepositoryCheck) -> dict[str, Any]:
    return {
        "id": check.pk,
        "kind": check.kind,
        "commit": check.commit or None,
        "branch": check.branch or None,
        "dirty": check.dirty,
        "formats": check.formats.split(","),
        "export_sha256": check.export_sha256,
        "files": check.files,
        "state": check.state,
        "binding": check.binding_id,
        "reported_at": check.reported_at,
        "reported_by": check.reported_by.get_username() if check.reported_by else None,
    }


def run_data(check: RepositoryCheck, *, tenant: str, project: str) -> dict[str, Any]:
    binding = check.binding
    assert binding is not None  # runs are the checks with a binding record
    return {
        "id": binding.pk,
        "process": binding.process,
        "created_at": binding.created_at,
        "problem_count": binding.problem_count,
        "tool": check.run_tool,  # type: ignore[attr-defined]  # annotated
        "url": reverse(
            "api-binding", kwargs={"tenant": tenant, "project": project, "record": str(binding.pk)}
        ),
    }


class CheckPagination(Pagination):
    """A page of checks: each holds up to `AGENTDOCS_REPOSITORY_MAX_FILES` file states,
    so a page holds few, and stays under 1 MB (docs/repositories.md#bounds)."""

    page_size = selectors.CHECKS_PER_PAGE
    max_page_size = selectors.CHECKS_PER_PAGE


def _next_page(name: str, kwargs: dict[str, Any], *, more: bool) -> str | None:
    """Page 2 of a paged list whose first page the detail shows, when it holds rows."""
    return f"{reverse(name, kwargs=kwargs)}?page=2" if more else None


class RepositoryDetail(ListView):
    class OutputSerializer(RepositorySerializer):
        class Meta:
            ref_name = "RepositoryDetail"

        checks = CheckSerializer(
            many=True,
            help_text=f"Its newest reports, newest first ({selectors.CHECKS_PER_PAGE} at most)",
        )
        checks_next = serializers.CharField(
            allow_null=True,
            help_text="The page of `.../checks/` with the reports after these; null: none",
        )
        runs = RunSerializer(
            many=True,
            help_text="Its newest bound runs (`bind --repo`), newest first "
            f"({selectors.RUNS_PER_PAGE} at most)",
        )
        runs_next = serializers.CharField(
            allow_null=True,
            help_text="The page of `.../runs/` with the runs after these; null: none",
        )

    @extend_schema(
        tags=["repositories"],
        summary="Read a repository, its newest checks and its newest bound runs",
        description="The repository as the list shows it, with the first page of its "
        "checks and of its bound runs; `checks_next` and `runs_next` lead to the next "
        "pages of `.../checks/` and `.../runs/`.",
        responses={200: OutputSerializer, **errors(400, 404)},
    )
    def get(self, request: Request, tenant: str, project: str, repository_id: str) -> Response:
        access = request_project_access(request, tenant, project)
        result = selectors.repository_status(
            project=access.project, repository_id=_repository_id(repository_id)
        )
        repository = result.repository
        data = repository_data(result, tenant=tenant, project=project)
        kwargs = {"tenant": tenant, "project": project, "repository_id": repository.pk}
        # The first page of each paged list (`CheckPagination`, `Pagination`), and one
        # row more, which says whether a next page holds any.
        checks = list(
            selectors.repository_checks(repository=repository)[: selectors.CHECKS_PER_PAGE + 1]
        )
        runs = list(selectors.repository_runs(repository=repository)[: selectors.RUNS_PER_PAGE + 1])
        data["checks"] = [check_data(check) for check in checks[: selectors.CHECKS_PER_PAGE]]
        data["checks_next"] = _next_page(
            "api-repository-checks", kwargs, more=len(checks) > selectors.CHECKS_PER_PAGE
        )
        data["runs"] = [
            run_data(check, tenant=tenant, project=project)
            for check in runs[: selectors.RUNS_PER_PAGE]
        ]
        data["runs_next"] = _next_page(
            "api-repository-runs", kwargs, more=len(runs) > selectors.RUNS_PER_PAGE
        )
        return Response(data)


class RepositoryCheckList(ListView):
    pagination_class = CheckPagination
    OutputSerializer = CheckSerializer

    @extend_schema(
        tags=["repositories"],
        summary="List a repository's checks",
        description="Its reports, newest first, paged: "
        f"{selectors.CHECKS_PER_PAGE} a page at most, each with its file states.",
        responses={200: CheckSerializer(many=True), **errors(400, 404)},
    )
    def get(self, request: Request, tenant: str, project: str, repository_id: str) -> Response:
        access = request_project_access(request, tenant, project)
        repository = selectors.repository_get(
            project=access.project, repository_id=_repository_id(repository_id)
        )
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(
            selectors.repository_checks(repository=repository), request, view=self
        )
        return paginator.get_paginated_response([check_data(check) for check in page or []])


class RepositoryRunList(ListView):
    OutputSerializer = RunSerializer

    @extend_schema(
        tags=["repositories"],
        summary="List a repository's bound runs",
        description="Its bound runs (`bind --repo`), newest first, paged.",
        responses={200: RunSerializer(many=True), **errors(400, 404)},
    )
    def get(self, request: Request, tenant: str, project: str, repository_id: str) -> Response:
        access = request_project_access(request, tenant, project)
        repository = selectors.repository_get(
            project=access.project, repository_id=_repository_id(repository_id)
        )
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(
            selectors.repository_runs(repository=repository), request, view=self
        )
        return paginator.get_paginated_response(
            [run_data(check, tenant=tenant, project=project) for check in page or []]
        )
