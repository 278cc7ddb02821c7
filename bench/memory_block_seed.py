"""Seed the benchmark database and print the API token as JSON.

Run by `bench/common.py` (`migrate_and_seed`) with the app's environment (DATABASE_URL,
SECRET_KEY, ...) and optionally the tenant's slug (default `bench`); not meant to be
run by hand. Every document goes through
the one write path, like any other client's.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402

from agentdocs.models import Role  # noqa: E402
from agentdocs.services import documents as document_service  # noqa: E402
from agentdocs.services import policy as policy_service  # noqa: E402
from agentdocs.services import tenancy as tenant_service  # noqa: E402
from agentdocs.services import tokens as token_service  # noqa: E402


def paragraph(topic: str, lines: int) -> str:
    return "".join(
        f"- {topic} rule {n}: keep changes small, name things plainly, write the test first.\n"
        for n in range(lines)
    )


def signed_in_session(user) -> str:
    """The key of a new session signed in as ``user``, for the benchmarks' page requests."""
    from importlib import import_module

    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY

    session = import_module(settings.SESSION_ENGINE).SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.create()
    return session.session_key


def main() -> None:
    slug = sys.argv[1] if len(sys.argv) > 1 else "bench"
    users = get_user_model()
    admin = users.objects.create_user(username=f"{slug}-admin", password=None)
    agent = users.objects.create_user(username=f"{slug}-agent", password=None)
    tenant = tenant_service.tenant_create(slug=slug, name=slug.title(), user=admin)
    tenant_service.membership_set(
        tenant=tenant, username=agent.username, role=Role.READER, actor=admin
    )
    project = tenant_service.project_create(tenant=tenant, slug="web", name="Web", user=admin)
    vance = tenant.projects.get(slug="_vance")

    def write(target, path: str, body: str) -> None:
        document_service.document_create(
            project=target, path=path, body=body, user=admin, reason="benchmark seed"
        )

    write(vance, "agent.md", "# House rules (tenant)\n\n" + paragraph("tenant", 20))
    write(project, "agent.md", "# House rules (web)\n\n" + paragraph("project", 30))
    for name in ("overview", "conventions", "glossary", "api", "deploy", "security", "testing"):
        write(project, f".AGENTS/{name}.md", f"# {name}\n\n" + paragraph(name, 25))
    write(project, ".AGENTS/archive/old.md", "nested: never loaded\n")
    # The project's override comes first: once the tenant enforces the key, a project
    # can no longer set it, and the render's account lists the override as refused.
    policy_service.setting_set(
        tenant=tenant, project=project, key="memory.tone", value="casual", user=admin
    )
    for key, value in {
        "memory.language": "en",
        "memory.tone": "plain",
        "memory.retention": "30d",
    }.items():
        policy_service.setting_set(
            tenant=tenant,
            project=None,
            key=key,
            value=value,
            enforced=key == "memory.tone",
            user=admin,
        )
    policy_service.recipe_create(
        tenant=tenant,
        name="coder",
        params={"contextBudgetBytes": 32768},
        profiles={"cli": {"useClientAgentDoc": True}},
        user=admin,
    )
    key = token_service.token_create(user=agent, name="bench", scopes=["render"]).key
    print(
        json.dumps(
            {
                "token": key,
                "tenant": tenant.slug,
                "project": project.slug,
                "document": "agent.md",
                "session": signed_in_session(agent),
            }
        )
    )


if __name__ == "__main__":
    main()
