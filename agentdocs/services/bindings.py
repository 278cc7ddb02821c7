"""Binding: resolve a manifest to exact document versions and store the record.

The reads happen here, in a constant number of queries whatever the number of
sources; the record itself is assembled by the pure `agentdocs.core`
package. A record is stored whatever its problems, because it is evidence, and
it is never changed afterwards: only archival fills its archive fields, once.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from agentdocs.core.bindings import (
    SCHEMA,
    BindingRecordData,
    BoundDocument,
    BoundSkill,
    BoundSkillVersion,
    ManifestSource,
    RecordHeader,
    ServedFrom,
    build_record,
    canonical_json,
    stored_json_bytes,
    unversioned_source,
)
from agentdocs.core.cohorts import run_cohorts
from agentdocs.core.errors import HiddenCharacters, InvalidInput, SecretDetected, TooLarge
from agentdocs.core.hook_delivery import (
    UNUSABLE_DELIVERY,
    Delivery,
    received_of,
)
from agentdocs.core.manifest import Manifest, ManifestError, parse_manifest, skill_entry_name
from agentdocs.core.repository_runs import (
    IN_SYNC,
    RepositorySection,
    parse_repository,
    with_repository,
)
from agentdocs.core.skill_reads import bound_skill
from agentdocs.core.stored_text import refuse_hidden_or_secret
from agentdocs.models import BindingRecord, Document, Project, ProviderMapping, Skill, Tenant
from agentdocs.selectors import binding_memory_block
from agentdocs.selectors import bindings as binding_selectors
from agentdocs.selectors import skills as skill_selectors
from agentdocs.services import archival, events
from agentdocs.services.signing import binding_record_sign

MANIFEST_PATH = "context.json"


@dataclass(frozen=True)
class BindingResult:
    record: BindingRecord
    # The MCP session instructions bound with the block, when they were asked for.
    instructions: str | None = None

    @property
    def has_problems(self) -> bool:
        return self.record.problem_count > 0


def _parse(data: Any, *, origin: str) -> Manifest:
    try:
        return parse_manifest(data)
    except ManifestError as error:
        entry = error.entry or "manifest"
        field = entry if entry.startswith("manifest") else f"manifest.{entry}"
        raise InvalidInput(f"{origin}: {entry}: {error.detail}", field=field) from None


def _project_manifest(project: Project) -> tuple[Manifest, ManifestSource]:
    """The manifest the project keeps as its `context.json` document."""
    bound = binding_selectors.bound_documents([(project.pk, MANIFEST_PATH)]).get(
        (project.pk, MANIFEST_PATH)
    )
    if bound is None:
        raise InvalidInput(
            f"The project has no {MANIFEST_PATH} document and the request carries no "
            "`manifest`: write the manifest to context.json, or send it inline.",
            field="manifest",
        )
    # From the history row of the bound version, which no later write can change.
    body = (
        Document.history.model.objects.filter(history_id=bound.history_id)
        .values_list("body", flat=True)
        .get()
    )
    try:
        data = json.loads(body)
    except json.JSONDecodeError as error:
        raise InvalidInput(
            f"{MANIFEST_PATH} (version {bound.version}) is not valid JSON: {error.msg} "
            f"at line {error.lineno}, column {error.colno}.",
            field="manifest",
        ) from None
    except RecursionError:
        raise InvalidInput(
            f"{MANIFEST_PATH} (version {bound.version}) is nested too deeply to read.",
            field="manifest",
        ) from None
    manifest = _parse(data, origin=f"{MANIFEST_PATH} (version {bound.version})")
    return manifest, cast(ManifestSource, {"source": MANIFEST_PATH, **bound.as_source()})


def _inline_manifest(data: Any) -> tuple[Manifest, ManifestSource]:
    manifest = _parse(data, origin="The inline manifest")
    # The client's own manifest is kept by hash only, like any client-supplied document.
    source = {"source": "inline", **unversioned_source(canonical_json(data).decode())}
    return manifest, cast(ManifestSource, source)


def _bound_skill_version(skill: Skill) -> BoundSkillVersion:
    return BoundSkillVersion(
        skill={
            "id": skill.pk,
            "project": skill.project.slug,
            "name": skill.name,
            "version": skill.version,
        },
        sha256=skill.sha256,
        bytes=skill.size,
        bound=bound_skill(
            skill_id=skill.pk,
            project=skill.project.slug,
            name=skill.name,
            version=skill.version,
            label=None,
            sha256=skill.sha256,
            files=skill.files,
        ),
    )


def _resolve(
    *, tenant: Tenant, project: Project, manifest: Manifest
) -> tuple[dict[str, BoundDocument | BoundSkillVersion | str], dict[str, BoundDocument | str]]:
    """What each name and local path binds to: a name through the provider map, or, for
    `skill/<name>` the map does not hold, the skill the project offers."""
    names = [entry.name for entry in manifest.context]
    mappings = {}
    if names:
        mappings = {
            m["name"]: m
            for m in ProviderMapping.objects.filter(tenant=tenant, name__in=names).values(
                "name", "project_id", "project__slug", "path"
            )
        }
    lookups = [(m["project_id"], m["path"]) for m in mappings.values()]
    lookups += [(project.pk, path) for path in manifest.local]
    documents = binding_selectors.bound_documents(lookups)
    wanted_skills = {
        name: wanted_name
        for name in names
        if name not in mappings and (wanted_name := skill_entry_name(name)) is not None
    }
    skills = skill_selectors.skills_offered_by_name(project=project, names=wanted_skills.values())
    resolved_names: dict[str, BoundDocument | BoundSkillVersion | str] = {}
    for name in names:
        mapping = mappings.get(name)
        if name in wanted_skills:
            skill = skills.get(wanted_skills[name])
            resolved_names[name] = (
                _bound_skill_version(skill)
                if skill is not None
                else f"No skill {wanted_skills[name]!r} in this project or its tenant, and "
                f"the provider map has no name {name!r}."
            )
            continue
        if mapping is None:
            resolved_names[name] = f"The provider map has no name {name!r}."
            continue
        bound = documents.get((mapping["project_id"], mapping["path"]))
        resolved_names[name] = bound or (
            f"The provider map sends {name!r} to {mapping['project__slug']}/{mapping['path']}, "
            "where there is no document."
        )
    resolved_local: dict[str, BoundDocument | str] = {
        path: documents.get((project.pk, path)) or f"The project has no document at {path!r}."
        for path in manifest.local
    }
    return resolved_names, resolved_local


def _has_manifest(project: Project) -> bool:
    return Document.objects.filter(project=project, path=MANIFEST_PATH, is_deleted=False).exists()


def _repository_section(
    *, tenant: Tenant, project: Project, data: Mapping[str, Any]
) -> RepositorySection:
    """The client's section, checked, with each file's state checked against the
    server's current export (built once, whatever the number of files), and the
    export's inputs kept when a file is in sync so that it can be rebuilt later."""
    section = parse_repository(data)
    _refuse_hidden_or_secret_in_section(section)
    export, inputs = binding_memory_block.binding_export_bind(
        tenant=tenant, project=project, format=section["format"]
    )
    in_sync = False
    for index, entry in enumerate(section["files"]):
        exported = export.file(entry["path"])
        same = exported is not None and exported.sha256 == entry["sha256"]
        if same != (entry["state"] == IN_SYNC):
            now = "is" if same else "is not"
            raise InvalidInput(
                f"repository.files[{index}].state: {entry['path']} {now} the server's current "
                f"export, so it cannot be {entry['state']}: bind again.",
                field=f"repository.files[{index}].state",
            )
        if same and exported is not None:
            in_sync = True
            held = {part.source for part in exported.parts}
            entry["sources"] = [s.as_dict() for s in export.sources if s.path in held]
    section["export"] = (
        {
            "sha256": export.export_sha256,
            "inputs": inputs,
        }
        if in_sync
        else None
    )
    return section


