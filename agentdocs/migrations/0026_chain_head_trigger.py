"""The chain head follows each chained history row inserted at its seq (issue 40).

A chained write moves its tenant's head on with one UPDATE ... RETURNING (locked, the new
seq, the previous link) and computes the row's link; this trigger on every chained
history table stores that link in the head when the row is inserted, in the INSERT's
own round trip, instead of a second UPDATE. It moves only a head whose seq the row took:
a row written any other way (unchained, or forged past the head) leaves the head alone.
`agentdocs.services.audit_chain` checks for the trigger in the same statement and sends
the second UPDATE where a table lacks it, so the chain never depends on it. A history
model added later needs the trigger in its own migration
(tests/sql/test_chain_head.py checks every chained table has it).
"""

from django.db import migrations

HEAD = "agentdocs_auditchainhead"
FUNCTION = f"""
CREATE OR REPLACE FUNCTION agentdocs_chain_head_follows() RETURNS trigger AS $$
BEGIN
    UPDATE {HEAD} SET chain_sha256 = NEW.chain_sha256
     WHERE tenant_id = NEW.chain_tenant AND seq = NEW.chain_seq;
    RETURN NULL;
END
$$ LANGUAGE plpgsql
"""
PG_TRIGGER = """
CREATE TRIGGER {table}_chain_head AFTER INSERT ON {table} FOR EACH ROW
WHEN (NEW.chain_sha256 IS NOT NULL) EXECUTE FUNCTION agentdocs_chain_head_follows()
"""
SQLITE_TRIGGER = f"""
CREATE TRIGGER {{table}}_chain_head AFTER INSERT ON {{table}} FOR EACH ROW
WHEN NEW.chain_sha256 IS NOT NULL
BEGIN
    UPDATE {HEAD} SET chain_sha256 = NEW.chain_sha256
     WHERE tenant_id = NEW.chain_tenant AND seq = NEW.chain_seq;
END
"""


def _chained_tables(apps):
    return sorted(
        model._meta.db_table
        for model in apps.get_app_config("agentdocs").get_models()
        if {"chain_tenant", "chain_seq", "chain_sha256"}
        <= {field.name for field in model._meta.concrete_fields}
    )


def install_on(schema_editor, tables):
    """The trigger on each of ``tables`` (PostgreSQL: with its function)."""
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute(FUNCTION)
        for table in tables:
            schema_editor.execute(PG_TRIGGER.format(table=table))
    elif vendor == "sqlite":
        for table in tables:
            schema_editor.execute(SQLITE_TRIGGER.format(table=table))


def remove_from(schema_editor, tables):
    """The trigger off each of ``tables``."""
    vendor = schema_editor.connection.vendor
    if vendor not in ("postgresql", "sqlite"):
        return
    for table in tables:
        on = f" ON {table}" if vendor == "postgresql" else ""
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_chain_head{on}")


def for_table(table):
    """The `RunPython` pair a later migration installs the trigger on its new chained
    history table with: ``migrations.RunPython(*for_table(TABLE), elidable=False)``."""

    def install_one(apps, schema_editor):
        install_on(schema_editor, [table])

    def remove_one(apps, schema_editor):
        remove_from(schema_editor, [table])

    return install_one, remove_one


def install(apps, schema_editor):
    install_on(schema_editor, _chained_tables(apps))


def remove(apps, schema_editor):
    remove_from(schema_editor, _chained_tables(apps))
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("DROP FUNCTION IF EXISTS agentdocs_chain_head_follows()")


class Migration(migrations.Migration):
    dependencies = [
        ("agentdocs", "0025_skills"),
    ]

    operations = [migrations.RunPython(install, remove, elidable=False)]
