"""Labels of skills: a name (`production`, `canary`, ...) pointing at one version of a
skill, as `DocumentLabel` is of a document (both hold what `Label` declares).

`latest` is implicit (the newest version) and never stored. A label is moved and
removed only through `agentdocs.services.skill_labels`; every move is a history row
(who, why, which version) in the tenant's hash chain, like a skill write.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from agentdocs.models.labels import Label
from agentdocs.models.skills import Skill


class SkillLabel(Label):
    """The version of ``skill`` that readers asking for ``name`` get."""

    skill = models.ForeignKey(Skill, on_delete=models.CASCADE, related_name="labels")

    class Meta(Label.Meta):
        constraints = [
            models.UniqueConstraint(fields=["skill", "name"], name="skill_label_unique"),
            models.CheckConstraint(condition=Q(version__gte=1), name="skill_label_version"),
        ]

    def __str__(self) -> str:
        return f"{self.skill_id}:{self.name}@{self.version}"

    @property
    def chain_tenant_id(self) -> int:
        """The tenant whose hash chain the label's history rows join: its skill's
        project's (the service moves a label with the skill and project at hand)."""
        return self.skill.project.tenant_id
