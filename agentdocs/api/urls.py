"""The REST API, version 1. Paths here are a contract clients depend on."""

from __future__ import annotations

from django.urls import path, re_path

from agentdocs.api import (
    activity,
    audit,
    bindings,
    changes,
    document_history,
    documents,
    explain,
    export,
    history,
    imports,
    invitations,
    labels,
    mcp_sessions,
    memory_block,
    ping,
    policy,
    providers,
    repositories,
    search,
    skill_history,
    skill_reads,
    skills,
    tenancy,
    tokens,
    webhooks,
)
from agentdocs.api.errors import json_not_found

T = r"^tenants/(?P<tenant>[^/]+)"
P = T + r"/projects/(?P<project>[^/]+)"
# `[\s\S]`: any character, a newline too (unlike `.`), so a path holding one reaches its view
# (which refuses it with the JSON error) instead of missing every route.
DOC = r"/(?P<path>[\s\S]+)$"
BINDING = r"/bindings/(?P<record>[^/]+)"
CHANGE = r"/changes/(?P<change_id>[^/]+)"
SKILL = r"/skills/(?P<name>[^/]+)"

urlpatterns = [
    path("ping", ping.Ping.as_view(), name="api-ping"),
    path("tenants/", tenancy.TenantListCreate.as_view(), name="api-tenants"),
    path("tokens/", tokens.TokenList.as_view(), name="api-tokens"),
    re_path(r"^tokens/(?P<token_id>[^/]+)$", tokens.TokenDetail.as_view(), name="api-token"),
    re_path(T + r"/tokens/$", tokens.TenantTokenList.as_view(), name="api-tenant-tokens"),
    re_path(
        T + r"/tokens/(?P<token_id>[^/]+)$",
        tokens.TenantTokenDetail.as_view(),
        name="api-tenant-token",
    ),
    re_path(T + r"/$", tenancy.TenantDetail.as_view(), name="api-tenant"),
    re_path(T + r"/projects/$", tenancy.ProjectListCreate.as_view(), name="api-projects"),
    re_path(P + r"/$", tenancy.ProjectDetail.as_view(), name="api-project"),
    re_path(T + r"/members/$", tenancy.MemberList.as_view(), name="api-members"),
    re_path(
        T + r"/members/(?P<username>[^/]+)$", tenancy.MemberDetail.as_view(), name="api-member"
    ),
    re_path(
        T + r"/invitations/$",
        invitations.TenantInvitationList.as_view(),
        name="api-tenant-invitations",
    ),
    re_path(
        T + r"/invitations/(?P<invitation_id>[^/]+)$",
        invitations.TenantInvitationDetail.as_view(),
        name="api-tenant-invitation",
    ),
    path("invitations/", invitations.InvitationList.as_view(), name="api-invitations"),
    re_path(
        r"^invitations/(?P<invitation_id>[^/]+)/accept$",
        invitations.InvitationAccept.as_view(),
        name="api-invitation-accept",
    ),
    re_path(
        r"^invitations/(?P<invitation_id>[^/]+)/decline$",
        invitations.InvitationDecline.as_view(),
        name="api-invitation-decline",
    ),
    # Documents; `path` may contain slashes.
    re_path(P + r"/documents/$", documents.DocumentListCreate.as_view(), name="api-documents"),
    # Labels (issue 29), before the document route: `.../documents/<path>/labels/` and
    # `.../documents/<path>/labels/<name>` are a document's labels when <name> holds no
    # dot (a label is a slug), so `labels/x.md` and `docs/labels/x.md` stay documents;
    # only a document path ending `/labels/` or `/labels/<name without a dot>` is out of
    # the API's reach (docs/labels.md).
    re_path(
        P + r"/documents/(?P<path>[\s\S]+)/labels/$",
        labels.DocumentLabelList.as_view(),
        name="api-document-labels",
    ),
    re_path(
        P + r"/documents/(?P<path>[\s\S]+)/labels/(?P<label>[^/.]+)$",
        labels.DocumentLabelDetail.as_view(),
        name="api-document-label",
    ),
    re_path(P + r"/documents" + DOC, documents.DocumentDetail.as_view(), name="api-document"),
    re_path(P + r"/history" + DOC, document_history.DocumentHistory.as_view(), name="api-history"),
    re_path(P + r"/diff" + DOC, document_history.DocumentDiff.as_view(), name="api-diff"),
    re_path(P + r"/revert" + DOC, document_history.DocumentRevert.as_view(), name="api-revert"),
    re_path(P + r"/lock" + DOC, documents.DocumentLock.as_view(), name="api-lock"),
    # Skills (issue 37): a skill's name is a slug (no `/`).
    re_path(P + r"/skills/$", skills.SkillListCreate.as_view(), name="api-skills"),
    re_path(P + SKILL + r"$", skills.SkillDetail.as_view(), name="api-skill"),
    re_path(
        P + SKILL + r"/versions/$", skill_history.SkillVersions.as_view(), name="api-skill-versions"
    ),
    re_path(
        P + SKILL + r"/versions/(?P<version>[^/]+)$",
        skill_history.SkillVersion.as_view(),
        name="api-skill-version",
    ),
    re_path(P + SKILL + r"/diff$", skill_history.SkillDiff.as_view(), name="api-skill-diff"),
    re_path(P + SKILL + r"/revert$", skill_history.SkillRevert.as_view(), name="api-skill-revert"),
    re_path(P + SKILL + r"/reads$", skill_reads.SkillReadCreate.as_view(), name="api-skill-reads"),
    # Policy: memory.* settings and recipes.
    re_path(T + r"/settings/$", policy.TenantSettingList.as_view(), name="api-tenant-settings"),
    re_path(
        T + r"/settings/(?P<key>[^/]+)$",
        policy.TenantSettingDetail.as_view(),
        name="api-tenant-setting",
    ),
    re_path(P + r"/settings/$", policy.ProjectSettingList.as_view(), name="api-project-settings"),
    re_path(
        P + r"/settings/(?P<key>[^/]+)$",
        policy.ProjectSettingDetail.as_view(),
        name="api-project-setting",
    ),
    re_path(T + r"/recipes/$", policy.RecipeListCreate.as_view(), name="api-recipes"),
    re_path(T + r"/recipes/(?P<name>[^/]+)$", policy.RecipeDetail.as_view(), name="api-recipe"),
    re_path(
        P + r"/memory-block/$", memory_block.MemoryBlockView.as_view(), name="api-memory-block"
    ),
    re_path(P + r"/export/$", export.ExportView.as_view(), name="api-export"),
    re_path(
        P + r"/export/formats/?$", export.ExportFormatsView.as_view(), name="api-export-formats"
    ),
    re_path(P + r"/explain/?$", explain.ExplainView.as_view(), name="api-explain"),
    re_path(
        P + r"/mcp-sessions/$", mcp_sessions.McpSessionCreate.as_view(), name="api-mcp-sessions"
    ),
    # The provider map; a name may contain slashes (`workstation/agent-baseline`).
    re_path(T + r"/providers/$", providers.ProviderList.as_view(), name="api-providers"),
    re_path(
        T + r"/providers/(?P<name>[\s\S]+)$",
        providers.ProviderDetail.as_view(),
        name="api-provider",
    ),
    # Binding records.
    re_path(
        P + r"/repositories/$",
        repositories.RepositoryListReport.as_view(),
        name="api-repositories",
    ),
    re_path(
        P + r"/repositories/(?P<repository_id>[^/]+)$",
        repositories.RepositoryDetail.as_view(),
        name="api-repository",
    ),
    re_path(
        P + r"/repositories/(?P<repository_id>[^/]+)/checks/$",
        repositories.RepositoryCheckList.as_view(),
        name="api-repository-checks",
    ),
    re_path(
        P + r"/repositories/(?P<repository_id>[^/]+)/runs/$",
        repositories.RepositoryRunList.as_view(),
        name="api-repository-runs",
    ),
    re_path(P + r"/bindings/$", bindings.BindingListCreate.as_view(), name="api-bindings"),
    # The runs timeline (issue 15); before BINDING, which would take `timeline` for an id.
    re_path(
        P + r"/bindings/timeline$", bindings.BindingTimeline.as_view(), name="api-binding-timeline"
    ),
    re_path(P + BINDING + r"$", bindings.BindingDetail.as_view(), name="api-binding"),
    re_path(
        P + BINDING + r"/outdated$", bindings.BindingOutdated.as_view(), name="api-binding-outdated"
    ),
    re_path(
        P + BINDING + r"/compare/(?P<other>[^/]+)$",
        bindings.BindingCompare.as_view(),
        name="api-binding-compare",
    ),
    re_path(
        P + BINDING + r"/reconstruct$",
        bindings.BindingReconstruct.as_view(),
        name="api-binding-reconstruct",
    ),
    # Import: a repository's agent files become documents.
    re_path(P + r"/import/$", imports.ProjectImport.as_view(), name="api-import"),
    re_path(P + r"/propose/$", imports.ProjectPropose.as_view(), name="api-propose"),
    # Activity and history: the tenant's feed, and the history of each setting (a
    # project's with `?project=`), recipe, membership and provider map entry.
    re_path(T + r"/activity/$", activity.ActivityList.as_view(), name="api-activity"),
    re_path(
        T + r"/history/settings/(?P<key>[^/]+)$",
        history.SettingHistory.as_view(),
        name="api-setting-history",
    ),
    re_path(
        T + r"/history/recipes/(?P<name>[^/]+)$",
        history.RecipeHistory.as_view(),
        name="api-recipe-history",
    ),
    re_path(
        T + r"/history/members/(?P<username>[^/]+)$",
        history.MembershipHistory.as_view(),
        name="api-membership-history",
    ),
    re_path(
        T + r"/history/providers/(?P<name>[\s\S]+)$",
        history.ProviderHistory.as_view(),
        name="api-provider-history",
    ),
    # Change requests (issue 13): propose, review, merge.
    re_path(P + r"/changes/$", changes.ChangeListCreate.as_view(), name="api-changes"),
    re_path(P + CHANGE + r"$", changes.ChangeDetail.as_view(), name="api-change"),
    re_path(P + CHANGE + r"/diff$", changes.ChangeDiff.as_view(), name="api-change-diff"),
    re_path(
        P + CHANGE + r"/reviews$", changes.ChangeReviewCreate.as_view(), name="api-change-reviews"
    ),
    re_path(P + CHANGE + r"/merge$", changes.ChangeMerge.as_view(), name="api-change-merge"),
    re_path(
        P + CHANGE + r"/withdraw$", changes.ChangeWithdraw.as_view(), name="api-change-withdraw"
    ),
    re_path(
        P + CHANGE + r"/comments$",
        changes.ChangeCommentCreate.as_view(),
        name="api-change-comments",
    ),
    # Webhooks (tenant admins): subscriptions, their delivery log, test and redeliver.
    re_path(T + r"/webhooks/$", webhooks.WebhookList.as_view(), name="api-webhooks"),
    re_path(
        T + r"/webhooks/(?P<webhook_id>[^/]+)$",
        webhooks.WebhookDetail.as_view(),
        name="api-webhook",
    ),
    re_path(
        T + r"/webhooks/(?P<webhook_id>[^/]+)/test$",
        webhooks.WebhookTest.as_view(),
        name="api-webhook-test",
    ),
    re_path(
        T + r"/webhooks/(?P<webhook_id>[^/]+)/deliveries/$",
        webhooks.DeliveryList.as_view(),
        name="api-webhook-deliveries",
    ),
    re_path(
        T + r"/webhooks/(?P<webhook_id>[^/]+)/deliveries/(?P<delivery_id>[^/]+)/redeliver$",
        webhooks.DeliveryRedeliver.as_view(),
        name="api-webhook-redeliver",
    ),
    # Search (issue 15): the tenant's current documents, by words of body and path.
    re_path(T + r"/search/$", search.Search.as_view(), name="api-search"),
    re_path(T + r"/audit/verify$", audit.AuditVerify.as_view(), name="api-audit-verify"),
    re_path(T + r"/audit/export$", audit.AuditExport.as_view(), name="api-audit-export"),
    re_path(
        T + r"/audit/exports/(?P<export>[^/]+)$",
        audit.AuditExportStatus.as_view(),
        name="api-audit-export-status",
    ),
    re_path(
        T + r"/audit/exports/(?P<export>[^/]+)/download$",
        audit.AuditExportDownload.as_view(),
        name="api-audit-export-download",
    ),
    re_path(
        T + r"/audit/verifications/(?P<verification>[^/]+)$",
        audit.AuditVerificationStatus.as_view(),
        name="api-audit-verification",
    ),
    # KEEP LAST: anything else under /api/v1/ (a newline included) is a JSON 404, not an
    # HTML page. Add new routes above this line.
    re_path(r"^[\s\S]*$", json_not_found),
]
