"""Edit locks of documents (`services.document_locks`): a lock holds other writers off
until it expires, another member takes or releases it only with force, and its time to
live is checked."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from agentdocs.core.errors import InvalidInput, Locked
from agentdocs.models import Document
from agentdocs.selectors import document_locks as lock_selectors
from agentdocs.services import document_locks
from agentdocs.services import documents as svc

pytestmark = pytest.mark.django_db


@pytest.fixture
def doc(project, writer):
    return svc.document_create(
        project=project, path="agent.md", body="# Rules\n- one\n", user=writer, reason="start"
    )


def history_rows(document: Document):
    return list(document.history.order_by("history_id"))


def test_lock_blocks_other_writers_until_it_expires(doc, writer, admin):
    document_locks.document_lock(document=doc, user=writer, ttl_seconds=60)
    with pytest.raises(Locked) as locked:
        svc.document_write(document=doc, body="admin text", base_version=1, user=admin)
    assert locked.value.extra["lock"]["holder"] == "bob"
    # The holder still writes; taking a lock wrote no version.
    doc = svc.document_write(document=doc, body="mine", base_version=1, user=writer).document
    assert doc.version == 2 and len(history_rows(doc)) == 2
    # Expired locks are ignored.
    Document.objects.filter(pk=doc.pk).update(lock_expires_at=timezone.now() - timedelta(seconds=1))
    doc = svc.document_write(document=doc, body="admin text", base_version=2, user=admin).document
    assert doc.version == 3


def test_another_user_cannot_take_or_release_a_live_lock_without_force(doc, writer, admin):
    document_locks.document_lock(document=doc, user=writer)
    with pytest.raises(Locked):
        document_locks.document_lock(document=doc, user=admin)
    with pytest.raises(Locked):
        document_locks.document_unlock(document=doc, user=admin)
    broken = document_locks.document_lock(document=doc, user=admin, force=True)
    assert broken.lock_holder == admin
    released = document_locks.document_unlock(document=doc, user=admin)
    assert lock_selectors.lock_state(released) is None


@pytest.mark.parametrize("ttl", [0, -5, 10**9, "60", True])
def test_lock_ttl_is_validated(doc, writer, ttl):
    with pytest.raises(InvalidInput) as error:
        document_locks.document_lock(document=doc, user=writer, ttl_seconds=ttl)
    assert error.value.field == "ttl_seconds"
