"""Repositories: a repository's report of its exported agent files (`agentdocs sync`,
`sync --check`, `bind --repo`). Each repository's state against the server's export
now is computed on read (`agentdocs.selectors.repositories`).

A report is refused when a field holds a hidden character or a secret (the
activity feed and webhook receivers would show it), its remote without credentials. A
report that changes
a repository's state emits `repository.state_changed`, in the report's transaction; a
document write that puts repositories behind emits nothing (their state is computed
when read): see docs/repositories.md.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TypedDict

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from agentdocs.core import repositories as core
from agentdocs.core.errors import InvalidInput
from agentdocs.core.hidden_characters import refuse_hidden
from agentdocs.core.repository_runs import clean_remote
from agentdocs.core.secret_scan import refuse_secret_in_text
from agentdocs.core.stored_text import refuse_hidden_or_secret
from agentdocs.models import ApiToken, BindingRecord, Project, Repository, RepositoryCheck
from agentdocs.selectors import repositories as selectors
from agentdocs.services import events

# The report


def _binding(project: Project, binding_id: int | None) -> BindingRecord | None:
    if binding_id is None:
        return None
    record = BindingRecord.objects.filter(project=project, pk=binding_id).only("id").first()
    if record is None:
        raise InvalidInput(
            f"`binding`: this project has no binding record {binding_id}.", field="binding"
        )
    return record


def repository_report(
    *,
    project: Project,
    user: User,
    token: ApiToken | None,
    kind: str,
    remote: str | None,
    name: str | None,
    branch: str | None,
    commit: str | None,
    dirty: bool,
    formats: str,
    recipe: str | None,
    profile: str | None,
    export_sha256: str,
    files: dict[str, str],
    binding: int | None,
) -> selectors.RepositoryStatus:
    """Record one report of a repository (made on its first), and answer its state.

    A repository is its remote (credentials stripped) and branch; without a remote, the
    ``name`` its client gives and branch. When the report holds the server's export of
    the moment, the versions each file was built from become its baseline (`behind_by`
    counts from there). A report that changes its state emits `repository.state_changed`."""
    if remote:
        # A hidden character first (it may sit in the host), then the cleaned remote:
        # its stripped credentials are no secret that is kept.
        refuse_hidden(remote, field="remote", what="The remote")
        remote = clean_remote(remote, field="remote")
        if remote:
            refuse_secret_in_text(remote, field="remote", what="The remote")
    for field_name, value in (
        ("name", name),
        ("branch", branch),
        ("recipe", recipe),
        ("profile", profile),
    ):
        if value:
            refuse_hidden_or_secret(value, field=field_name, what=f"`{field_name}`")
    if files:
        # One line per path, in order: a refusal's `line` is the path's position.
        refuse_hidden_or_secret(
            "\n".join(files), field="files", what="The paths of `files` (one per line)"
        )
    formats = core.normal_formats(formats.split(","))
    if not remote and not name:
        raise InvalidInput(
            "`remote` is required (the repository's git remote), or a `name` for a "
            "repository without one.",
            field="remote",
        )
    if kind not in core.KINDS:
        raise InvalidInput(f"`kind` must be one of {', '.join(core.KINDS)}.", field="kind")
    record = _binding(project, binding)
    if record is not None and kind != "bind":
        raise InvalidInput("`binding` goes with `kind: bind` only.", field="binding")
    now = timezone.now()
    exported = selectors.current_exports(
        project=project, keys=[(formats, recipe or "", profile or "")]
    )[(formats, recipe or "", profile or "")]
    current = exported.sha256 if exported is not None else None
    with transaction.atomic():
        repository, created = Repository.objects.select_for_update().get_or_create(
            project=project,
            remote=remote or "",
            name="" if remote else name or "",
            branch=branch or "",
            defaults={"first_seen": now, "last_seen": now, "state": core.NEVER_CHECKED},
        )
        previous = repository.state
        if exported is not None and export_sha256 == exported.sha256:
            repository.baseline_sha256 = exported.sha256
            repository.baseline = exported.sources
        elif export_sha256 != repository.baseline_sha256:
            repository.baseline_sha256 = ""
            repository.baseline = {}
        repository.last_seen = now
        repository.last_commit = commit or ""
        repository.dirty = dirty
        repository.formats = formats
        repository.recipe = recipe or ""
        repository.profile = profile or ""
        repository.export_sha256 = export_sha256
        repository.files = files
        repository.state = core.repository_state(
            files=files, export_sha256=export_sha256, current_sha256=current
        )
        if record is not None:
            repository.last_run = record
        repository.save()
        RepositoryCheck.objects.create(
            repository=repository,
            kind=kind,
            commit=commit or "",
            branch=branch or "",
            dirty=dirty,
            formats=formats,
            export_sha256=export_sha256,
            files=files,
            state=repository.state,
            binding=record,
            reported_at=now,
            reported_by=user if user.pk is not None else None,
            token=token,
        )
        if repository.state != previous or created:
            _state_changed(repository, previous=None if created else previous, user=user, kind=kind)
    if record is not None:
        repository.last_run = BindingRecord.objects.defer("record").get(pk=record.pk)
    return replace(selectors.repository_status_of(repository, exported), created=created)


class RepositoryEventData(TypedDict):
    """`repository.state_changed`: a report left a repository in another state
    (`previous` is null for a repository's first report)."""

    id: int
    remote: str | None
    name: str | None
    branch: str | None
    commit: str | None
    state: str
    previous: str | None
    kind: str
    actor: str


def _state_changed(repository: Repository, *, previous: str | None, user: User, kind: str) -> None:
    project = repository.project
    data: RepositoryEventData = {
        "id": repository.pk,
        "remote": repository.remote or None,
        "name": repository.name or None,
        "branch": repository.branch or None,
        "commit": repository.last_commit or None,
        "state": repository.state,
        "previous": previous,
        "kind": kind,
        "actor": user.get_username() if user.pk is not None else "",
    }
    events.emit(
        type=events.REPOSITORY_STATE_CHANGED,
        tenant=project.tenant,
        project=project,
        actor=user,
        target=repository.remote or repository.name,
        reason=f"{kind}: {previous or 'new'} → {repository.state}",
        data=data,
        action="state_changed",
    )
