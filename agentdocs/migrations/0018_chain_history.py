"""Chain the history written before the chain existed: per tenant, every history row
in the order it was written (history_date, then model and id for rows of the same
instant), each linked as `agentdocs.services.audit_chain` links new rows; then the
tenant's chain head. Unapplying forgets the links."""

from django.db import migrations

from agentdocs.core.audit_chain import chain_link
from agentdocs.services.audit_chain import row_values

HISTORY_MODELS = (
    "historicaltenant",
    "historicalproject",
    "historicalmembership",
    "historicalinvitation",
    "historicalsetting",
    "historicalrecipe",
    "historicalprovidermapping",
    "historicaldocument",
    "historicalchangerequest",
    "historicalapitoken",
)
BATCH = 1000


def _tenant_of(name, row, project_tenants):
    if name == "historicaltenant":
        return row.id
    if hasattr(row, "tenant_id"):
        return row.tenant_id
    return project_tenants.get(row.project_id)


def chain(apps, schema_editor):
    Project = apps.get_model("agentdocs", "Project")
    Tenant = apps.get_model("agentdocs", "Tenant")
    Head = apps.get_model("agentdocs", "AuditChainHead")
    project_tenants = dict(Project.objects.values_list("id", "tenant_id"))
    rows_by_tenant = {}
    for name in HISTORY_MODELS:
        model = apps.get_model("agentdocs", name)
        for row in model.objects.order_by("history_id").iterator(chunk_size=BATCH):
            tenant_id = _tenant_of(name, row, project_tenants)
            if tenant_id is not None:
                rows_by_tenant.setdefault(tenant_id, []).append(row)
    for tenant_id in Tenant.objects.values_list("id", flat=True):
        rows = rows_by_tenant.get(tenant_id, [])
        rows.sort(key=lambda r: (r.history_date, r._meta.label_lower, r.history_id))
        previous, changed = "", {}
        for seq, row in enumerate(rows, start=1):
            row.chain_tenant, row.chain_seq = tenant_id, seq
            previous = chain_link(previous, model=row._meta.label_lower, row=row_values(row))
            row.chain_sha256 = previous
            changed.setdefault(type(row), []).append(row)
        for model, changed_rows in changed.items():
            model.objects.bulk_update(
                changed_rows, ["chain_tenant", "chain_seq", "chain_sha256"], batch_size=BATCH
            )
        Head.objects.update_or_create(
            tenant_id=tenant_id, defaults={"seq": len(rows), "chain_sha256": previous}
        )


def unchain(apps, schema_editor):
    for name in HISTORY_MODELS:
        apps.get_model("agentdocs", name).objects.update(
            chain_tenant=None, chain_seq=None, chain_sha256=None
        )
    apps.get_model("agentdocs", "AuditChainHead").objects.all().delete()


class Migration(migrations.Migration):
    dependencies = [("agentdocs", "0017_evidence")]

    operations = [migrations.RunPython(chain, unchain)]
