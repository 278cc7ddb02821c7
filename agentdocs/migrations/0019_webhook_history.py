"""History for webhooks and reviews, which had none: their tables, then a first row
for each webhook and review there is, appended to its tenant's hash chain so that the
chain covers them (as `agentdocs.services.audit_chain` links new rows). A webhook's
first row is its state now, dated and credited as its creation ("+"), without its
secret and with its URL as `core.webhooks.url_shown` and `url_digest` keep it; a
review's is the review, by its reviewer at its time. Unapplying drops the tables and
rewinds each chain head to the rows before them."""

import django.db.models.deletion
import django.utils.timezone
import simple_history.models
from django.conf import settings
from django.db import migrations, models
from django.db.models import Max

from agentdocs.core.audit_chain import chain_link
from agentdocs.core.webhooks import url_digest, url_shown
from agentdocs.services.audit_chain import row_values

BATCH = 1000
WEBHOOK_REASON = "Webhook created (its state when its history began)"


def _webhook_rows(apps):
    Webhook = apps.get_model("agentdocs", "Webhook")
    History = apps.get_model("agentdocs", "HistoricalWebhook")
    for webhook in Webhook.objects.order_by("id").iterator(chunk_size=BATCH):
        yield (
            webhook.tenant_id,
            History(
                id=webhook.id,
                tenant_id=webhook.tenant_id,
                events=webhook.events,
                projects=webhook.projects,
                description=webhook.description,
                active=webhook.active,
                disabled_at=webhook.disabled_at,
                disabled_reason=webhook.disabled_reason,
                created_by_id=webhook.created_by_id,
                created_at=webhook.created_at,
                updated_at=webhook.updated_at,
                url_shown=url_shown(webhook.url),
                url_digest=url_digest(webhook.url, secret=settings.SECRET_KEY),
                history_date=webhook.created_at,
                history_user_id=webhook.created_by_id,
                history_change_reason=WEBHOOK_REASON,
                history_type="+",
                change_type="created",
            ),
        )


def _review_rows(apps):
    Review = apps.get_model("agentdocs", "Review")
    History = apps.get_model("agentdocs", "HistoricalReview")
    reviews = Review.objects.select_related("change_request").order_by("at", "id")
    for review in reviews.iterator(chunk_size=BATCH):
        yield (
            review.change_request.tenant_id,
            History(
                id=review.id,
                change_request_id=review.change_request_id,
                reviewer_id=review.reviewer_id,
                decision=review.decision,
                comment=review.comment,
                at=review.at,
                history_date=review.at,
                history_user_id=review.reviewer_id,
                history_change_reason=review.comment or review.decision,
                history_type="+",
                change_type="created",
            ),
        )


def chain(apps, schema_editor):
    Head = apps.get_model("agentdocs", "AuditChainHead")
    by_tenant = {}
    for tenant_id, row in [*_review_rows(apps), *_webhook_rows(apps)]:
        by_tenant.setdefault(tenant_id, []).append(row)
    for tenant_id, rows in by_tenant.items():
        rows.sort(key=lambda r: (r.history_date, r._meta.label_lower, r.id))
        head, _ = Head.objects.select_for_update().get_or_create(tenant_id=tenant_id)
        seq, previous = head.seq, head.chain_sha256
        for row in rows:
            seq += 1
            row.chain_tenant, row.chain_seq = tenant_id, seq
            previous = chain_link(previous, model=row._meta.label_lower, row=row_values(row))
            row.chain_sha256 = previous
        for model in {type(row) for row in rows}:
            model.objects.bulk_create([r for r in rows if type(r) is model], batch_size=BATCH)
        Head.objects.filter(pk=head.pk).update(seq=seq, chain_sha256=previous)


def unchain(apps, schema_editor):
    """Rewind each head to its last row of the other history models (the tables of this
    migration go with it): a chain with rows of these models after it no longer verifies
    past them, as a truncated chain should not."""
    Head = apps.get_model("agentdocs", "AuditChainHead")
    others = [
        model
        for model in apps.get_app_config("agentdocs").get_models()
        if model._meta.model_name.startswith("historical")
        and model._meta.model_name not in ("historicalwebhook", "historicalreview")
    ]
    for head in Head.objects.all():
        last = None
        for model in others:
            found = model.objects.filter(chain_tenant=head.tenant_id).aggregate(
                top=Max("chain_seq")
            )["top"]
            if found is not None and (last is None or found > last[0]):
                row = model.objects.get(chain_tenant=head.tenant_id, chain_seq=found)
                last = (found, row.chain_sha256)
        head.seq, head.chain_sha256 = last or (0, "")
        head.save(update_fields=["seq", "chain_sha256"])


class Migration(migrations.Migration):
    dependencies = [
        ("agentdocs", "0018_chain_history"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="HistoricalReview",
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
                (
                    "decision",
                    models.CharField(
                        choices=[("approve", "Approve"), ("reject", "Reject")], max_length=16
                    ),
                ),
                ("comment", models.TextField(blank=True, default="")),
                ("at", models.DateTimeField(default=django.utils.timezone.now)),
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
                    "change_request",
                    models.ForeignKey(
                        blank=True,
                        db_constraint=False,
                        null=True,
                        on_delete=django.db.models.deletion.DO_NOTHING,
                        related_name="+",
                        to="agentdocs.changerequest",
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
                    "reviewer",
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
                "verbose_name": "historical review",
                "verbose_name_plural": "historical reviews",
                "ordering": ("-history_date", "-history_id"),
                "get_latest_by": ("history_date", "history_id"),
            },
            bases=(simple_history.models.HistoricalChanges, models.Model),
        ),
        migrations.CreateModel(
            name="HistoricalWebhook",
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
                ("url_shown", models.CharField(blank=True, default="", max_length=2000)),
                ("url_digest", models.CharField(blank=True, default="", max_length=64)),
                ("events", models.JSONField(default=list)),
                ("projects", models.JSONField(blank=True, default=None, null=True)),
                ("description", models.CharField(blank=True, default="", max_length=500)),
                ("active", models.BooleanField(default=True)),
                ("disabled_at", models.DateTimeField(blank=True, null=True)),
                ("disabled_reason", models.CharField(blank=True, default="", max_length=500)),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("updated_at", models.DateTimeField(default=django.utils.timezone.now)),
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
                    "created_by",
                    models.ForeignKey(
                        blank=True,
                        db_constraint=False,
                        null=True,
                        on_delete=django.db.models.deletion.DO_NOTHING,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
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
                    "tenant",
                    models.ForeignKey(
                        blank=True,
                        db_constraint=False,
                        null=True,
                        on_delete=django.db.models.deletion.DO_NOTHING,
                        related_name="+",
                        to="agentdocs.tenant",
                    ),
                ),
            ],
            options={
                "verbose_name": "historical webhook",
                "verbose_name_plural": "historical webhooks",
                "ordering": ("-history_date", "-history_id"),
                "get_latest_by": ("history_date", "history_id"),
            },
            bases=(simple_history.models.HistoricalChanges, models.Model),
        ),
        migrations.RunPython(chain, unchain),
    ]
