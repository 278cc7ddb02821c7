"""Protected documents: the gate every direct write of a document passes
(`review_gate`, called by `services.documents`); the review policy it reads is
`selectors.review`.

A path the `review.required` patterns protect is changed through a change request
(`services.changes`); a direct write answers 409 `review_required` (the faces add the URL to
propose at). A tenant admin may write it anyway with ``bypass_review`` and a reason;
the history row says so (`review_bypassed`).

The tenant's value applies unless the project sets its own; an enforced tenant value
applies everywhere (a project cannot set an enforced key).
"""

from __future__ import annotations

from agentdocs.core import review as review_rules
from agentdocs.core.errors import InvalidInput, ReviewRequired
from agentdocs.models import Project
from agentdocs.selectors import review as review_selectors


def review_gate(
    *, project: Project, path: str, bypass_review: bool, reason: str, field: str = "path"
) -> bool:
    """Let a direct write of ``path`` through, or raise `ReviewRequired`.

    Returns whether the write bypasses review (for its history row). ``bypass_review``
    on a path nothing protects changes nothing and is not recorded. Who may ask to
    bypass is decided before the write, by `Access.require_bypass_review` in the view
    (`permissions.document_for`): a service is handed a request already allowed.
    ``field`` is the input the refusal names (a skill's is its `name`)."""
    if not isinstance(bypass_review, bool):
        raise InvalidInput("`bypass_review` is true or false.", field="bypass_review")
    if not review_selectors.review_required(project=project, path=path):
        return False
    if not bypass_review:
        raise ReviewRequired(
            f"{path} is protected by `{review_rules.REVIEW_REQUIRED_KEY}`: propose a change "
            "for review instead (a tenant admin may bypass review with a reason).",
            field=field,
            tenant=project.tenant.slug,
            project=project.slug,
        )
    if not reason:
        raise InvalidInput(
            "Bypassing review needs a reason: say why this change cannot wait for one.",
            field="reason",
        )
    return True
