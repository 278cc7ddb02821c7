"""Make an existing tenant large, with bulk inserts: for benchmarks and size tests.

    manage.py seed_large_tenant TENANT [--projects 1000] [--documents 10000]
        [--versions 10000] [--records 100000] [--documents-project big]
        [--document-bytes 0] [--version-bytes 0]

Adds to TENANT (which must have the project `web` with an `agent.md`):

- ``--projects`` more projects (`p00000`, ...);
- a project `big` (or ``--documents-project``, created unless it exists) holding
  ``--documents`` `.AGENTS/` documents of version 1, each of about ``--document-bytes``
  when that is given;
- ``--versions`` versions in all of `web/agent.md`'s history (the current version last),
  each of about ``--version-bytes`` (varied text, each version a few lines apart from
  the one before) when that is given;
- ``--records`` binding records in `web`, copies of one bound through the service
  with their own process ids and times, already archived.

Rows go in with `bulk_create` in batches, not through the services: this builds
benchmark data in seconds, and each row is what the service would have written
(history rows and events included), except that no secret check is made and no
webhook is told. The history rows join the tenant's hash chain as the services'
would (`audit_chain.history_rows_link`), so the tenant's chain verifies.
"""

from __future__ import annotations

import hashlib
import random
from datetime import timedelta
from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction
from django.utils import timezone

from agentdocs.models import BindingRecord, ChangeType, Document, Project, Tenant
from agentdocs.models.events import Event
from agentdocs.services import audit_chain, events, render_cache
from agentdocs.services import bindings as binding_service

BATCH = 2000


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


_WORDS = (
    "agent",
    "cascade",
    "document",
    "version",
    "tenant",
    "project",
    "recipe",
    "profile",
    "layer",
    "process",
    "review",
    "merge",
    "token",
    "export",
    "search",
    "history",
    "budget",
    "policy",
    "scope",
    "context",
    "rule",
    "test",
    "write",
    "read",
    "keep",
    "small",
    "name",
    "plainly",
    "first",
    "deploy",
    "branch",
    "commit",
    "change",
    "request",
)


def filler_text(size: int, *, seed: int, title: str = "# Rules") -> str:
    """About ``size`` bytes of Markdown list lines of varied words (the same for the
    same seed), which compress as prose does rather than as one repeated line."""
    rng = random.Random(seed)
    lines = [title, ""]
    length = len(title) + 2
    while length < size:
        words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(6, 14)))
        line = f"- {words}."
        lines.append(line)
        length += len(line) + 1
    return "\n".join(lines)[:size].rstrip() + "\n"


def _version_text(base: str, version: int) -> str:
    """``base`` with a few lines rewritten for ``version``: each version close to the last."""
    lines = base.splitlines()
    for offset in range(3):
        index = 2 + (version * 7 + offset * 131) % max(len(lines) - 2, 1)
        if index < len(lines):
            lines[index] = f"- revision {version} rewrote this line ({offset})."
    return "\n".join(lines) + f"\n\n<!-- revision {version} -->\n"


def _history_row(document: Document, *, version: int, body: str, when: Any, user: Any) -> Any:
    history = Document.history.model
    return history(
        id=document.pk,
        project_id=document.project_id,
        path=document.path,
        body=body,
        sha256=_sha(body),
        size=len(body.encode("utf-8")),
        version=version,
        is_deleted=False,
        updated_by=user,
        updated_at=when,
        secret_acknowledgement="",
        history_date=when,
        history_type="+" if version == 1 else "~",
        history_user=user,
        history_change_reason=f"seed_large_tenant version {version}",
        change_type=ChangeType.CREATED if version == 1 else ChangeType.WRITTEN,
    )


def _document_event(row: Any, *, tenant: Tenant, project: Project) -> Event:
    """The event `document_write` emits for the version a history row holds."""
    event = events.new_event(
        type=events.DOCUMENT_CREATED if row.version == 1 else events.DOCUMENT_UPDATED,
        tenant=tenant,
        project=project,
        actor=row.history_user,
        target=row.path,
        reason=row.history_change_reason,
        version=row.version,
        data=events.document_data(
            path=row.path,
            version=row.version,
            sha256=row.sha256,
            actor=row.history_user,
            reason=row.history_change_reason,
        ),
    )
    event.created_at = row.history_date
    return event


def _binding_event(record: BindingRecord, *, tenant: Tenant, project: Project) -> Event:
    """The event `binding_create` emits for a record (its id is known after the insert)."""
    event = events.new_event(
        type=events.BINDING_CREATED,
        tenant=tenant,
        project=project,
        actor=record.created_by,
        target=str(record.pk),
        data=events.binding_data(
            record_id=record.pk,
            process=record.process,
            problem_count=record.problem_count,
            actor=record.created_by,
        ),
    )
    event.created_at = record.created_at
    return event


