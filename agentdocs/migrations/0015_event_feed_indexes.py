"""The activity feed's indexes end with `-id`, as its order does (`-created_at, -id`).

Events written together share one timestamp; with indexes ending at `created_at`,
PostgreSQL read every event of the newest timestamp and sorted them (an Incremental
Sort) to show 50. With the whole order in the index, a page is an Index Scan under a
Limit (bench/README.md, "Large tenant").

On PostgreSQL the indexes are built and dropped CONCURRENTLY: every write emits an
event, and a plain CREATE INDEX would hold them all for as long as it reads a large
installation's events. So the migration is not atomic; other databases build them
as usual.
"""

from typing import Any

from django.contrib.postgres.operations import AddIndexConcurrently, RemoveIndexConcurrently
from django.db import migrations, models


class _Online:
    """The concurrent operation (the parent) on PostgreSQL; ``plain`` everywhere else."""

    plain: Any

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == "postgresql":
            super().database_forwards(app_label, schema_editor, from_state, to_state)
        else:
            self.plain.database_forwards(self, app_label, schema_editor, from_state, to_state)

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == "postgresql":
            super().database_backwards(app_label, schema_editor, from_state, to_state)
        else:
            self.plain.database_backwards(self, app_label, schema_editor, from_state, to_state)


class AddIndexOnline(_Online, AddIndexConcurrently):
    """`AddIndex`, built CONCURRENTLY where PostgreSQL can."""

    plain = migrations.AddIndex


class RemoveIndexOnline(_Online, RemoveIndexConcurrently):
    """`RemoveIndex`, dropped CONCURRENTLY where PostgreSQL can."""

    plain = migrations.RemoveIndex


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY cannot run in a transaction

    dependencies = [
        ("agentdocs", "0014_backfill_events"),
    ]

    operations = [
        # The new indexes first, so the feed has one to read while the old ones go.
        AddIndexOnline(
            model_name="event",
            index=models.Index(fields=["tenant", "-created_at", "-id"], name="event_tenant_feed"),
        ),
        AddIndexOnline(
            model_name="event",
            index=models.Index(
                fields=["tenant", "project", "-created_at", "-id"], name="event_project_feed"
            ),
        ),
        AddIndexOnline(
            model_name="event",
            index=models.Index(
                fields=["tenant", "kind", "-created_at", "-id"], name="event_kind_feed"
            ),
        ),
        RemoveIndexOnline(model_name="event", name="event_tenant_recent"),
        RemoveIndexOnline(model_name="event", name="event_project_recent"),
        RemoveIndexOnline(model_name="event", name="event_kind_recent"),
    ]
