"""Load the demo tenant: users, projects, versioned documents, settings, recipes.

Re-runnable: what exists is left as it is (edits made in the demo survive), what
is missing is created, and the demo users' passwords are reset to the ones
printed. Every write goes through the services, like any other client's.
"""

from __future__ import annotations

import argparse
import base64
import secrets
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand
from django.db import transaction
from django.utils.crypto import salted_hmac

from agentdocs.core.errors import NotFound
from agentdocs.core.recipes import ProfileOptions, RecipeParams
from agentdocs.models import (
    RESERVED_PROJECT,
    ApiToken,
    BindingRecord,
    ChangeType,
    Project,
    ProviderMapping,
    Recipe,
    Role,
    Scope,
    Setting,
    Tenant,
)
from agentdocs.models.history import mark_change
from agentdocs.selectors import documents as document_selectors
from agentdocs.selectors.binding_memory_block import MemoryBlockRequest
from agentdocs.services import bindings as binding_service
from agentdocs.services import documents as document_service
from agentdocs.services import policy as policy_service
from agentdocs.services import providers as provider_service
from agentdocs.services import tenancy as tenant_service
from agentdocs.services import tokens as token_service

TENANT_SLUG = "demo"
TENANT_NAME = "Demo Co"


@dataclass(frozen=True)
class DemoUser:
    username: str
    role: Role
    description: str


DEMO_USERS = [
    DemoUser("admin", Role.ADMIN, "tenant admin, Django superuser (/admin/)"),
    DemoUser("writer", Role.WRITER, "writer: edits documents in projects"),
    DemoUser("reader", Role.READER, "reader: reads everything in the tenant"),
]

PROJECTS = [("website", "Website"), ("backend", "Backend")]
DEMO_PROJECT = "website"  # the project the printed examples and the README's use
# Where the printed `agentdocs sync` writes: the user's temporary folder, not the
# checkout the demo runs from (it would leave an untracked folder there).
SYNC_FOLDER = "${TMPDIR:-/tmp}/agentdocs-demo-" + DEMO_PROJECT
# One process id per printed render: the read state of a process sends what it already
# received as stubs, so a second command with the first one's id would show stubs. The
# read state outlives a restart of the demo (the default cache is on disk), so each
# start prints new ids: `try-curl-<hex>`, `try-cli-<hex>`.
TRY_IT_PROCESSES = ("curl", "cli")


def try_it_processes() -> dict[str, str]:
    run = secrets.token_hex(3)
    return {name: f"try-{name}-{run}" for name in TRY_IT_PROCESSES}


VANCE_AGENT_MD = """\
# Demo Co house rules

These apply in every project of the `demo` tenant that has no `agent.md` of its own.

## How we work
- Plain English, short sentences, no marketing tone.
- Say what you changed and why, in the commit message and in your report.
- Ask before deleting anything you did not create in this session.

## Reports
- Start with the outcome in one line, then the details.
- Name files by their path from the project root.

## Never
- No credentials in documents, code or reports: name the vault path instead.
- Nothing goes to `export/` before a person has reviewed it: that folder goes to customers.
"""

WEBSITE_AGENT_MD_VERSIONS = [
    (
        "writer",
        "First house rules for the website",
        """\
# Website agent notes

The marketing site and the customer docs, built with Astro and deployed from `main`.

## Conventions
- Pages live in `src/pages/`, one folder per section.
- Components are PascalCase, one per file, in `src/components/`.
""",
    ),
    (
        "admin",
        "Add the tone rules and the downloads rule after the March release",
        """\
# Website agent notes

The marketing site and the customer docs, built with Astro and deployed from `main`.

## Conventions
- Pages live in `src/pages/`, one folder per section.
- Components are PascalCase, one per file, in `src/components/`.

## Tone
- Customer-facing text: second person, present tense, no exclamation marks.

## Hard rules
- `public/downloads/` is served to customers as it is: no drafts there.
""",
    ),
    (
        "writer",
        "Document the preview and check commands",
        """\
# Website agent notes

The marketing site and the customer docs, built with Astro and deployed from `main`.

## Conventions
- Pages live in `src/pages/`, one folder per section.
- Components are PascalCase, one per file, in `src/components/`.
- Images go to `src/assets/` as WebP, at most 200 KB each.

## Tone
- Customer-facing text: second person, present tense, no exclamation marks.

## Commands
- `npm run dev` serves a preview at http://localhost:4321.
- `npm run check` must pass before you hand work back.

## Hard rules
- `public/downloads/` is served to customers as it is: no drafts there.
""",
    ),
]