def _refuse_hidden_or_secret_in_section(section: RepositorySection) -> None:
    """The section's texts (its remotes, without credentials, its branch and its paths)
    are signed into an immutable record that members see: a hidden character or a
    secret in one is refused (422 naming it) before anything is stored or signed."""
    texts: list[tuple[str, str | None]] = [
        ("repository.remote", section["remote"]),
        ("repository.branch", section["branch"]),
    ]
    for index, entry in enumerate(section["files"]):
        texts.append((f"repository.files[{index}].path", entry["path"]))
        git = entry.get("git")
        if git is not None:
            texts.append((f"repository.files[{index}].git.remote", git["remote"]))
    named = [(field, text) for field, text in texts if text]
    try:
        # One scan of them all, one per line (none holds a line break): a run may list
        # 500 files; each one alone only to name the one refused.
        refuse_hidden_or_secret(
            "\n".join(text for _field, text in named), field="repository", what="`repository`"
        )
    except (HiddenCharacters, SecretDetected):
        for field, text in named:
            refuse_hidden_or_secret(text, field=field, what=f"`{field}`")
        raise


def _archive_later(record_id: int) -> Callable[[], None]:
    # Robust on_commit: the record is committed evidence whatever happens to the
    # enqueue (a broker outage, or an in-process archive failing); the sweep
    # retries it. A named function, because Django logs a robust failure by the
    # callback's __qualname__, which a functools.partial lacks.
    def enqueue_archive() -> None:
        archival.binding_record_archive_enqueue(record_id=record_id)

    return enqueue_archive


