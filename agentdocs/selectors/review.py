"""The review policy of a project: the `review.*` settings in force (the paths
`review.required` protects, the approvals a merge needs, the labels
`review.protectedLabels` reserves for reviewers, whether a merge needs eval results
and how much worse they may be), read in one query.

The tenant's value applies unless the project sets its own; an enforced tenant value
applies everywhere (a project cannot set an enforced key).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from django.db.models import Q

from agentdocs.core import evals as eval_rules
from agentdocs.core import labels
from agentdocs.core import review as review_rules
from agentdocs.core.errors import InvalidInput
from agentdocs.models import Project, Setting


@dataclass(frozen=True)
class ReviewPolicy:
    patterns: tuple[str, ...]
    project_scope: bool  # the patterns are the project's own
    approvals: int
    protected_labels: tuple[str, ...] = labels.DEFAULT_PROTECTED_LABELS
    # `review.requireEvals` and `review.maxRegression` (`agentdocs.core.evals`).
    require_evals: bool = False
    max_regression: float = eval_rules.DEFAULT_MAX_REGRESSION

    def protects(self, *, project: Project, path: str) -> bool:
        return review_rules.is_protected(
            self.patterns, project_slug=project.slug, path=path, project_scope=self.project_scope
        )


def review_policy(*, project: Project) -> ReviewPolicy:
    """The `review.*` settings in force for the project, in one query."""
    rows = list(
        Setting.objects.filter(tenant_id=project.tenant_id, key__in=review_rules.REVIEW_KEYS)
        .filter(Q(project=None) | Q(project=project))
        .values_list("key", "value", "enforced", "project_id")
    )

    def in_force(key: str) -> tuple[str, bool] | None:
        tenant = next((r for r in rows if r[0] == key and r[3] is None), None)
        own = next((r for r in rows if r[0] == key and r[3] is not None), None)
        if own is not None and not (tenant is not None and tenant[2]):
            return own[1], True
        return (tenant[1], False) if tenant is not None else None

    patterns: list[str] = []
    project_scope = False
    required = in_force(review_rules.REVIEW_REQUIRED_KEY)
    if required is not None:
        try:
            patterns = review_rules.parse_patterns(required[0])
        except InvalidInput:
            patterns = []  # stored before validation existed: nothing it names is protected
        project_scope = required[1]
    approvals = review_rules.DEFAULT_APPROVALS
    counted = in_force(review_rules.REVIEW_APPROVALS_KEY)
    if counted is not None:
        with contextlib.suppress(InvalidInput):  # stored before validation existed
            approvals = review_rules.parse_approvals(counted[0])
    protected_labels = labels.DEFAULT_PROTECTED_LABELS
    named = in_force(review_rules.REVIEW_PROTECTED_LABELS_KEY)
    if named is not None:
        with contextlib.suppress(InvalidInput):  # stored before validation existed
            protected_labels = tuple(labels.parse_protected_labels(named[0]))
    require_evals = False
    named = in_force(review_rules.REVIEW_REQUIRE_EVALS_KEY)
    if named is not None:
        with contextlib.suppress(InvalidInput):
            require_evals = eval_rules.parse_require_evals(named[0])
    max_regression = eval_rules.DEFAULT_MAX_REGRESSION
    named = in_force(review_rules.REVIEW_MAX_REGRESSION_KEY)
    if named is not None:
        with contextlib.suppress(InvalidInput):
            max_regression = eval_rules.parse_max_regression(named[0])
    return ReviewPolicy(
        patterns=tuple(patterns),
        project_scope=project_scope,
        approvals=approvals,
        protected_labels=protected_labels,
        require_evals=require_evals,
        max_regression=max_regression,
    )


def review_required(*, project: Project, path: str) -> bool:
    return review_policy(project=project).protects(project=project, path=path)


def review_required_for(*, project: Project, path: str, may_bypass_review: bool) -> bool:
    """Whether a change of ``path`` (a document's, or a skill's `skills/<name>`) by a
    member goes through a change request: the path is under `review.required` and the
    member may not bypass review (`Access.may_bypass_review`). The one gate of label
    moves and removals and of skill writes."""
    return not may_bypass_review and review_required(project=project, path=path)
