"""`agentdocs.sql.render_reads` against its ORM twin: the same rows, read with the ORM.

These run on the configured database: SQLite by default, PostgreSQL with DATABASE_URL.
"""

from __future__ import annotations

import pytest
from django.db.models import Q

from agentdocs.core.policy import PolicySetting
from agentdocs.core.recipes import AGENT_DOC_PARAM, DEFAULT_AGENT_DOCUMENT, LABEL_PARAM
from agentdocs.models import (
    RESERVED_PROJECT,
    Document,
    DocumentLabel,
    Project,
    Recipe,
    Setting,
    Skill,
    SkillLabel,
)
from agentdocs.services import documents as document_service
from agentdocs.services import labels as label_service
from agentdocs.services import policy as policy_service
from agentdocs.services import skill_labels as skill_label_service
from agentdocs.services import skills as skill_service
from agentdocs.sql import render_reads
from agentdocs.sql.render_reads import RenderRows

pytestmark = pytest.mark.django_db

PREFIX = ".AGENTS/"


def _orm_render_rows(
    *, project: Project, recipe_name: str | None, label: str | None = None
) -> RenderRows:
    recipe = (
        Recipe.objects.filter(tenant_id=project.tenant_id, name=recipe_name)
        .values_list("params", "profiles")
        .first()
    )
    settings = Setting.objects.filter(tenant_id=project.tenant_id).filter(
        Q(project__isnull=True) | Q(project_id=project.pk)
    )
    paths = {DEFAULT_AGENT_DOCUMENT}
    if recipe is not None and isinstance(recipe[0].get(AGENT_DOC_PARAM), str):
        paths.add(recipe[0][AGENT_DOC_PARAM])
    vance = Project.objects.filter(tenant_id=project.tenant_id, slug=RESERVED_PROJECT)
    context = (
        Document.objects.filter(project=project, path__startswith=PREFIX, path__endswith=".md")
        # not a direct child: a slash after the prefix (LIKE '.AGENTS/%/%')
        .exclude(path__regex=f"^.{{{len(PREFIX)}}}.*/")
    )
    documents = Document.objects.filter(is_deleted=False).filter(
        Q(project=project, path__in=paths)
        | Q(project__in=vance, path__in=paths)
        | Q(pk__in=context.values("pk"))
    )
    if label is None and recipe is not None:
        label = recipe[0].get(LABEL_PARAM)
    labelled = {
        row.document_id: row.version
        for row in DocumentLabel.objects.filter(name=label, document__in=documents)
    }
    read = []
    for document in documents:
        version = labelled.get(document.pk)
        row = (
            document.history.filter(version=version).order_by("-history_id").first()
            if version is not None
            else None
        )
        shown = row if row is not None else document
        read.append(
            (
                document.project_id,
                document.path,
                shown.body,
                shown.version,
                shown.sha256,
                row is not None,
            )
        )
    return RenderRows(
        recipe=None if recipe is None else tuple(recipe),
        settings=tuple(
            PolicySetting(
                key=s.key,
                value=s.value,
                level="tenant" if s.project_id is None else "project",
                enforced=s.enforced,
            )
            for s in settings
        ),
        documents=tuple(read),
        skills=tuple(sorted(_orm_skills(project=project, vance=vance, label=label))),
    )


def _orm_skills(*, project: Project, vance, label: str | None) -> list[tuple]:
    """The live skills of the project and of `_vance`, each at its version under
    ``label`` where it has that label (its history row), else at its latest."""
    skills = Skill.objects.filter(Q(project=project) | Q(project__in=vance), is_deleted=False)
    labelled = {
        row.skill_id: row.version for row in SkillLabel.objects.filter(name=label, skill__in=skills)
    }
    read = []
    for skill in skills:
        version = labelled.get(skill.pk)
        row = (
            skill.history.filter(version=version).order_by("-history_id").first()
            if version is not None
            else None
        )
        shown = row if row is not None else skill
        read.append(
            (
                skill.project_id,
                skill.name,
                shown.description,
                shown.version,
                shown.sha256,
                row is not None,
            )
        )
    return read


