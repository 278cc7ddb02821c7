"""Setting the archive fields of a batch of binding records, in one statement.

Archival (`agentdocs.services.archival`) writes a batch's files and then sets each
record's own path and digest. The ORM's `bulk_update` compiles a CASE per record and
field, which took longer than writing the batch's files; this is one UPDATE joined
to three arrays, the same text whatever the batch's size. PostgreSQL only: other
databases use the ORM twin (`bulk_update`, compared with this in tests/sql/).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from django.db import connection

from agentdocs.models import BindingRecord

_SET_ARCHIVE_FIELDS = """
UPDATE {table} AS r
   SET archive_path = v.path, archive_sha256 = v.sha256, archived_at = %s
  FROM unnest(%s::bigint[], %s::text[], %s::text[]) AS v(id, path, sha256)
 WHERE r.id = v.id AND r.archived_at IS NULL
"""


def archive_fields_set(rows: Sequence[tuple[int, str, str]], *, archived_at: dt.datetime) -> int:
    """Set ``archive_path`` and ``archive_sha256`` of each (id, path, sha256) of ``rows``,
    and ``archived_at``, where the record is still unarchived; how many were set."""
    if not rows:
        return 0
    ids, paths, digests = (list(column) for column in zip(*rows, strict=True))
    with connection.cursor() as cursor:
        cursor.execute(
            _SET_ARCHIVE_FIELDS.format(
                table=connection.ops.quote_name(BindingRecord._meta.db_table)
            ),
            [archived_at, ids, paths, digests],
        )
        return cursor.rowcount
