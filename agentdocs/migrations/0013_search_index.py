"""The full-text search column and its index (PostgreSQL only; SQLite searches without).

`search_vector` is the stored value of `agentdocs.selectors.search.search_vector()`:
the path (weight A, `/._-` read as spaces) and the body (weight B). PostgreSQL keeps
it up to date on every write; the search filters and ranks on it through the GIN
index over the live documents, reading no bodies but those on the answered page.
`tests/sql/test_search.py` checks the column against the ORM expression.
"""

from django.db import migrations

CREATE = [
    """
    ALTER TABLE agentdocs_document ADD COLUMN search_vector tsvector
    GENERATED ALWAYS AS (
        setweight(to_tsvector('english'::regconfig,
            COALESCE(translate(path, '/._-', '    '), '')), 'A')
        || setweight(to_tsvector('english'::regconfig, COALESCE(body, '')), 'B')
    ) STORED
    """,
    """
    CREATE INDEX document_search ON agentdocs_document USING gin (search_vector)
    WHERE NOT is_deleted
    """,
]

DROP = [
    "DROP INDEX IF EXISTS document_search",
    "ALTER TABLE agentdocs_document DROP COLUMN IF EXISTS search_vector",
]


def _on_postgresql(statements):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            for statement in statements:
                schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):
    dependencies = [
        ("agentdocs", "0012_performance_indexes"),
    ]

    operations = [
        migrations.RunPython(_on_postgresql(CREATE), _on_postgresql(DROP), elidable=False),
    ]