def _same(rows: RenderRows, twin: RenderRows) -> None:
    """Equal but for order: a UNION ALL gives its rows in no particular order."""
    assert rows.recipe == twin.recipe
    assert sorted(rows.settings, key=repr) == sorted(twin.settings, key=repr)
    assert sorted(rows.documents) == sorted(twin.documents)
    assert rows.skills == twin.skills


@pytest.fixture
def rendered_project(project, vance, admin, make_document):
    tenant = project.tenant
    make_document(vance, "agent.md", "tenant-wide\n")
    make_document(vance, "coder.md", "tenant-wide coder\n")
    make_document(vance, ".AGENTS/tenant.md", "not the project's context\n")
    make_document(project, "agent.md", "project\n")
    make_document(project, "coder.md", "project coder\n")
    make_document(project, "other.md", "never read\n")
    make_document(project, ".AGENTS/overview.md", "overview\n")
    make_document(project, ".AGENTS/notes.txt", "not markdown\n")
    make_document(project, ".AGENTS/deep/inner.md", "nested\n")
    gone = make_document(project, ".AGENTS/gone.md", "deleted\n")
    document_service.document_delete(document=gone, base_version=1, user=admin)
    policy_service.setting_set(
        tenant=tenant, project=None, key="memory.budget", value="9000", user=admin
    )
    policy_service.setting_set(
        tenant=tenant, project=None, key="memory.style", value="terse", enforced=True, user=admin
    )
    policy_service.setting_set(
        tenant=tenant, project=project, key="memory.budget", value="4000", user=admin
    )
    policy_service.recipe_create(
        tenant=tenant,
        name="coder",
        params={AGENT_DOC_PARAM: "coder.md"},
        profiles={"cli": {"useClientAgentDoc": True}},
        user=admin,
    )
    policy_service.recipe_create(tenant=tenant, name="plain", params={}, profiles={}, user=admin)
    for where, name in ((vance, "handoff"), (vance, "review"), (project, "review")):
        skill_md = f"---\nname: {name}\ndescription: {where.slug} {name}\n---\nSteps.\n"
        skill_service.skill_create(
            project=where, name=name, files={"SKILL.md": skill_md}, user=admin
        )
    gone_skill = skill_service.skill_create(
        project=project,
        name="gone",
        files={"SKILL.md": "---\nname: gone\ndescription: x\n---\n"},
        user=admin,
    ).skill
    skill_service.skill_delete(skill=gone_skill, base_version=1, user=admin)
    return project


@pytest.mark.parametrize("recipe_name", [None, "coder", "plain", "nope"])
def test_render_rows_are_the_orm_read(rendered_project, recipe_name, django_assert_num_queries):
    with django_assert_num_queries(1):
        rows = render_reads.render_rows(
            project=rendered_project, recipe_name=recipe_name, context_prefix=PREFIX
        )
    _same(rows, _orm_render_rows(project=rendered_project, recipe_name=recipe_name))


def test_render_rows_read_what_the_render_needs(rendered_project):
    rows = render_reads.render_rows(
        project=rendered_project, recipe_name="coder", context_prefix=PREFIX
    )
    assert rows.recipe == ({AGENT_DOC_PARAM: "coder.md"}, {"cli": {"useClientAgentDoc": True}})
    assert {s.value for s in rows.settings} == {"9000", "terse", "4000"}
    paths = sorted(
        (project_id == rendered_project.pk, path) for project_id, path, *_ in rows.documents
    )
    assert paths == [
        (False, "agent.md"),
        (False, "coder.md"),
        (True, ".AGENTS/overview.md"),
        (True, "agent.md"),
        (True, "coder.md"),
    ]
    skills = [
        (project_id == rendered_project.pk, name, d) for project_id, name, d, *_ in rows.skills
    ]
    assert sorted(skills) == [
        (False, "handoff", "_vance handoff"),
        (False, "review", "_vance review"),
        (True, "review", "web review"),
    ]


