"""Repositories and their checks: what each repository reporting to a project last
said of its exported agent files (docs/repositories.md)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("agentdocs", "0020_document_labels"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="Repository",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("remote", models.CharField(blank=True, max_length=1000)),
                ("name", models.CharField(blank=True, max_length=200)),
                ("branch", models.CharField(blank=True, max_length=255)),
                ("first_seen", models.DateTimeField()),
                ("last_seen", models.DateTimeField()),
                ("last_commit", models.CharField(blank=True, max_length=64)),
                ("dirty", models.BooleanField(default=False)),
                ("formats", models.CharField(max_length=500)),
                ("recipe", models.CharField(blank=True, max_length=200)),
                ("profile", models.CharField(blank=True, max_length=200)),
                ("export_sha256", models.CharField(max_length=64)),
                ("files", models.JSONField(default=dict)),
                ("baseline_sha256", models.CharField(blank=True, max_length=64)),
                ("baseline", models.JSONField(default=dict)),
                ("state", models.CharField(max_length=20)),
                (
                    "last_run",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="agentdocs.bindingrecord",
                    ),
                ),
                (
                    "project",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="repositories",
                        to="agentdocs.project",
                    ),
                ),
            ],
            options={
                "ordering": ["remote", "name", "branch", "id"],
            },
        ),
        migrations.CreateModel(
            name="RepositoryCheck",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("kind", models.CharField(max_length=10)),
                ("commit", models.CharField(blank=True, max_length=64)),
                ("branch", models.CharField(blank=True, max_length=255)),
                ("dirty", models.BooleanField(default=False)),
                ("formats", models.CharField(max_length=500)),
                ("export_sha256", models.CharField(max_length=64)),
                ("files", models.JSONField(default=dict)),
                ("state", models.CharField(max_length=20)),
                ("reported_at", models.DateTimeField()),
                (
                    "binding",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="agentdocs.bindingrecord",
                    ),
                ),
                (
                    "reported_by",
                    models.ForeignKey(
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "repository",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="checks",
                        to="agentdocs.repository",
                    ),
                ),
                (
                    "token",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="agentdocs.apitoken",
                    ),
                ),
            ],
            options={
                "ordering": ["-reported_at", "-id"],
            },
        ),
        migrations.AddConstraint(
            model_name="repository",
            constraint=models.UniqueConstraint(
                fields=("project", "remote", "name", "branch"), name="repository_identity"
            ),
        ),
        migrations.AddIndex(
            model_name="repositorycheck",
            index=models.Index(
                fields=["repository", "-reported_at", "-id"], name="agentdocs_r_reposit_5d2964_idx"
            ),
        ),
    ]
