"""A skill's bundle as a write takes it: checked against the specification, the
secret, hidden-character and look-alike checks every stored text gets
(`agentdocs.core.skills.check_skill`), under the configured caps."""

from __future__ import annotations

from django.conf import settings

from agentdocs.core.skills import CheckedSkill, check_skill


def skill_check(*, name: str, files: object) -> CheckedSkill:
    """``files`` checked as the skill ``name``'s bundle, under the configured caps."""
    return check_skill(
        name=name,
        files=files,
        max_file_bytes=settings.AGENTDOCS_SKILL_MAX_FILE_BYTES,
        max_bytes=settings.AGENTDOCS_SKILL_MAX_BYTES,
    )
