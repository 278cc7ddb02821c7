"""Import, skills, the write: the steps of an import's plan that create or update a
skill (`agentdocs.selectors.skill_imports` makes the plan and checks each bundle),
through the one write path behind the review gate of `services.skill_review` (under
`review.required`, 409); a refusal names the file and nothing is imported.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.contrib.auth.models import User

from agentdocs.core.errors import AgentdocsError
from agentdocs.models import Project
from agentdocs.selectors.skill_imports import SkillStep, refused
from agentdocs.services import skill_review


def skill_import_apply(
    steps: Sequence[SkillStep], *, project: Project, user: User, reason: str
) -> None:
    """Write the steps that create or update a skill (the caller's transaction)."""
    for step in steps:
        why = f"{reason}; imported from {step.source}" if reason else f"imported from {step.source}"
        try:
            # Through the review gate, as an imported document: a skill under
            # `review.required` is 409 `review_required` and nothing is imported.
            if step.action == "create":
                skill_review.skill_create_request(
                    project=project, name=step.name, files=step.files, user=user, reason=why
                )
            elif step.action == "update":
                assert step.current is not None
                skill_review.skill_write_request(
                    skill=step.current,
                    files=step.files,
                    base_version=step.current.version,
                    user=user,
                    reason=why,
                )
        except AgentdocsError as refusal:
            if not (refusal.field or "").startswith("files/"):
                raise
            raise refused(refusal, step.source, step.indexes) from None