@transaction.atomic
def build_large_tenant(
    *,
    tenant: Tenant,
    user: Any,
    projects: int,
    documents: int,
    versions: int,
    records: int,
    documents_project: str = "big",
    document_bytes: int = 0,
    version_bytes: int = 0,
) -> dict[str, int]:
    """Add the large tenant's rows to ``tenant`` (see the module's docstring)."""
    now = timezone.now()
    web = tenant.projects.get(slug="web")
    Project.objects.bulk_create(
        [Project(tenant=tenant, slug=f"p{n:05}", name=f"Project {n}") for n in range(projects)],
        batch_size=BATCH,
    )
    big = Project.objects.filter(tenant=tenant, slug=documents_project).first()
    if big is None:
        big = Project.objects.create(
            tenant=tenant, slug=documents_project, name=documents_project.title()
        )
    body = "# Context\n\n- one of many context documents.\n"
    if document_bytes:
        body = filler_text(document_bytes, seed=0, title="# Context")
    Document.objects.bulk_create(
        [
            Document(
                project=big,
                path=f".AGENTS/doc{n:05}.md",
                body=body,
                sha256=_sha(body),
                size=len(body.encode()),
                version=1,
                updated_by=user,
                updated_at=now,
            )
            for n in range(documents)
        ],
        batch_size=BATCH,
    )
    created = Document.objects.filter(project=big, path__startswith=".AGENTS/doc").only(
        "pk", "project_id", "path"
    )
    history = [_history_row(d, version=1, body=body, when=now, user=user) for d in created]
    audit_chain.history_rows_link(tenant_id=tenant.pk, rows=history)
    Document.history.model.objects.bulk_create(history, batch_size=BATCH)
    Event.objects.bulk_create(
        [_document_event(row, tenant=tenant, project=big) for row in history],
        batch_size=BATCH,
    )

    agent = web.documents.get(path="agent.md")
    start = agent.version + 1
    rows = []
    long_text = filler_text(version_bytes - 64, seed=1) if version_bytes else ""
    for version in range(start, versions + 1):
        if long_text:
            text = _version_text(long_text, version)
        else:
            text = f"{agent.body.rstrip()}\n\n<!-- revision {version} -->\n"
        when = now - timedelta(seconds=versions - version)
        rows.append(_history_row(agent, version=version, body=text, when=when, user=user))
    audit_chain.history_rows_link(tenant_id=tenant.pk, rows=rows)
    Document.history.model.objects.bulk_create(rows, batch_size=BATCH)
    Event.objects.bulk_create(
        [_document_event(row, tenant=tenant, project=web) for row in rows], batch_size=BATCH
    )
    if rows:
        last = rows[-1]
        Document.objects.filter(pk=agent.pk).update(
            body=last.body,
            sha256=last.sha256,
            size=last.size,
            version=last.version,
            updated_at=last.history_date,
        )

    template = binding_service.binding_create(
        tenant=tenant,
        project=web,
        user=user,
        process="seed-template",
        manifest={"local": ["agent.md"]},
    ).record
    bound = BindingRecord.objects.bulk_create(
        [
            BindingRecord(
                tenant=tenant,
                project=web,
                process=f"seed-{n}",
                created_by=user,
                created_at=now - timedelta(seconds=records - n),
                schema=template.schema,
                record={**template.record, "process": f"seed-{n}"},
                problem_count=template.problem_count,
                memory_block_sha256=template.memory_block_sha256,
                archive_path=f"seed/{n}.json",
                archive_sha256=template.archive_sha256 or "0" * 64,
                archived_at=now,
                label=template.label,
                recipe=template.recipe,
                document_versions=template.document_versions,
            )
            for n in range(records)
        ],
        batch_size=BATCH,
    )
    Event.objects.bulk_create(
        [_binding_event(record, tenant=tenant, project=web) for record in bound],
        batch_size=BATCH,
    )
    render_cache.render_inputs_changed(tenant_id=tenant.pk)
    return {
        "projects": tenant.projects.count(),
        "big_documents": documents,
        "agent_versions": Document.objects.get(pk=agent.pk).version,
        "binding_records": records + 1,
        "events": tenant.events.count(),
        "template_record": template.pk,
    }


class Command(BaseCommand):
    help = "Make an existing tenant large with bulk inserts (benchmarks and size tests)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("tenant")
        parser.add_argument("--projects", type=int, default=1000)
        parser.add_argument("--documents", type=int, default=10000)
        parser.add_argument("--versions", type=int, default=10000)
        parser.add_argument("--records", type=int, default=100000)
        parser.add_argument("--documents-project", default="big")
        parser.add_argument("--document-bytes", type=int, default=0)
        parser.add_argument("--version-bytes", type=int, default=0)

    def handle(self, *args: Any, **options: Any) -> None:
        tenant = Tenant.objects.get(slug=options["tenant"])
        admin = tenant.memberships.filter(role="admin").select_related("user").first()
        if admin is None:
            raise SystemExit(f"The tenant {tenant.slug!r} has no admin to write as.")
        summary = build_large_tenant(
            tenant=tenant,
            user=admin.user,
            projects=options["projects"],
            documents=options["documents"],
            versions=options["versions"],
            records=options["records"],
            documents_project=options["documents_project"],
            document_bytes=options["document_bytes"],
            version_bytes=options["version_bytes"],
        )
        self.stdout.write(" ".join(f"{key}={value}" for key, value in summary.items()))