WEBSITE_AGENTS_DOCS = [
    (
        ".AGENTS/overview.md",
        """\
# Overview

The Demo Co website: marketing pages, customer docs and the changelog.

- `src/pages/` holds one folder per section (`product/`, `docs/`, `changelog/`).
- `src/content/docs/` holds the customer docs as Markdown, one file per topic.
- `public/` is copied to the site unchanged.
""",
    ),
    (
        ".AGENTS/conventions.md",
        """\
# Conventions

## Files
- Read files with the file tools, not through the shell.
- Paths are from the repository root; never assume the working directory or use `~`.

## Changes
- One topic per change; keep unrelated fixes for another change.
- Docs pages keep their front matter: `title`, `description`, `updated`.
- Run `npm run check` before handing work back and quote its last line.
""",
    ),
    (
        ".AGENTS/glossary.md",
        """\
# Glossary

- **Workspace**: what a customer signs up for; one per company.
- **Seat**: one named user in a workspace; billing counts seats.
- **Release note**: the customer-facing entry in `changelog/`, written after a release ships.
""",
    ),
]

TENANT_SETTINGS = [
    # (key, value, enforced)
    ("memory.secrets.policy", "reference-only", True),
    ("memory.compaction.thresholdTokens", "60000", False),
]
PROJECT_SETTINGS = [
    ("website", "memory.compaction.thresholdTokens", "40000"),
]

# Shared sources the binding demo names through the provider map. They live in the
# tenant-wide project, next to the house rules, and change on their own schedule.
SHARED_SOURCES = [
    (
        "workstation/agent-baseline",
        "workstation/agent-baseline.md",
        """\
# Agent baseline

## Deployment
- Agents may deploy the staging environment with `make deploy-staging`.

## Network
- Outbound requests go to documented public APIs only.
""",
    ),
    (
        "skill/handoff",
        "skills/handoff.md",
        """\
# Handoff

1. Say what is done, what is not, and what you would do next.
2. List every file you changed, by path.
3. Quote the last line of the checks you ran.
""",
    ),
]

WEBSITE_MANIFEST = """\
{
  "context": [
    {"name": "workstation/agent-baseline", "standing": "rule"},
    {"name": "skill/handoff", "standing": "option"}
  ],
  "local": ["agent.md", ".AGENTS/conventions.md"],
  "exceptions": [
    {
      "target": "workstation/agent-baseline#deployment",
      "effect": "narrow",
      "reason": "The website deploys from main through CI only."
    }
  ]
}
"""

RECIPES: list[tuple[str, RecipeParams, dict[str, ProfileOptions]]] = [
    ("coder", {}, {"cli": {"useClientAgentDoc": True}}),
    ("summarizer", {"agentDocument": ""}, {}),
]


def demo_password(username: str) -> str:
    """The demo user's password: stable for this installation's SECRET_KEY, unguessable
    without it, so re-runs print the same working credentials without storing them."""
    digest = salted_hmac("agentdocs.seed_demo.password", username).digest()
    letters = base64.b32encode(digest).decode().lower()[:16]
    return "-".join(letters[i : i + 4] for i in range(0, 16, 4))


def demo_token_key(username: str) -> tuple[str, str]:
    """The demo user's API token (prefix, key): like the passwords, stable for this
    installation's SECRET_KEY, so re-runs print the same working token while the
    database keeps only its hash."""
    digest = salted_hmac("agentdocs.seed_demo.token", username, algorithm="sha512").digest()
    number, alphabet, text = int.from_bytes(digest, "big"), token_service.PREFIX_ALPHABET, ""
    for _ in range(token_service.PREFIX_LENGTH + token_service.SECRET_LENGTH):  # 512 bits suffice
        number, index = divmod(number, len(alphabet))
        text += alphabet[index]
    prefix, secret = text[: token_service.PREFIX_LENGTH], text[token_service.PREFIX_LENGTH :]
    return prefix, token_service.key_from(prefix, secret)


