"""Labels of a document's versions: list them (paged), move one (`PUT`), remove one
(`DELETE`).

`latest` is implicit (the newest version): listed, never moved. Moving or removing is
writing the document (admins for `_vance`); a label `review.protectedLabels` names
(default `production`) is moved and removed by reviewers (tenant admins) only
(`Access.may_move_label`). Under `review.required` a move or a removal by someone who
may not bypass review opens a change request naming the label (202); merging it moves
or removes the label. A document carries at most `AGENTDOCS_MAX_LABELS_PER_DOCUMENT`
labels (409 `too_many_labels` past it).
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agentdocs import permissions
from agentdocs.api.access import request_document
from agentdocs.api.changes import ChangeSerializer
from agentdocs.api.common import ListView
from agentdocs.api.pagination import Pagination
from agentdocs.api.schema import errors
from agentdocs.api.serializers import ReasonField, StrictSerializer, VersionField, optional_body
from agentdocs.core.labels import LATEST, validate_label_name
from agentdocs.models import ChangeRequest, Document, Skill
from agentdocs.paging import Prepended
from agentdocs.selectors import labels as label_selectors
from agentdocs.services import label_review


class LabelFieldsSerializer(serializers.Serializer):
    """What a label says of itself, a document's or a skill's (each adds what it labels)."""

    # `label` is also a Field attribute (its title) to the type checker, not to DRF.
    label = serializers.CharField(  # type: ignore[assignment]
        source="name", help_text="The label's name (a slug)"
    )
    name = serializers.CharField(help_text="Same as `label`")
    version = serializers.IntegerField(help_text="The version the label points at")
    moved_by = serializers.CharField(
        source="moved_by.username", allow_null=True, help_text="Who moved it last"
    )
    moved_at = serializers.DateTimeField(help_text="When it was moved last")
    reason = serializers.CharField(
        allow_null=True, help_text="Why, as the mover said (null for `latest`)"
    )


class LatestFieldsSerializer(serializers.Serializer):
    """`latest`, the implicit label, as `latest_entry` makes it."""

    label = serializers.CharField(help_text="`latest`")  # type: ignore[assignment]
    name = serializers.CharField(help_text="Same as `label`")
    version = serializers.IntegerField(help_text="The current version")
    moved_by = serializers.CharField(allow_null=True, help_text="Who wrote the current version")
    moved_at = serializers.DateTimeField(help_text="When the current version was written")
    reason = serializers.CharField(allow_null=True, help_text="Always null: latest moves itself")


class LabelSerializer(LabelFieldsSerializer):
    class Meta:
        ref_name = "DocumentLabel"

    path = serializers.CharField(source="document.path", help_text="The document's path")
    document = serializers.CharField(source="document.path", help_text="Same as `path`")


class LatestSerializer(LatestFieldsSerializer):
    class Meta:
        ref_name = "DocumentLabelLatest"

    path = serializers.CharField()
    document = serializers.CharField()


class LabelListSerializer(serializers.Serializer):
    class Meta:
        ref_name = "DocumentLabels"

    path = serializers.CharField()
    latest = LatestSerializer(help_text="The implicit label: the newest version")
    labels = LabelSerializer(many=True, help_text="The named labels of this page, by name")
    count = serializers.IntegerField(help_text="How many entries the list holds, `latest` too")
    count_exact = serializers.BooleanField(help_text="As every paged list's")
    next = serializers.URLField(allow_null=True, help_text="The next page, or null")
    previous = serializers.URLField(allow_null=True, help_text="The previous page, or null")
    results = LabelSerializer(
        many=True,
        help_text="This page of every label, as the other lists answer: `latest` first (on "
        "the first page), then the named labels by name",
    )


def latest_entry(labelled: Document | Skill, **what: str) -> dict[str, Any]:
    """`latest` of a document or a skill (``what``: the fields naming it), as listed."""
    return {
        "label": LATEST,
        "name": LATEST,
        **what,
        "version": labelled.version,
        "moved_by": labelled.updated_by.username if labelled.updated_by else None,
        "moved_at": labelled.updated_at,
        "reason": None,
    }


def _latest(document: Document) -> dict[str, Any]:
    return latest_entry(document, path=document.path, document=document.path)


def labels_page(
    view: ListView,
    request: Request,
    *,
    latest: Any,
    rows: Any,
    serializer: type[serializers.Serializer],
) -> dict[str, Any]:
    """One page of a document's or a skill's labels, as every list pages: `latest` first
    (on the first page), then the named ``rows``; `labels` holds the page's named ones."""
    paged_rows = Prepended([latest], rows)
    paginator = view.pagination_class()
    page = paginator.paginate_queryset(paged_rows, request, view=view)
    labels = serializer([row for row in page if row is not latest], many=True).data
    paged = paginator.get_paginated_response(
        [latest, *labels] if page and page[0] is latest else list(labels)
    )
    return {"latest": latest, "labels": labels, **paged.data}


