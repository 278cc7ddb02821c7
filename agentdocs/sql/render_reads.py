"""Everything a Memory Block render reads, in one statement: the recipe, the
`memory.*` settings of the tenant and the project, and the live documents the
render may use.

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
from agentdocs.core.recipes import AGENT_DOC_PARAM, DEFAULT_AGENT_DOCUMENT
from agentdocs.models import RESERVED_PROJECT, Document, Project, Recipe, Setting

# The SQL fragment that reads a recipe's `agentDocument` as text, per database.
_AGENT_DOCUMENT_OF = {
    "postgresql": f"r.params ->> '{AGENT_DOC_PARAM}'",
    "sqlite": f"json_extract(r.params, '$.{AGENT_DOC_PARAM}')",
}

# The documents are those at the agent document's path at the project and `_vance`
# levels (`agent.md` and the path the recipe names), and the project's context
# documents. LIKE narrows those to direct `*.md` children of the context folder;
# SQLite's LIKE ignores case, so the caller applies the exact rule again in Python.
_RENDER_READS = """
SELECT 'recipe', NULL, r.name, CAST(r.params AS TEXT), NULL, CAST(r.profiles AS TEXT)
  FROM {recipe} r
 WHERE r.tenant_id = %s AND r.name = %s
UNION ALL
SELECT 'setting', s.project_id, s.key, s.value, CASE WHEN s.enforced THEN 1 ELSE 0 END, NULL
  FROM {setting} s
 WHERE s.tenant_id = %s AND (s.project_id IS NULL OR s.project_id = %s)
UNION ALL
SELECT 'document', d.project_id, d.path, d.body, d.version, d.sha256
  FROM {document} d
 WHERE NOT d.is_deleted
   AND d.project_id IN (%s, (SELECT p.id FROM {project} p WHERE p.tenant_id = %s AND p.slug = %s))
   AND (d.path IN (%s, (SELECT {agent_document} FROM {recipe} r
                         WHERE r.tenant_id = %s AND r.name = %s))
        OR (d.project_id = %s AND d.path LIKE %s AND d.path NOT LIKE %s))
"""


@dataclass(frozen=True)
class RenderRows:
    """The rows of one render, as plain data (kept in the render cache as they are)."""

    recipe: tuple[Any, Any] | None  # (params, profiles) of the named recipe, when it exists
    settings: tuple[PolicySetting, ...]
    documents: tuple[tuple[int, str, str, int, str], ...]  # project_id, path, body, version, sha


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
        agent_document=_AGENT_DOCUMENT_OF[vendor],
    )


def render_rows(*, project: Project, recipe_name: str | None, context_prefix: str) -> RenderRows:
    """The recipe ``recipe_name`` of the project's tenant (None when it has none of that
    name), the tenant's and the project's settings, and the live documents a render of
    ``project`` may use: the agent document candidates in the project and in `_vance`,
    and the project's direct ``context_prefix*.md`` children. One query."""
    sql = _render_reads_sql(connection.vendor)
    tenant_id, project_id = project.tenant_id, project.pk
    params = [
        *(tenant_id, recipe_name),
        *(tenant_id, project_id),
        *(project_id, tenant_id, RESERVED_PROJECT),
        *(DEFAULT_AGENT_DOCUMENT, tenant_id, recipe_name),
        *(project_id, context_prefix + "%.md", context_prefix + "%/%"),
    ]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    recipe = None
    settings_rows: list[PolicySetting] = []
    documents = []
    for kind, row_project_id, name, text, number, extra in rows:
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
        else:
            documents.append((row_project_id, name, text, number, extra))
    return RenderRows(recipe=recipe, settings=tuple(settings_rows), documents=tuple(documents))