def _demo_token(admin: User) -> str:
    prefix, key = demo_token_key(admin.get_username())
    existing = ApiToken.objects.filter(key_hash=token_service.hash_key(key)).first()
    if existing is not None and not existing.revoked and not existing.is_expired():
        return key
    if existing is not None:  # revoked since the last run: a demo token must work
        mark_change(
            existing,
            user=admin,
            reason="seed_demo replaces the revoked demo token",
            change_type=ChangeType.DELETED,
        ).delete()
    token_service.token_create(
        user=admin,
        name="Demo token (seed_demo)",
        scopes=list(Scope.values),
        reason="Created by seed_demo",
        key=(prefix, key),
    )
    return key


class Command(BaseCommand):
    help = (
        "Load the demo tenant (users admin, writer and reader; projects website and "
        "backend; versioned documents; settings; recipes) and print the demo credentials. "
        "Re-runnable: existing data is kept and the printed passwords always work."
    )

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--base-url",
            default="http://127.0.0.1:8000",
            help="where the demo is served, for the example API call it prints",
        )

    def handle(self, *args: str, **options: Any) -> None:
        with transaction.atomic():
            users = {demo.username: self._user(demo) for demo in DEMO_USERS}
            admin = users["admin"]
            tenant = self._tenant(admin)
            for demo in DEMO_USERS:
                tenant_service.membership_set(
                    tenant=tenant,
                    username=demo.username,
                    role=demo.role,
                    actor=admin,
                    reason="Demo data",
                )
            projects = {slug: self._project(tenant, slug, name, admin) for slug, name in PROJECTS}
            vance = tenant.projects.get(slug=RESERVED_PROJECT)
            self._document_versions(
                vance, "agent.md", [("admin", "Tenant-wide house rules", VANCE_AGENT_MD)], users
            )
            self._document_versions(
                projects["website"], "agent.md", WEBSITE_AGENT_MD_VERSIONS, users
            )
            for path, body in WEBSITE_AGENTS_DOCS:
                self._document_versions(
                    projects["website"], path, [("writer", "Project context", body)], users
                )
            # backend deliberately has no agent.md: it inherits _vance/agent.md.
            self._settings(tenant, projects, admin)
            self._recipes(tenant, admin)
            self._binding(tenant, vance, projects["website"], users)
            token = _demo_token(admin)
        self._report(token, options["base_url"])

    def _user(self, demo: DemoUser) -> User:
        user_model = get_user_model()
        user, _ = user_model.objects.get_or_create(username=demo.username)
        password = demo_password(demo.username)
        changed = not user.check_password(password)
        if changed:
            user.set_password(password)
        if demo.role == Role.ADMIN and not (user.is_staff and user.is_superuser):
            user.is_staff = user.is_superuser = True
            changed = True
        if not user.is_active:
            user.is_active = True
            changed = True
        if changed:
            user.save()
        return user

    def _tenant(self, admin: User) -> Tenant:
        tenant = Tenant.objects.filter(slug=TENANT_SLUG).first()
        if tenant is None:
            tenant = tenant_service.tenant_create(slug=TENANT_SLUG, name=TENANT_NAME, user=admin)
        return tenant

    def _project(self, tenant: Tenant, slug: str, name: str, admin: User) -> Project:
        project = tenant.projects.filter(slug=slug).first()
        if project is None:
            project = tenant_service.project_create(tenant=tenant, slug=slug, name=name, user=admin)
        return project

    def _document_versions(
        self,
        project: Project,
        path: str,
        versions: list[tuple[str, str, str]],
        users: dict[str, User],
    ) -> None:
        """Create the document with its versions, unless it exists (even deleted): a
        re-run keeps whatever people did to it in the demo."""
        try:
            document_selectors.document_get(project=project, path=path, include_deleted=True)
            return
        except NotFound:
            pass
        (username, reason, body), *later = versions
        document = document_service.document_create(
            project=project, path=path, body=body, user=users[username], reason=reason
        )
        for username, reason, body in later:
            document = document_service.document_write(
                document=document,
                body=body,
                base_version=document.version,
                user=users[username],
                reason=reason,
            ).document

    def _settings(self, tenant: Tenant, projects: dict[str, Project], admin: User) -> None:
        for key, value, enforced in TENANT_SETTINGS:
            if not Setting.objects.filter(tenant=tenant, project=None, key=key).exists():
                policy_service.setting_set(
                    tenant=tenant,
                    project=None,
                    key=key,
                    value=value,
                    enforced=enforced,
                    user=admin,
                    reason="Demo data",
                )
        for slug, key, value in PROJECT_SETTINGS:
            project = projects[slug]
            if not Setting.objects.filter(tenant=tenant, project=project, key=key).exists():
                policy_service.setting_set(
                    tenant=tenant,
                    project=project,
                    key=key,
                    value=value,
                    user=admin,
                    reason="Demo data",
                )

    def _recipes(self, tenant: Tenant, admin: User) -> None:
        for name, params, profiles in RECIPES:
            if not Recipe.objects.filter(tenant=tenant, name=name).exists():
                policy_service.recipe_create(
                    tenant=tenant,
                    name=name,
                    params=params,
                    profiles=profiles,
                    user=admin,
                    reason="Demo data",
                )

    def _binding(
        self,
        tenant: Tenant,
        vance: Project,
        website: Project,
        users: dict[str, User],
    ) -> None:
        """Shared sources, the provider map, the website's manifest and one bound run, so
        the binding pages have a record to show (and its outdated status to explain)."""
        admin = users["admin"]
        for name, path, body in SHARED_SOURCES:
            self._document_versions(vance, path, [("admin", "Shared source", body)], users)
            if not ProviderMapping.objects.filter(tenant=tenant, name=name).exists():
                provider_service.provider_set(
                    tenant=tenant,
                    name=name,
                    project_slug=RESERVED_PROJECT,
                    path=path,
                    user=admin,
                    reason="Demo data",
                )
        self._document_versions(
            website,
            "context.json",
            [("writer", "What the website selects", WEBSITE_MANIFEST)],
            users,
        )
        if not BindingRecord.objects.filter(project=website).exists():
            binding_service.binding_create(
                tenant=tenant,
                project=website,
                user=users["writer"],
                process="demo-run-1",
                memory_block=MemoryBlockRequest(recipe="coder", profile="cli"),
            )

    def _report(self, token: str, base_url: str) -> None:
        write = self.stdout.write
        write(
            f'Demo tenant "{TENANT_SLUG}" is ready: projects '
            f"{', '.join(slug for slug, _ in PROJECTS)} and the tenant-wide {RESERVED_PROJECT}."
        )
        write("Demo users (the same passwords on every run of seed_demo):")
        for demo in DEMO_USERS:
            write(
                f"  {demo.username:<7} password: {demo_password(demo.username)}   "
                f"{demo.description}"
            )
        write(f"API token for admin: {token}")
        for line in try_it_lines(token, base_url):
            write(line)


