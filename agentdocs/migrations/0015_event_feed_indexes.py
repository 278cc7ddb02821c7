"""The activity feed's indexes end with `-id`, as its order does (`-created_at, -id`).

Events written together share one timestamp; with indexes ending at `created_at`,
PostgreSQL read every event of the newest timestamp and sorted them (an Incremental
Sort) to show 50. With the whole order in the index, a page is an Index Scan under a
Limit (bench/README.md, "Large tenant").
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("agentdocs", "0014_backfill_events"),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name="event",
            name="event_tenant_recent",
        ),
        migrations.RemoveIndex(
            model_name="event",
            name="event_project_recent",
        ),
        migrations.RemoveIndex(
            model_name="event",
            name="event_kind_recent",
        ),
        migrations.AddIndex(
            model_name="event",
            index=models.Index(fields=["tenant", "-created_at", "-id"], name="event_tenant_feed"),
        ),
        migrations.AddIndex(
            model_name="event",
            index=models.Index(
                fields=["tenant", "project", "-created_at", "-id"], name="event_project_feed"
            ),
        ),
        migrations.AddIndex(
            model_name="event",
            index=models.Index(
                fields=["tenant", "kind", "-created_at", "-id"], name="event_kind_feed"
            ),
        ),
    ]
