"""Reads of document labels: a document's labels, the version one names, and the names
in use where a project's render reads."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from agentdocs.core.errors import InvalidInput, NotFound
from agentdocs.models import RESERVED_PROJECT, Document, DocumentLabel, Project
from agentdocs.selectors import documents as document_selectors


def label_rows(*, document: Document) -> QuerySet[DocumentLabel]:
    """The document's labels, by name, with who moved each last: for a page of them.
    Each row knows ``document`` (the related manager sets it), so a row's path reads
    nothing more."""
    return document.labels.select_related("moved_by").order_by("name", "pk")


def label_list(*, document: Document) -> list[DocumentLabel]:
    """The document's labels, by name, with who moved each last: one query."""
    return list(label_rows(document=document))


def labels_by_version(*, document: Document) -> dict[int, list[str]]:
    """The names of the document's labels, by the version each points at."""
    found: dict[int, list[str]] = {}
    for name, version in DocumentLabel.objects.filter(document=document).values_list(
        "name", "version"
    ):
        found.setdefault(version, []).append(name)
    return found


def label_get(*, document: Document, name: str) -> DocumentLabel:
    """The label ``name`` of the document; NotFound naming `label` when it has none."""
    label = DocumentLabel.objects.filter(document=document, name=name).first()
    if label is None:
        raise NotFound(
            f"The document {document.path!r} has no label {name!r}.",
            field="label",
        )
    return label


def labelled_version(*, document: Document, name: str) -> Any:  # -> HistoricalDocument
    """The history row of the version the label ``name`` points at; NotFound naming
    `label` when the document has no such label."""
    label = label_get(document=document, name=name)
    return document_selectors.document_version(document=document, version=label.version)


# The pages offer the names in a select; a tenant with more is still read by any name
# typed into the URL.
MAX_LABEL_NAMES = 200


def label_names_in_use(*, project: Project, limit: int = MAX_LABEL_NAMES) -> list[str]:
    """The names of the labels of the live documents of ``project`` and of its tenant's
    `_vance` project (those a render of the project can read by), sorted: one query."""
    return list(
        DocumentLabel.objects.filter(
            document__project__tenant_id=project.tenant_id,
            document__project__slug__in={project.slug, RESERVED_PROJECT},
            document__is_deleted=False,
        )
        .order_by("name")
        .values_list("name", flat=True)
        .distinct()[:limit]
    )


def version_for_label(*, document: Document, version: object) -> int:
    """A version the document had, with text, for a label to point at: InvalidInput or
    NotFound naming `version`."""
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise InvalidInput("`version` must be a positive integer.", field="version")
    row = document_selectors.document_version(document=document, version=version)
    if row.is_deleted:
        raise InvalidInput(
            f"Version {version} is a deletion; a label names a version with text.",
            field="version",
        )
    return version
