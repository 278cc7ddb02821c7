"""Everything a Memory Block render reads, in one statement: the recipe, the
`memory.*` settings of the tenant and the project, the live documents the render
may use, and the live skills of the project and of `_vance` (their names and
descriptions, for the skills index; never their files).

The render is the hot path (every turn of every agent process), so this read is
written by hand once: the ORM would take longer to compile these conditions than
the database takes to run them. Plain SQL that SQLite and PostgreSQL both run.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.db import connection

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

# The SQL fragment that reads a recipe's `agentDocument` (and `label`) as text, per database.
_AGENT_DOCUMENT_OF = {
    "postgresql": f"r.params ->> '{AGENT_DOC_PARAM}'",
    "sqlite": f"json_extract(r.params, '$.{AGENT_DOC_PARAM}')",
}
_LABEL_OF = {
    "postgresql": f"r.params ->> '{LABEL_PARAM}'",
    "sqlite": f"json_extract(r.params, '$.{LABEL_PARAM}')",
}

# The documents are those at the agent document's path at the project and `_vance`
# levels (`agent.md` and the path the recipe names), and the project's context
# documents. LIKE narrows those to direct `*.md` children of the context folder;
# SQLite's LIKE ignores case, so the caller applies the exact rule again in Python.
# Read by a label (the request's, else the recipe's `params.label`), a document that
# has it gives the version it names, from its history row, and says so (1 in the last
# column); one without it gives its latest version (0). No label: every document 0.
# Skills likewise: a skill with the label gives the labelled version's description,
# number and digest (from its history row), else its latest.
_RENDER_READS = """
SELECT 'recipe', NULL, r.name, CAST(r.params AS TEXT), NULL, CAST(r.profiles AS TEXT),
       CAST(NULL AS INTEGER)
  FROM {recipe} r
 WHERE r.tenant_id = %s AND r.name = %s
UNION ALL
SELECT 'setting', s.project_id, s.key, s.value, CASE WHEN s.enforced THEN 1 ELSE 0 END, NULL,
       NULL
  FROM {setting} s
 WHERE s.tenant_id = %s AND (s.project_id IS NULL OR s.project_id = %s)
UNION ALL
SELECT 'document', d.project_id, d.path, COALESCE(h.body, d.body),
       COALESCE(h.version, d.version), COALESCE(h.sha256, d.sha256),
       CASE WHEN h.history_id IS NULL THEN 0 ELSE 1 END
  FROM {document} d
  LEFT JOIN {label} l
    ON l.document_id = d.id
   AND l.name = COALESCE(%s, (SELECT {label_of} FROM {recipe} r
                               WHERE r.tenant_id = %s AND r.name = %s))
  LEFT JOIN {history} h
    ON h.history_id = (SELECT MAX(h2.history_id) FROM {history} h2
                        WHERE h2.id = d.id AND h2.version = l.version)
 WHERE NOT d.is_deleted
   AND d.project_id IN (%s, (SELECT p.id FROM {project} p WHERE p.tenant_id = %s AND p.slug = %s))
   AND (d.path IN (%s, (SELECT {agent_document} FROM {recipe} r
                         WHERE r.tenant_id = %s AND r.name = %s))
        OR (d.project_id = %s AND d.path LIKE %s AND d.path NOT LIKE %s))
UNION ALL
SELECT 'skill', k.project_id, k.name, COALESCE(hk.description, k.description),
       COALESCE(hk.version, k.version), COALESCE(hk.sha256, k.sha256),
       CASE WHEN hk.history_id IS NULL THEN 0 ELSE 1 END
  FROM {skill} k
  LEFT JOIN {skill_label} kl
    ON kl.skill_id = k.id
   AND kl.name = COALESCE(%s, (SELECT {label_of} FROM {recipe} r
                                WHERE r.tenant_id = %s AND r.name = %s))
  LEFT JOIN {skill_history} hk
    ON hk.history_id = (SELECT MAX(h3.history_id) FROM {skill_history} h3
                         WHERE h3.id = k.id AND h3.version = kl.version)
 WHERE NOT k.is_deleted
   AND k.project_id IN (%s, (SELECT p.id FROM {project} p WHERE p.tenant_id = %s AND p.slug = %s))
"""


@dataclass(frozen=True)
class RenderRows:
    """The rows of one render, as plain data (kept in the render cache as they are)."""

    recipe: tuple[Any, Any] | None  # (params, profiles) of the named recipe, when it exists
    settings: tuple[PolicySetting, ...]
    # project_id, path, body, version, sha256, and whether the version is the label's
    # (False: the latest, as no label was asked for or the document has none).
    documents: tuple[tuple[int, str, str, int, str, bool], ...]
    # The live skills of the project and of `_vance`: project_id, name, description,
    # version, sha256 (the bundle's digest), and whether the version is the label's (as
    # for documents), by project and name.
    skills: tuple[tuple[int, str, str, int, str, bool], ...] = ()


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


@functools.cache
def _render_reads_sql(vendor: str) -> str:
    if vendor not in _AGENT_DOCUMENT_OF:
        raise ImproperlyConfigured(
            f"The Memory Block reads run on SQLite or PostgreSQL, not {vendor}."
        )
    return _RENDER_READS.format(
        recipe=Recipe._meta.db_table,
        setting=Setting._meta.db_table,
        document=Document._meta.db_table,
        project=Project._meta.db_table,
        label=DocumentLabel._meta.db_table,
        history=Document.history.model._meta.db_table,
        skill=Skill._meta.db_table,
        skill_label=SkillLabel._meta.db_table,
        skill_history=Skill.history.model._meta.db_table,
        agent_document=_AGENT_DOCUMENT_OF[vendor],
        label_of=_LABEL_OF[vendor],
    )


def render_rows(
    *, project: Project, recipe_name: str | None, context_prefix: str, label: str | None = None
) -> RenderRows:
    """The recipe ``recipe_name`` of the project's tenant (None when it has none of that
    name), the tenant's and the project's settings, and the live documents a render of
    ``project`` may use: the agent document candidates in the project and in `_vance`,
    and the project's direct ``context_prefix*.md`` children, each at its version under
    ``label`` (else the recipe's `params.label`) where it has that label; and the live
    skills of the project and of `_vance`, each likewise at its labelled version. One
    query."""
    sql = _render_reads_sql(connection.vendor)
    tenant_id, project_id = project.tenant_id, project.pk
    params = [
        *(tenant_id, recipe_name),
        *(tenant_id, project_id),
        *(label, tenant_id, recipe_name),
        *(project_id, tenant_id, RESERVED_PROJECT),
        *(DEFAULT_AGENT_DOCUMENT, tenant_id, recipe_name),
        *(project_id, context_prefix + "%.md", context_prefix + "%/%"),
        *(label, tenant_id, recipe_name),
        *(project_id, tenant_id, RESERVED_PROJECT),
    ]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    recipe = None
    settings_rows: list[PolicySetting] = []
    documents = []
    skills = []
    for kind, row_project_id, name, text, number, extra, labelled in rows:
        if kind == "recipe":
            recipe = (_json(text), _json(extra))
        elif kind == "setting":
            settings_rows.append(
                PolicySetting(
                    key=name,
                    value=text,
                    level="tenant" if row_project_id is None else "project",
                    enforced=bool(number),
                )
            )
        elif kind == "skill":
            skills.append((row_project_id, name, text, number, extra, bool(labelled)))
        else:
            documents.append((row_project_id, name, text, number, extra, bool(labelled)))
    return RenderRows(
        recipe=recipe,
        settings=tuple(settings_rows),
        documents=tuple(documents),
        skills=tuple(sorted(skills)),
    )