def binding_create(
    *,
    tenant: Tenant,
    project: Project,
    user: User,
    process: str,
    manifest: Mapping[str, Any] | None = None,
    memory_block: binding_memory_block.MemoryBlockRequest | None = None,
    served_from: ServedFrom | None = None,
    served_sha256: str | None = None,
    repository: Mapping[str, Any] | None = None,
    delivery: Mapping[str, Any] | None = None,
    skills: list[BoundSkill] | None = None,
) -> BindingResult:
    """Bind a run: resolve every source, classify every exception, store the record.

    The record is stored even when it has problems; the caller decides what a
    problem means for the run. Archival is enqueued once the record is committed.
    ``manifest`` is the inline manifest as the client sent it (None: the project's
    `context.json`); ``memory_block``, when given, is rendered and bound too.
    ``served_from`` and ``served_sha256`` say how the run's block was served (a client
    that served its cached block while the server was down uploads the record later);
    they are kept in the record, and signed with it, only when given.
    ``repository`` is the section a repository run sends (`agentdocs bind --repo`):
    the files its tool loaded, checked against the server's current export; without
    a manifest and a `context.json`, such a run binds an empty manifest.
    ``delivery`` is what a context hook wrote to its tool (`agentdocs hook context`):
    kept with what the tool makes of it, and a problem when the tool could not use it.
    ``skills`` are the skills the process read (`agentdocs.services.skill_reads`), each
    by version with its files' sha256, restorable from the skills' history.

    ``process`` is a process id its face has checked (`validate_process`: the API's
    serializer, the page, the MCP session), once.
    """
    section = None
    if repository is not None:
        section = _repository_section(tenant=tenant, project=project, data=repository)
    if manifest is None and section is not None and not _has_manifest(project):
        parsed, manifest_source = _inline_manifest({})
        manifest_source["source"] = "none"
    elif manifest is None:
        parsed, manifest_source = _project_manifest(project)
    else:
        parsed, manifest_source = _inline_manifest(manifest)
    names, local = _resolve(tenant=tenant, project=project, manifest=parsed)
    block, instructions = None, None
    if memory_block is not None:
        block, instructions = binding_memory_block.binding_memory_block_bind(
            tenant=tenant, project=project, process=process, request=memory_block
        )
    created_at = timezone.now()
    header: RecordHeader = {
        "tenant": tenant.slug,
        "project": project.slug,
        "process": process,
        "created_at": created_at.isoformat(),
        "created_by": user.get_username(),
    }
    record = build_record(
        header=header,
        manifest=parsed,
        manifest_source=manifest_source,
        names=names,
        local=local,
        memory_block=block,
    )
    if served_from is not None:
        record["served_from"] = served_from
        if served_sha256 is not None:
            record["served_sha256"] = served_sha256
    if section is not None:
        record = with_repository(record, section)
    if delivery is not None:
        record = _with_delivery(record, delivery)
    selected = [bound.bound for bound in names.values() if isinstance(bound, BoundSkillVersion)]
    if skills is not None or selected:
        record["skills"] = [*(skills or []), *selected]
    _refuse_oversized(record)
    with transaction.atomic():
        stored = BindingRecord.objects.create(
            tenant=tenant,
            project=project,
            process=process,
            created_by=user,
            created_at=created_at,
            schema=SCHEMA,
            record=record,
            problem_count=record["problem_count"],
            memory_block_sha256=block["sha256"] if block is not None else "",
            signature=binding_record_sign(record=record),
            **run_cohorts(record),
        )
        transaction.on_commit(_archive_later(stored.pk), robust=True)
        _binding_created(stored, tenant=tenant, project=project, user=user)
    return BindingResult(record=stored, instructions=instructions)


