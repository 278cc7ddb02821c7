"""Page URLs. Tenant-level pages sit under `/t/<tenant>/-/` because `-` can never be a
project slug; project pages under `/t/<tenant>/<project>/`. Document paths may contain
slashes, so each document action has its own prefix before the path."""

from django.contrib.auth import views as auth_views
from django.urls import URLPattern, URLResolver, include, path

from agentdocs.web.views import (
    activity,
    bindings,
    changes,
    docs,
    document_history,
    document_merge,
    documents,
    explain,
    export,
    history,
    invitations,
    labels,
    memory_block,
    policy,
    repositories,
    search,
    tenancy,
    tokens,
    webhooks,
)

document_urls = [
    path("doc/<path:path>", documents.document_detail, name="document"),
    path("edit/<path:path>", documents.document_edit, name="document-edit"),
    path("history/<path:path>", document_history.document_history, name="document-history"),
    path("diff/<path:path>", document_history.document_diff, name="document-diff"),
    path(
        "diff-download/<path:path>",
        document_history.document_diff_download,
        name="document-diff-download",
    ),
    path("revert/<path:path>", document_history.document_revert, name="document-revert"),
    path("delete/<path:path>", documents.document_delete, name="document-delete"),
    path("lock/<path:path>", documents.document_lock, name="document-lock"),
    path("label/<path:path>", labels.document_label, name="document-label"),
    path("label-remove/<path:path>", labels.document_label_remove, name="document-label-remove"),
    # Three-way merge: saving the choices of a stale save's conflicts.
    path("resolve/<path:path>", document_merge.document_resolve, name="document-resolve"),
]

project_urls = [
    path("", tenancy.project_detail, name="project"),
    path("new/", documents.document_create, name="document-create"),
    path("preview/", documents.markdown_preview, name="markdown-preview"),
    path("settings/", policy.project_settings, name="project-settings"),
    path("memory-block/", memory_block.memory_block_preview, name="memory-block"),
    path("export/", export.export_page, name="export"),
    path("explain/", explain.explain_page, name="explain"),
    path("bindings/", bindings.binding_list, name="bindings"),
    path("bindings/compare/", bindings.binding_compare, name="binding-compare"),
    # The runs timeline (issue 15).
    path("runs/", bindings.binding_runs, name="runs"),
    path("repositories/", repositories.repository_list, name="repositories"),
    path(
        "repositories/<int:repository_id>/",
        repositories.repository_detail,
        name="repository",
    ),
    path("bindings/<int:record_id>/", bindings.binding_detail, name="binding"),
    path(
        "bindings/<int:record_id>/reconstruct/",
        bindings.binding_reconstruct,
        name="binding-reconstruct",
    ),
    # Change requests (issue 13).
    path("changes/new/", changes.change_propose, name="change-propose"),
    path("changes/<int:change_id>/", changes.change_detail, name="change"),
    path("changes/<int:change_id>/diff/", changes.change_diff_download, name="change-diff"),
    path("changes/<int:change_id>/review/", changes.change_review, name="change-review"),
    path("changes/<int:change_id>/merge/", changes.change_merge, name="change-merge"),
    path("changes/<int:change_id>/withdraw/", changes.change_withdraw, name="change-withdraw"),
    path("changes/<int:change_id>/comment/", changes.change_comment, name="change-comment"),
    *document_urls,
]

tenant_urls: list[URLPattern | URLResolver] = [
    path("", tenancy.tenant_detail, name="tenant"),
    path("-/settings/", policy.tenant_settings, name="tenant-settings"),
    path("-/changes/", changes.change_inbox, name="changes"),  # change requests (issue 13)
    path("-/recipes/", policy.recipe_list, name="recipes"),
    path("-/recipes/new/", policy.recipe_create, name="recipe-create"),
    path("-/recipes/<str:name>/", policy.recipe_detail, name="recipe"),
    path("-/recipes/<str:name>/delete/", policy.recipe_delete, name="recipe-delete"),
    # Activity and history: the tenant's feed, and the history of each setting (a
    # project's with `?project=`), recipe, membership and provider map entry.
    path("-/activity/", activity.activity, name="activity"),
    path("-/history/settings/<str:key>/", history.setting_history, name="setting-history"),
    path("-/history/recipes/<str:name>/", history.recipe_history, name="recipe-history"),
    path(
        "-/history/members/<str:username>/",
        history.membership_history,
        name="membership-history",
    ),
    path("-/history/providers/<path:name>/", history.provider_history, name="provider-history"),
    # Webhooks (tenant admins): the list and create form, each webhook and its log.
    path("-/webhooks/", webhooks.webhook_list, name="webhooks"),
    path("-/webhooks/<int:webhook_id>/", webhooks.webhook_detail, name="webhook"),
    path("-/webhooks/<int:webhook_id>/test/", webhooks.webhook_test, name="webhook-test"),
    path("-/webhooks/<int:webhook_id>/rotate/", webhooks.webhook_rotate, name="webhook-rotate"),
    path("-/webhooks/<int:webhook_id>/delete/", webhooks.webhook_delete, name="webhook-delete"),
    path(
        "-/webhooks/<int:webhook_id>/deliveries/<int:delivery_id>/redeliver/",
        webhooks.delivery_redeliver,
        name="webhook-redeliver",
    ),
    # Search (issue 15): the tenant's documents by the words of body and path.
    path("-/search/", search.search_page, name="search"),
    path("<slug:project>/", include(project_urls)),
]

urlpatterns = [
    path("", tenancy.home, name="home"),
    path(
        "login/",
        auth_views.LoginView.as_view(redirect_authenticated_user=True),
        name="login",
    ),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("tokens/", tokens.token_list, name="tokens"),
    path("tokens/<int:token_id>/revoke/", tokens.token_revoke, name="token-revoke"),
    path(
        "invitations/<int:invitation_id>/accept/",
        invitations.invitation_accept,
        name="invitation-accept",
    ),
    path(
        "invitations/<int:invitation_id>/decline/",
        invitations.invitation_decline,
        name="invitation-decline",
    ),
    # The documentation (docs/*.md), public and served with no internet.
    path("docs/", docs.docs_index, name="docs"),
    path("docs/screenshots/<str:name>", docs.docs_screenshot, name="docs-screenshot"),
    path("docs/<slug:page>/", docs.docs_page, name="docs-page"),
    path("t/<slug:tenant>/", include(tenant_urls)),
]
