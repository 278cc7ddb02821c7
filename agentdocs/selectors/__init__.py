"""Reads that cross relations, split by domain like the models: `tenancy`,
`documents`, `policy`, `bindings`. Callers have already resolved access through
`agentdocs.permissions`, so these take the project or tenant it returned."""

from __future__ import annotations

# transitional re-exports, removed once api/ and web/ call the domain modules
from agentdocs.selectors.bindings import binding_record_get, binding_record_list
from agentdocs.selectors.documents import (
    cascade_documents,
    deleted_document_list,
    document_history,
    document_list,
    tenant_wide_document,
)
from agentdocs.selectors.policy import provider_list, recipe_list, setting_list
from agentdocs.selectors.tenancy import (
    member_list,
    project_list,
    project_list_with_document,
    tenant_list_for,
    tenant_overview_for,
)

__all__ = [
    "binding_record_get",
    "binding_record_list",
    "cascade_documents",
    "deleted_document_list",
    "document_history",
    "document_list",
    "member_list",
    "project_list",
    "project_list_with_document",
    "provider_list",
    "recipe_list",
    "setting_list",
    "tenant_list_for",
    "tenant_overview_for",
    "tenant_wide_document",
]
