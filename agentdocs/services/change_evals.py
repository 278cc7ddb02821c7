"""Eval results attached to a change request (`POST .../changes/{id}/evals`): checked
(`agentdocs.core.evals`, and the secret and hidden-character checks of stored text),
stored whole and never changed, with a history row naming who attached them."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction

from agentdocs.core import evals as eval_rules
from agentdocs.core.errors import ChangeClosed
from agentdocs.core.stored_text import refuse_hidden_or_secret
from agentdocs.models import ChangeEvals, ChangeRequest, ChangeType
from agentdocs.models.history import mark_change
from agentdocs.services import changes as change_service


def change_evals_attach(
    *, change: ChangeRequest, user: User, harness: object, cases: object
) -> ChangeEvals:
    """Attach ``harness``'s results of ``cases`` to the open or approved ``change``."""
    harness = eval_rules.parse_harness(harness)
    checked = eval_rules.parse_cases(cases)
    refuse_hidden_or_secret(harness, field="harness", what="`harness`")
    names = "\n".join(case["name"] for case in checked)
    refuse_hidden_or_secret(names, field="cases", what="A case's name")
    with transaction.atomic():
        change = (
            ChangeRequest.objects.select_for_update(of=("self",))
            .select_related("tenant", "project", "proposer")
            .get(pk=change.pk)
        )
        if not change.is_live:
            raise ChangeClosed(
                f"Change #{change.pk} is {change.state}; its evals no longer change.",
                field=None,
                state=change.state,
            )
        evals = ChangeEvals(
            change_request=change, harness=harness, cases=checked, submitted_by=user
        )
        summary = eval_rules.summarize(checked)
        reason = (
            f"evals by {harness}: {summary['cases']} cases, base {summary['base']:g}, "
            f"proposed {summary['proposed']:g}"
        )
        mark_change(evals, user=user, reason=reason, change_type=ChangeType.CREATED)
        evals.save()
        # The `change.*` events' data is made in one place, the change requests' service.
        change_service._emit(
            change,
            action="evals_attached",
            actor=user,
            reason=reason,
            evals={"id": evals.pk, "harness": harness, **summary},
        )
    return evals
