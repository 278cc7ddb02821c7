"""Reads of document labels: a document's labels, and the version one names."""

from __future__ import annotations

from typing import Any

from agentdocs.core.errors import NotFound
from agentdocs.models import Document, DocumentLabel
from agentdocs.selectors import documents as document_selectors


def label_list(*, document: Document) -> list[DocumentLabel]:
    """The document's labels, by name, with who moved each last: one query."""
    return list(DocumentLabel.objects.filter(document=document).select_related("moved_by"))


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
