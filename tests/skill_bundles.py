"""Skills' tests: a `SKILL.md` as the specification writes it, and the API's paths."""

from __future__ import annotations

import pytest

DEFAULT_BODY = "# Steps\n\n1. Write it down.\n"


def skill_md(
    name: str, description: str = "Hand work over to the next session.", body: str = ""
) -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body or DEFAULT_BODY}"


def skills_url(project: str = "web", tenant: str = "acme") -> str:
    return f"/api/v1/tenants/{tenant}/projects/{project}/skills/"


def skill_url(name: str, project: str = "web", tenant: str = "acme", rest: str = "") -> str:
    return f"/api/v1/tenants/{tenant}/projects/{project}/skills/{name}{rest}"


@pytest.fixture
def bundle():
    """A skill's files: `SKILL.md` and a script."""

    def make(name: str = "handoff", **files: str) -> dict[str, str]:
        return {"SKILL.md": skill_md(name), "scripts/run.sh": "#!/bin/sh\necho handoff\n", **files}

    return make