def try_it_lines(token: str, base_url: str) -> list[str]:
    """What to try against the demo, each command runnable as printed (a test runs them):
    the README's examples with this installation's token and address."""
    base = base_url.rstrip("/")
    project_api = f"{base}/api/v1/tenants/{TENANT_SLUG}/projects/{DEMO_PROJECT}"
    where = f"--tenant {TENANT_SLUG} --project {DEMO_PROJECT}"
    processes = try_it_processes()
    curl_process, cli_process = processes["curl"], processes["cli"]
    return [
        "Try it (the README's examples use the same tenant, project and recipe):",
        f'  curl -H "Authorization: Bearer {token}" {project_api}/documents/agent.md',
        f'  curl -H "Authorization: Bearer {token}" -H "Content-Type: application/json" '
        f'-H "Accept: text/plain" -d \'{{"process": "{curl_process}", "recipe": "coder", '
        f'"profile": "cli"}}\' {project_api}/memory-block/',
        "The command-line client (in .venv/bin/; `source .venv/bin/activate` puts it on PATH):",
        f"  export AGENTDOCS_URL={base} AGENTDOCS_TOKEN={token}",
        f"  agentdocs block {where} --process {cli_process} --recipe coder --profile cli",
        # Into a folder of its own outside this checkout, and unreported: run in the
        # checkout, a sync would report the checkout itself as the project's repository.
        f'  mkdir -p "{SYNC_FOLDER}" && agentdocs sync {where} '
        f'--format agents-md,claude-md --dir "{SYNC_FOLDER}" --no-report',
        f"  agentdocs mcp {where}   # what an MCP client starts: see the README",
        "Each render names its process: run one again with the same id and what that "
        "process already received comes back as a one-line stub (its read state; "
        '--reset, or "reset": true, sends it in full again).',
        f"MCP over HTTP, for clients that take a URL: {base}/mcp/{TENANT_SLUG}/{DEMO_PROJECT}/ "
        f'with the header "Authorization: Bearer {token}"',
    ]
