"""`manage.py seed_demo`: the demo data's shape, its printed credentials, re-runs."""

from __future__ import annotations

import json
import re
from io import StringIO

import pytest
from django.contrib.auth import authenticate, get_user_model
from django.core.management import call_command
from django.http import HttpRequest
from rest_framework.test import APIClient

from agentdocs.core.memory_block import UNCHANGED_STUBS
from agentdocs.models import (
    ApiToken,
    BindingRecord,
    Document,
    Membership,
    Project,
    ProviderMapping,
    Recipe,
    Role,
    Setting,
    Tenant,
)
from agentdocs.services import documents as document_service
from agentdocs.services import tokens as token_service

pytestmark = pytest.mark.django_db

_CREDENTIAL = re.compile(r"^\s+(\w+)\s+password: (\S+)", re.M)
_TOKEN = re.compile(r"^API token for admin: (\w+)$", re.M)


def parse_credentials(output: str) -> dict[str, str]:
    """The ``username -> password`` pairs seed_demo prints."""
    return dict(_CREDENTIAL.findall(output))


def parse_token(output: str) -> str:
    match = _TOKEN.search(output)
    assert match, output
    return match.group(1)


def seed() -> str:
    out = StringIO()
    call_command("seed_demo", stdout=out)
    return out.getvalue()


def project(slug: str) -> Project:
    return Project.objects.get(tenant__slug="demo", slug=slug)


def counts() -> dict[str, int]:
    return {
        "users": get_user_model().objects.count(),
        "tenants": Tenant.objects.count(),
        "projects": Project.objects.count(),
        "memberships": Membership.objects.count(),
        "documents": Document.objects.count(),
        "document_versions": Document.history.count(),
        "settings": Setting.objects.count(),
        "recipes": Recipe.objects.count(),
        "tokens": ApiToken.objects.count(),
        "providers": ProviderMapping.objects.count(),
        "binding_records": BindingRecord.objects.count(),
    }


def test_seed_creates_the_demo_tenant_with_its_users_and_roles():
    seed()

    roles = dict(
        Membership.objects.filter(tenant__slug="demo").values_list("user__username", "role")
    )
    assert roles == {"admin": Role.ADMIN, "writer": Role.WRITER, "reader": Role.READER}
    assert sorted(Project.objects.filter(tenant__slug="demo").values_list("slug", flat=True)) == [
        "_vance",
        "backend",
        "website",
    ]


def test_website_agent_md_has_three_versions_by_different_users_with_reasons():
    seed()

    document = Document.objects.get(project=project("website"), path="agent.md")
    history = list(document.history.order_by("version"))
    assert document.version >= 3 and len(history) == document.version
    assert len({record.history_user.username for record in history}) >= 2
    assert all(record.history_change_reason for record in history)
    assert [record.version for record in history] == list(range(1, document.version + 1))


def test_backend_inherits_the_tenant_wide_agent_md():
    seed()

    assert not Document.objects.filter(project=project("backend"), path="agent.md").exists()
    vance = Document.objects.get(project=project("_vance"), path="agent.md")
    assert vance.body.startswith("# ") and not vance.is_deleted


def test_website_has_its_agents_context_documents():
    seed()

    paths = set(
        Document.objects.filter(
            project=project("website"), path__startswith=".AGENTS/"
        ).values_list("path", flat=True)
    )
    assert paths >= {".AGENTS/overview.md", ".AGENTS/conventions.md", ".AGENTS/glossary.md"}


def test_every_seeded_document_is_short_and_was_written_through_the_service():
    seed()

    for document in Document.objects.all():
        assert document.sha256 == document_service.sha256_of(document.body)
        assert document.history.count() == document.version
        assert len(document.body.splitlines()) <= 40, f"{document.path} is over one screen"


def test_settings_are_memory_policy_with_one_enforced_tenant_setting():
    seed()

    settings = Setting.objects.filter(tenant__slug="demo")
    assert settings.exists()
    assert all(setting.key.startswith("memory.") for setting in settings)
    assert settings.filter(project=None, enforced=True).count() == 1


def test_recipes_keep_their_params_exactly_as_given():
    seed()

    recipes = {recipe.name: recipe for recipe in Recipe.objects.filter(tenant__slug="demo")}
    assert recipes["coder"].params == {}
    assert recipes["coder"].profiles == {"cli": {"useClientAgentDoc": True}}
    assert recipes["summarizer"].params == {"agentDocument": ""}