def test_render_rows_of_another_tenant_read_nothing_of_this_one(rendered_project, other_tenant):
    foreign = other_tenant.projects.get(slug=RESERVED_PROJECT)
    rows = render_reads.render_rows(project=foreign, recipe_name="coder", context_prefix=PREFIX)
    assert rows == RenderRows(recipe=None, settings=(), documents=())
    _same(rows, _orm_render_rows(project=foreign, recipe_name="coder"))


@pytest.fixture
def labelled_project(rendered_project, admin):
    """agent.md of the project and of `_vance` at version 2, `canary` on version 1 of the
    project's (and nowhere else), `production` on version 2 of `_vance`'s; the recipe
    `canary` reads by `canary`."""
    tenant = rendered_project.tenant
    vance = tenant.projects.get(slug=RESERVED_PROJECT)
    for project in (rendered_project, vance):
        document = Document.objects.get(project=project, path="agent.md")
        document_service.document_write(
            document=document, body=f"{project.slug} two\n", base_version=1, user=admin
        )
    project_agent = Document.objects.get(project=rendered_project, path="agent.md")
    vance_agent = Document.objects.get(project=vance, path="agent.md")
    label_service.label_move(document=project_agent, name="canary", version=1, user=admin)
    label_service.label_move(document=vance_agent, name="production", version=2, user=admin)
    policy_service.recipe_create(
        tenant=tenant, name="canary", params={LABEL_PARAM: "canary"}, profiles={}, user=admin
    )
    # The project's `review` skill at version 2, `canary` on its version 1.
    review = Skill.objects.get(project=rendered_project, name="review")
    two = f"---\nname: review\ndescription: {rendered_project.slug} review two\n---\nMore.\n"
    review = skill_service.skill_write(
        skill=review, files={"SKILL.md": two}, base_version=1, user=admin
    ).skill
    skill_label_service.skill_label_move(skill=review, name="canary", version=1, user=admin)
    return rendered_project


@pytest.mark.parametrize(
    ("recipe_name", "label"),
    [
        (None, "canary"),
        (None, "production"),
        ("canary", None),
        ("canary", "production"),
        ("coder", "nope"),
        (None, None),
    ],
)
def test_render_rows_by_label_are_the_orm_read(
    labelled_project, recipe_name, label, django_assert_num_queries
):
    with django_assert_num_queries(1):
        rows = render_reads.render_rows(
            project=labelled_project, recipe_name=recipe_name, context_prefix=PREFIX, label=label
        )
    _same(rows, _orm_render_rows(project=labelled_project, recipe_name=recipe_name, label=label))


def test_a_labelled_document_is_read_at_its_label_the_others_at_latest(labelled_project):
    rows = render_reads.render_rows(
        project=labelled_project, recipe_name="canary", context_prefix=PREFIX
    )
    read = {
        (project_id == labelled_project.pk, path): (body, version, labelled)
        for project_id, path, body, version, _, labelled in rows.documents
    }
    assert read[(True, "agent.md")] == ("project\n", 1, True)
    assert read[(False, "agent.md")] == ("_vance two\n", 2, False)
    assert read[(True, ".AGENTS/overview.md")] == ("overview\n", 1, False)


def test_a_labelled_skill_is_read_at_its_label_the_others_at_latest(labelled_project):
    rows = render_reads.render_rows(
        project=labelled_project, recipe_name="canary", context_prefix=PREFIX
    )
    read = {
        (project_id == labelled_project.pk, name): (description, version, labelled)
        for project_id, name, description, version, _, labelled in rows.skills
    }
    assert read[(True, "review")] == ("web review", 1, True)
    assert read[(False, "review")] == ("_vance review", 1, False)
    latest = render_reads.render_rows(
        project=labelled_project, recipe_name="plain", context_prefix=PREFIX
    )
    assert ("web review two", 2, False) in {
        (description, version, labelled)
        for _, _, description, version, _, labelled in latest.skills
    }
