"""Events are written in the change's transaction and announced only once it commits."""

import pytest
from django.db import transaction

from agentdocs.models import Event
from agentdocs.services.events import emit, event_committed


@pytest.fixture
def announced():
    seen: list[Event] = []

    def receiver(sender, event, **kwargs):
        seen.append(event)

    event_committed.connect(receiver)
    yield seen
    event_committed.disconnect(receiver)


@pytest.mark.django_db(transaction=True)
def test_an_event_is_announced_after_commit_with_its_kind_and_action(
    tenant, project, writer, announced
):
    with transaction.atomic():
        event = emit(
            type="document.updated",
            tenant=tenant,
            project=project,
            actor=writer,
            target="agent.md",
            reason="typo",
            version=3,
            data={"path": "agent.md"},
        )
        assert announced == []
    assert [e.id for e in announced] == [event.id]
    stored = Event.objects.get(id=event.id)
    assert (stored.kind, stored.action, stored.actor_name) == ("document", "updated", "bob")
    assert stored.id.startswith("evt_")


@pytest.mark.django_db(transaction=True)
def test_a_rolled_back_change_leaves_no_event_and_announces_nothing(
    tenant, project, writer, announced
):
    with pytest.raises(RuntimeError), transaction.atomic():
        emit(type="document.created", tenant=tenant, project=project, actor=writer, target="x.md")
        raise RuntimeError("the write failed")
    assert announced == []
    assert not Event.objects.filter(target="x.md").exists()