def test_printed_credentials_and_token_work():
    output = seed()

    credentials = parse_credentials(output)
    assert set(credentials) == {"admin", "writer", "reader"}
    for username, password in credentials.items():
        # The sign-in throttle (django-axes) counts attempts per request: give it one.
        assert authenticate(HttpRequest(), username=username, password=password), username
    admin = get_user_model().objects.get(username="admin")
    assert admin.is_superuser and admin.is_staff
    key = parse_token(output)
    assert ApiToken.objects.get(key_hash=token_service.hash_key(key)).user == admin


def test_a_second_run_changes_nothing_and_prints_the_same_credentials():
    first = seed()
    before = counts()

    second = seed()

    assert counts() == before
    assert parse_credentials(second) == parse_credentials(first)
    assert parse_token(second) == parse_token(first)


def test_a_rerun_keeps_edits_made_in_the_demo_and_restores_the_passwords():
    seed()
    writer = get_user_model().objects.get(username="writer")
    document = Document.objects.get(project=project("website"), path="agent.md")
    edited = document_service.document_write(
        document=document,
        body=document.body + "\n- One more rule.\n",
        base_version=document.version,
        user=writer,
        reason="Edited in the demo",
    ).document
    writer.set_password("changed-by-hand")
    writer.save()

    output = seed()

    document.refresh_from_db()
    assert (document.version, document.body) == (edited.version, edited.body)
    password = parse_credentials(output)["writer"]
    assert authenticate(HttpRequest(), username="writer", password=password) is not None


def test_a_deleted_demo_document_is_not_brought_back(django_user_model):
    seed()
    admin = django_user_model.objects.get(username="admin")
    glossary = Document.objects.get(project=project("website"), path=".AGENTS/glossary.md")
    document_service.document_delete(
        document=glossary, base_version=glossary.version, user=admin, reason="Not needed"
    )

    seed()

    glossary.refresh_from_db()
    assert glossary.is_deleted


def test_the_demo_has_a_manifest_a_provider_map_and_one_clean_binding_record():
    seed()

    assert set(ProviderMapping.objects.values_list("name", flat=True)) == {
        "workstation/agent-baseline",
        "skill/handoff",
    }
    assert Document.objects.filter(project=project("website"), path="context.json").exists()
    [record] = BindingRecord.objects.filter(project=project("website"))
    assert record.process == "demo-run-1"
    assert record.problem_count == 0, record.record["problems"]
    assert record.memory_block_sha256
    [exception] = record.record["exceptions"]
    assert exception["outcome"] == "narrowed"


def test_the_printed_api_call_names_where_the_demo_is_served(db):
    out = StringIO()
    call_command("seed_demo", "--base-url", "http://127.0.0.1:8765/", stdout=out)
    curl = next(line for line in out.getvalue().splitlines() if "curl" in line)
    assert "http://127.0.0.1:8765/api/v1/tenants/demo/projects/website/documents/agent.md" in curl


def _printed_renders(output: str) -> tuple[dict, list[str]]:
    """The printed curl render's JSON body and the printed `agentdocs block` command."""
    lines = output.splitlines()
    curl = next(line for line in lines if "memory-block/" in line and line.startswith("  curl"))
    body = json.loads(re.search(r"-d '([^']*)'", curl).group(1))
    block = next(line for line in lines if line.startswith("  agentdocs block")).split()
    return body, block


def test_each_printed_render_names_a_process_of_its_own():
    body, block = _printed_renders(seed())

    cli_process = block[block.index("--process") + 1]
    assert body["process"] and cli_process
    assert body["process"] != cli_process


def test_the_printed_cli_render_after_the_printed_curl_is_sent_in_full():
    """The printed curl, then the printed `agentdocs block` (the same request the CLI
    sends), with the printed token: the second is a first turn, not stubs."""
    output = seed()
    body, block = _printed_renders(output)
    cli_process = block[block.index("--process") + 1]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {parse_token(output)}")
    url = "/api/v1/tenants/demo/projects/website/memory-block/"
    stubs = tuple(UNCHANGED_STUBS.values())

    renders = [
        client.post(url, {**body, "process": process}, format="json", HTTP_ACCEPT="text/plain")
        for process in (body["process"], cli_process)
    ]

    for response in renders:
        assert response.status_code == 200, response.content
        text = response.content.decode()
        assert "Components are PascalCase" in text
        assert not any(stub in text for stub in stubs), text
    # The same process again is the second turn: its read state sends stubs.
    again = client.post(url, body, format="json", HTTP_ACCEPT="text/plain").content.decode()
    assert any(stub in again for stub in stubs)
