"""An index for a document's history, newest version first.

The history API and page read one document's versions a page at a time
(`selectors.documents.document_history`: `WHERE id = %s ORDER BY version DESC,
history_id DESC`). With only simple-history's index on `id`, a document with
10,000 versions was read whole and sorted for every page; with this one a page
reads its own rows (bench/README.md, "Large tenant"). simple-history builds the
historical model, which declares no indexes of its own, so the index is created
here without a model state (`makemigrations` has nothing to compare it with).
"""

from __future__ import annotations

from django.db import migrations

INDEX = "agentdocs_historicaldocument_versions"


class Migration(migrations.Migration):
    dependencies = [("agentdocs", "0011_webhooks")]

    operations = [
        migrations.RunSQL(
            sql=f"CREATE INDEX {INDEX} ON agentdocs_historicaldocument "
            "(id, version DESC, history_id DESC)",
            reverse_sql=f"DROP INDEX {INDEX}",
        ),
    ]
