"""The version of one document a binding record says its run saw, as an SQL
expression over the record's JSON, for grouping runs by it in one statement.

The Memory Block's account names each layer's document and version
(`memory_block.layers[*].path`/`version`); a run bound by a manifest names them in
`context[*].document`. The first that names ``path`` wins. PostgreSQL and SQLite walk a
JSON array differently, so each has its text; the ORM twin of this expression (in
Python, over the loaded record) is `agentdocs.core.bindings`' shape read by the test
beside it (tests/sql/test_cohorts.py).
"""

from __future__ import annotations

from django.db import connection
from django.db.models import CharField
from django.db.models.expressions import RawSQL

_RECORD = '"agentdocs_bindingrecord"."record"'
_POSTGRESQL = (
    "COALESCE("
    "(SELECT layer->>'version' FROM jsonb_array_elements("
    f"CASE WHEN jsonb_typeof({_RECORD}->'memory_block'->'layers') = 'array' "
    f"THEN {_RECORD}->'memory_block'->'layers' ELSE '[]'::jsonb END) AS layer "
    "WHERE layer->>'path' = %s AND layer->>'version' IS NOT NULL LIMIT 1), "
    "(SELECT entry->'document'->>'version' FROM jsonb_array_elements("
    f"CASE WHEN jsonb_typeof({_RECORD}->'context') = 'array' "
    f"THEN {_RECORD}->'context' ELSE '[]'::jsonb END) AS entry "
    "WHERE entry->'document'->>'path' = %s LIMIT 1))"
)
_SQLITE = (
    "CAST(COALESCE("
    "(SELECT json_extract(value, '$.version') FROM json_each("
    f"{_RECORD}, '$.memory_block.layers') "
    "WHERE json_extract(value, '$.path') = %s "
    "AND json_extract(value, '$.version') IS NOT NULL LIMIT 1), "
    f"(SELECT json_extract(value, '$.document.version') FROM json_each({_RECORD}, '$.context') "
    "WHERE json_extract(value, '$.document.path') = %s LIMIT 1)) AS TEXT)"
)


def document_version(path: str) -> RawSQL:
    """The version of the document at ``path`` a binding record's run saw, as text;
    NULL when the run saw none."""
    text = _POSTGRESQL if connection.vendor == "postgresql" else _SQLITE
    return RawSQL(text, [path, path], output_field=CharField())
