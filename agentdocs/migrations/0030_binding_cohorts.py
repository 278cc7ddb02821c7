"""Issue 39: what each run saw, as outcome cohorts group runs: the binding record's
`label`, `recipe` and `document_versions`, derived from its record
(`agentdocs.core.cohorts.run_cohorts`) and filled here for the records already stored
(derived, not evidence: the records' JSON, signatures and chain are untouched); and
`RenderTurns`, the renders' per-day counts folded from the cache (not chained: counts,
not changes).
"""

import django.db.models.deletion
from django.db import migrations, models

from agentdocs.core.cohorts import run_cohorts

BATCH = 2000


def fill(apps, schema_editor):
    BindingRecord = apps.get_model("agentdocs", "BindingRecord")
    last = 0
    while True:
        batch = list(
            BindingRecord.objects.filter(pk__gt=last).order_by("pk").only("pk", "record")[:BATCH]
        )
        if not batch:
            return
        for record in batch:
            seen = run_cohorts(record.record if isinstance(record.record, dict) else {})
            record.label = seen["label"]
            record.recipe = seen["recipe"]
            record.document_versions = seen["document_versions"]
        BindingRecord.objects.bulk_update(batch, ["label", "recipe", "document_versions"])
        last = batch[-1].pk


class Migration(migrations.Migration):
    dependencies = [
        ("agentdocs", "0029_change_evals"),
    ]

    operations = [
        migrations.AddField(
            model_name="bindingrecord",
            name="label",
            field=models.TextField(blank=True, default=""),
        ),
        migrations.AddField(
            model_name="bindingrecord",
            name="recipe",
            field=models.TextField(blank=True, default=""),
        ),
        migrations.AddField(
            model_name="bindingrecord",
            name="document_versions",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop, elidable=True),
        migrations.AddIndex(
            model_name="bindingrecord",
            index=models.Index(fields=["project", "label", "process"], name="binding_record_label"),
        ),
        migrations.AddIndex(
            model_name="bindingrecord",
            index=models.Index(
                fields=["project", "recipe", "process"], name="binding_record_recipe"
            ),
        ),
        migrations.CreateModel(
            name="RenderTurns",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("day", models.DateField()),
                ("shape", models.TextField()),
                ("shape_sha256", models.CharField(max_length=64)),
                ("turns", models.PositiveBigIntegerField()),
                (
                    "project",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="agentdocs.project",
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(
                        fields=("project", "day", "shape_sha256"), name="render_turns_unique"
                    )
                ],
            },
        ),
    ]