def _with_delivery(record: BindingRecordData, delivery: Mapping[str, Any]) -> BindingRecordData:
    """``record`` with its `delivery`: what the tool received by its own rules, and a
    problem for each reason the tool could not use it."""
    received, problems = received_of(
        tool=delivery["tool"], event=delivery["event"], output=delivery["output"]
    )
    kept = cast(Delivery, {**delivery, "received": received})
    found = [*record["problems"], *({"kind": UNUSABLE_DELIVERY, "detail": p} for p in problems)]
    return cast(
        BindingRecordData,
        {**record, "delivery": kept, "problems": found, "problem_count": len(found)},
    )


def _binding_created(
    record: BindingRecord, *, tenant: Tenant, project: Project, user: User
) -> None:
    data = events.binding_data(
        record_id=record.pk,
        process=record.process,
        problem_count=record.problem_count,
        actor=user,
    )
    events.emit(
        type=events.BINDING_CREATED,
        tenant=tenant,
        project=project,
        actor=user,
        target=str(record.pk),
        data=data,
    )


def _refuse_oversized(record: BindingRecordData) -> None:
    """Refuse a record whose row or archive would be over its configured cap, before
    anything is stored, naming what made it large: the Memory Block when the record
    would fit without it, else the manifest's sources."""
    checks = (
        ("row", stored_json_bytes, "AGENTDOCS_BINDING_MAX_RECORD_BYTES"),
        ("archive", archival.archive_bytes_bound, "AGENTDOCS_BINDING_MAX_ARCHIVE_BYTES"),
    )
    for what, measure, setting in checks:
        size = measure(record)
        cap: int = getattr(settings, setting)
        if size <= cap:
            continue
        over = (
            f"The binding record's {what} would be {size:,} bytes, "
            f"over the cap of {cap:,} ({setting})"
        )
        block = record["memory_block"]
        without_block = measure({**record, "memory_block": None})
        if block is not None and without_block <= cap:
            raise TooLarge(
                f"{over}: its Memory Block takes {size - without_block:,} of them "
                f"({len(block['layers'])} layers, {len(block['context_documents'])} "
                "`.AGENTS/` documents). Nothing was stored: bind without the Memory Block, "
                "or keep fewer documents in `.AGENTS/`.",
                field="memory_block",
                bytes=size,
                limit=cap,
            )
        loose = cast(dict[str, Any], record)
        repository = loose.get("repository")
        if repository is not None:
            without = measure(cast(BindingRecordData, {**loose, "repository": None}))
            if without <= cap:
                raise TooLarge(
                    f"{over}: its repository section takes {size - without:,} of them "
                    f"({len(repository['files'])} files). Nothing was stored.",
                    field="repository",
                    bytes=size,
                    limit=cap,
                )
        sources = len(record["context"]) + len(record["local"])
        raise TooLarge(
            f"{over}: the manifest's {sources} sources and {len(record['exceptions'])} "
            f"exceptions take {without_block:,} of them. Nothing was stored: bind fewer "
            "sources.",
            field="manifest",
            bytes=size,
            limit=cap,
        )