def label_moved_response(
    request: Request, done: Any, serializer: type[serializers.Serializer]
) -> Response:
    """A move's answer: 202 with the change request review opened instead, else the
    label, 201 when it is new, 200 when it moved."""
    if isinstance(done, ChangeRequest):
        body = ChangeSerializer(done, context={"request": request}).data
        return Response(body, status=status.HTTP_202_ACCEPTED)
    code = status.HTTP_201_CREATED if done.created else status.HTTP_200_OK
    return Response(serializer(done.label).data, status=code)


def label_removed_response(request: Request, proposed: ChangeRequest | None) -> Response:
    """A removal's answer: 202 with the change request review opened instead, else 204."""
    if proposed is not None:
        body = ChangeSerializer(proposed, context={"request": request}).data
        return Response(body, status=status.HTTP_202_ACCEPTED)
    return Response(status=status.HTTP_204_NO_CONTENT)


PAGE_PARAMETER = OpenApiParameter(
    "page",
    int,
    OpenApiParameter.QUERY,
    description="The page, from 1 (or `last`); one that names no page is a 404 naming `page`.",
)
PAGE_SIZE_PARAMETER = OpenApiParameter(
    "page_size",
    int,
    OpenApiParameter.QUERY,
    description=f"Rows per page: a whole number from 1 (default {Pagination.page_size}; more "
    f"than {Pagination.max_page_size} is read as {Pagination.max_page_size}). Anything else "
    "is a 400 naming `page_size`.",
)


class DocumentLabelList(ListView):
    OutputSerializer = LabelListSerializer

    @extend_schema(
        tags=["labels"],
        summary="List a document's labels",
        operation_id="document_labels_list",
        description="`latest` (the current version) and every named label with the version "
        "it points at and who moved it last, when and why, paged as every list "
        "(`count`, `next`, `previous`, `results`; `?page=`, `?page_size=`): `results` holds "
        "`latest` first, then the named labels by name; `labels` the page's named labels. "
        "Readers and above.",
        responses={200: OutputSerializer, **errors(400, 404)},
        parameters=[PAGE_PARAMETER, PAGE_SIZE_PARAMETER],
    )
    def get(self, request: Request, tenant: str, project: str, path: str) -> Response:
        _, document = request_document(request, tenant, project, path)
        page = labels_page(
            self,
            request,
            latest=LatestSerializer(_latest(document)).data,
            rows=label_selectors.label_rows(document=document),
            serializer=LabelSerializer,
        )
        return Response({"path": document.path, **page})


LABEL_PARAMETER = OpenApiParameter(
    "label",
    str,
    OpenApiParameter.PATH,
    description="The label's name: a slug (lowercase letters, digits, hyphens), not `latest`",
)


