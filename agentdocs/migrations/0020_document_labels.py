"""Labels of document versions (issue 29): the `DocumentLabel` table and its history,
and the label a change request moves when it is a label move under review (not on the
change request's history table: a column added there would change the hash of every
row already in the tenant's chain)."""

import django.db.models.deletion
import django.utils.timezone
import simple_history.models
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("agentdocs", "0019_webhook_history"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="changerequest",
            name="label",
            field=models.CharField(blank=True, default="", max_length=64),
        ),
        migrations.CreateModel(
            name="HistoricalDocumentLabel",
            fields=[
                (
                    "id",
                    models.BigIntegerField(
                        auto_created=True, blank=True, db_index=True, verbose_name="ID"
                    ),
                ),
                (
                    "change_type",
                    models.CharField(
                        blank=True,
                        choices=[
                            ("created", "Created"),
                            ("written", "Written"),
                            ("edited", "Edited"),
                            ("deleted", "Deleted"),
                            ("reverted", "Reverted"),
                            ("restored", "Restored"),
                            ("updated", "Updated"),
                        ],
                        max_length=16,
                    ),
                ),
                (
                    "chain_tenant",
                    models.BigIntegerField(blank=True, db_index=True, editable=False, null=True),
                ),
                ("chain_seq", models.BigIntegerField(blank=True, editable=False, null=True)),
                (
                    "chain_sha256",
                    models.CharField(blank=True, editable=False, max_length=64, null=True),
                ),
                ("name", models.CharField(max_length=64)),
                ("version", models.PositiveIntegerField()),
                ("moved_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("reason", models.TextField(blank=True, default="")),
                ("history_id", models.AutoField(primary_key=True, serialize=False)),
                ("history_date", models.DateTimeField(db_index=True)),
                ("history_change_reason", models.TextField(null=True)),
                (
                    "history_type",
                    models.CharField(
                        choices=[("+", "Created"), ("~", "Changed"), ("-", "Deleted")], max_length=1
                    ),
                ),
                (
                    "document",
                    models.ForeignKey(
                        blank=True,
                        db_constraint=False,
                        null=True,
                        on_delete=django.db.models.deletion.DO_NOTHING,
                        related_name="+",
                        to="agentdocs.document",
                    ),
                ),
                (
                    "history_user",
                    models.ForeignKey(
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "moved_by",
                    models.ForeignKey(
                        blank=True,
                        db_constraint=False,
                        null=True,
                        on_delete=django.db.models.deletion.DO_NOTHING,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "verbose_name": "historical document label",
                "verbose_name_plural": "historical document labels",
                "ordering": ("-history_date", "-history_id"),
                "get_latest_by": ("history_date", "history_id"),
            },
            bases=(simple_history.models.HistoricalChanges, models.Model),
        ),
        migrations.CreateModel(
            name="DocumentLabel",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("name", models.CharField(max_length=64)),
                ("version", models.PositiveIntegerField()),
                ("moved_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("reason", models.TextField(blank=True, default="")),
                (
                    "document",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="labels",
                        to="agentdocs.document",
                    ),
                ),
                (
                    "moved_by",
                    models.ForeignKey(
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["name"],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("document", "name"), name="document_label_unique"
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("version__gte", 1)), name="document_label_version"
                    ),
                ],
            },
        ),
    ]
