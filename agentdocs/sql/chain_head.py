"""Moving a tenant's audit chain head on, in one statement of plain SQL.

The ORM took longer to compile its SELECT FOR UPDATE and UPDATE than PostgreSQL took to
run them. `head_advance` moves the head on by one and locks it, answering its new seq,
the previous link, and whether the history table has the trigger that stores the head's
link when the row is inserted (`HEAD_TRIGGER`, migration 0026); `head_link` stores the
link itself where no trigger does. `agentdocs.services.audit_chain` decides which.
"""

from __future__ import annotations

from django.db import connection, connections

from agentdocs.models import AuditChainHead

HEAD_TRIGGER = "{table}_chain_head"
_HEAD = AuditChainHead._meta.db_table
_TRIGGER_PRESENT = {
    "postgresql": "SELECT 1 FROM pg_trigger WHERE tgrelid = %s::regclass AND tgname = %s "
    "AND tgenabled <> 'D'",
    "sqlite": "SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND tbl_name = %s AND name = %s",
}
_HEAD_ADVANCE = (
    f"UPDATE {_HEAD} SET seq = seq + 1 WHERE tenant_id = %s "
    "RETURNING seq, chain_sha256, EXISTS ({present})"
)
_HEAD_LINK = f"UPDATE {_HEAD} SET seq = %s, chain_sha256 = %s WHERE tenant_id = %s"


def head_advance_supported() -> bool:
    """Whether this database moves the head in one statement (RETURNING and triggers)."""
    return connection.vendor in _TRIGGER_PRESENT


def head_advance(tenant_id: int, table: str) -> tuple[int, str, bool] | None:
    """The head moved on by one and locked: its new seq, the previous link, and whether
    ``table``'s trigger will store the new link; None when the tenant has no head yet."""
    present = _TRIGGER_PRESENT[connection.vendor]
    with connection.cursor() as cursor:
        cursor.execute(
            _HEAD_ADVANCE.format(present=present),
            [tenant_id, table, HEAD_TRIGGER.format(table=table)],
        )
        head = cursor.fetchone()
    return None if head is None else (int(head[0]), head[1], bool(head[2]))


def head_link(tenant_id: int, *, seq: int, link: str) -> None:
    """Store the head's seq and link (where no trigger stored them)."""
    with connection.cursor() as cursor:
        cursor.execute(_HEAD_LINK, [seq, link, tenant_id])


def tables_with_head_trigger(tables: set[str], using: str = "default") -> set[str]:
    """Those of ``tables`` that have the trigger storing the head's link."""
    target = connections[using]
    present = _TRIGGER_PRESENT.get(target.vendor)
    if present is None:
        return set()
    found = set()
    with target.cursor() as cursor:
        for table in tables:
            cursor.execute(present, [table, HEAD_TRIGGER.format(table=table)])
            if cursor.fetchone() is not None:
                found.add(table)
    return found