class DocumentLabelDetail(APIView):
    OutputSerializer = LabelSerializer

    class InputSerializer(StrictSerializer):
        class Meta:
            ref_name = "DocumentLabelMove"

        version = VersionField(help_text="The version the label is to point at")
        reason = ReasonField()

    class DeleteInputSerializer(StrictSerializer):
        class Meta:
            ref_name = "DocumentLabelRemove"

        reason = ReasonField()

    def _access(self, request: Request, tenant: str, project: str, path: str, label: str):
        access, document = request_document(request, tenant, project, path)
        return access, document, permissions.movable_label_for(access, document, label)

    @extend_schema(
        tags=["labels"],
        summary="Read one label",
        operation_id="document_label_retrieve",
        description="The version the label points at, who moved it last, when and why "
        "(`latest`: the current version). Readers and above; 404 naming `label` when the "
        "document has no such label.",
        responses={200: OutputSerializer, **errors(400, 404)},
        parameters=[LABEL_PARAMETER],
    )
    def get(self, request: Request, tenant: str, project: str, path: str, label: str) -> Response:
        _, document = request_document(request, tenant, project, path)
        name = validate_label_name(label, field="label")
        if name == LATEST:
            return Response(LatestSerializer(_latest(document)).data)
        found = label_selectors.label_get(document=document, name=name)
        return Response(self.OutputSerializer(found).data)

    @extend_schema(
        tags=["labels"],
        summary="Move a label to a version",
        description="Points the label at `version` of the document: 201 when the label is "
        "new, 200 when it moved. Writers (tenant admins in `_vance`); a label "
        "`review.protectedLabels` names (default `production`) only reviewers (tenant "
        "admins), else 403 naming `label`. `latest` or a name that is not a slug: 400 naming "
        "`label`; a version the document never had: 404 naming `version`. Under "
        "`review.required`, a move by a member who may not bypass review opens a change "
        "request naming the label and answers 202 with it; merging it moves the label. A "
        "new label on a document that carries `AGENTDOCS_MAX_LABELS_PER_DOCUMENT` (default "
        "50) is 409 `too_many_labels` with its `limit` (moving one it has is not adding).",
        request=InputSerializer,
        responses={
            200: OutputSerializer,
            201: OutputSerializer,
            202: ChangeSerializer,
            **errors(400, 404, 409),
        },
        parameters=[LABEL_PARAMETER],
    )
    def put(self, request: Request, tenant: str, project: str, path: str, label: str) -> Response:
        access, document, name = self._access(request, tenant, project, path, label)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        done = label_review.label_request(
            document=document,
            name=name,
            version=data["version"],
            user=access.user,
            reason=data["reason"],
            may_bypass_review=access.may_bypass_review,
        )
        return label_moved_response(request, done, self.OutputSerializer)

    @extend_schema(
        tags=["labels"],
        summary="Remove a label",
        description="Readers asking for the label get `latest` again. Rights as for a move "
        "(writers; a label `review.protectedLabels` names only reviewers, else 403 naming "
        "`label`; in `_vance` only tenant admins); 404 naming `label` when the document has "
        "no such label. Under `review.required`, a removal by a member who may not bypass "
        "review opens a change request naming the label with `label_action` `remove` and "
        "answers 202 with it; merging it removes the label.",
        request=DeleteInputSerializer,
        responses={204: None, 202: ChangeSerializer, **errors(400, 404)},
        parameters=[LABEL_PARAMETER],
    )
    def delete(
        self, request: Request, tenant: str, project: str, path: str, label: str
    ) -> Response:
        access, document, name = self._access(request, tenant, project, path, label)
        serializer = self.DeleteInputSerializer(data=optional_body(request.data))
        serializer.is_valid(raise_exception=True)
        proposed = label_review.label_remove_request(
            document=document,
            name=name,
            user=access.user,
            reason=serializer.validated_data["reason"],
            may_bypass_review=access.may_bypass_review,
        )
        return label_removed_response(request, proposed)
