"""`agentdocs.sql.archive` against its ORM twin: the one UPDATE of a batch's archive
fields leaves the rows as `bulk_update` conditional on `archived_at IS NULL` does."""

from __future__ import annotations

import pytest
from django.db import connection
from django.utils import timezone

from agentdocs.models import BindingRecord
from agentdocs.services import bindings as binding_service
from agentdocs.sql.archive import archive_fields_set
from tests.conftest import need_service

FIELDS = ("archive_path", "archive_sha256", "archived_at")


def _records(project, writer, count: int) -> list[BindingRecord]:
    return [
        BindingRecord.objects.get(
            pk=binding_service.binding_create(
                tenant=project.tenant,
                project=project,
                user=writer,
                process=f"run-{i}",
                manifest={"local": []},
            ).record.pk
        )
        for i in range(count)
    ]


def _fields(record_ids: list[int]) -> list[tuple]:
    return list(BindingRecord.objects.filter(pk__in=record_ids).order_by("pk").values_list(*FIELDS))


@pytest.mark.postgres
@pytest.mark.django_db
def test_the_batch_update_is_the_orm_bulk_update(project, writer):
    need_service(
        "PostgreSQL",
        connection.vendor == "postgresql",
        "the statement is PostgreSQL's; set DATABASE_URL to a PostgreSQL database",
    )
    hand, orm = _records(project, writer, 3), _records(project, writer, 3)
    archived_before = timezone.now()
    # One record of each side is archived already: neither side may change it.
    for side in (hand, orm):
        BindingRecord.objects.filter(pk=side[0].pk).update(
            archive_path="kept", archive_sha256="k" * 64, archived_at=archived_before
        )
    now = timezone.now()
    for n, record in enumerate(hand + orm):
        record.archive_path, record.archive_sha256 = f"p/{n % 3}.json", f"{n % 3}" * 64
        record.archived_at = now
    assert (
        archive_fields_set(
            [(r.pk, r.archive_path, r.archive_sha256) for r in hand], archived_at=now
        )
        == 2
    )
    assert BindingRecord.objects.filter(archived_at__isnull=True).bulk_update(orm, FIELDS) == 2
    assert _fields([r.pk for r in hand]) == _fields([r.pk for r in orm])
    assert _fields([hand[0].pk]) == [("kept", "k" * 64, archived_before)]
    assert archive_fields_set([], archived_at=now) == 0
