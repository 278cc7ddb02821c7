"""Reporting run outcomes (`outcome_report`): each a new row and its history row in the
tenant's hash chain; a correction supersedes the current outcome of its name, which
stays."""

from __future__ import annotations

from collections.abc import Sequence

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from agentdocs.core.errors import AlreadyExists, InvalidInput
from agentdocs.core.outcomes import OutcomeReport
from agentdocs.models import ApiToken, BindingRecord, ChangeType, Outcome, mark_change
from agentdocs.services import events


def _kind(is_bool: bool) -> str:
    return "a yes/no (true or false)" if is_bool else "a number"


def _checked(
    reports: Sequence[OutcomeReport], *, binding: BindingRecord
) -> dict[str, Outcome | None]:
    """Each report's name with the run's current outcome of it (None: the first report),
    once every report is one the run may take; the refusal names the report's field."""
    names = [report.name for report in reports]
    seen: set[str] = set()
    for report in reports:
        if report.name in seen:
            raise InvalidInput(
                f"`{report.name}` is reported twice in this request: report it once.",
                field=report.at("name"),
            )
        seen.add(report.name)
    existing = list(
        Outcome.objects.filter(project_id=binding.project_id, name__in=names)
        .values_list("name", "is_bool")
        .distinct()
    )
    kinds = dict(existing)
    current = {
        outcome.name: outcome
        for outcome in Outcome.objects.filter(
            project_id=binding.project_id,
            process=binding.process,
            name__in=names,
            superseded_by__isnull=True,
        )
    }
    for report in reports:
        kind = kinds.get(report.name)
        if kind is not None and kind != report.value.is_bool:
            raise InvalidInput(
                f"`{report.name}` is {_kind(kind)} in this project; this value is "
                f"{_kind(report.value.is_bool)}.",
                field=report.at("value"),
            )
        found = current.get(report.name)
        if report.supersedes is None and found is not None:
            raise AlreadyExists(
                f"This run already has `{report.name}` (outcome {found.pk}); to correct it, "
                f"report it again with `supersedes: {found.pk}`.",
                field=report.at("supersedes"),
            )
        if report.supersedes is not None and (found is None or found.pk != report.supersedes):
            if found is None:
                raise InvalidInput(
                    f"This run has no outcome {report.supersedes} of `{report.name}` to supersede.",
                    field=report.at("supersedes"),
                )
            raise AlreadyExists(
                f"Outcome {report.supersedes} is not the current `{report.name}` of this "
                f"run: outcome {found.pk} is; supersede that one.",
                field=report.at("supersedes"),
            )
    return {report.name: current.get(report.name) for report in reports}


def outcome_report(
    *,
    binding: BindingRecord,
    user: User,
    token: ApiToken | None,
    reports: Sequence[OutcomeReport],
) -> list[Outcome]:
    """Record ``reports`` as outcomes of the run ``binding`` is a record of, all or
    none, reported by ``user`` (with ``token``, when one was used); the outcomes made."""
    now = timezone.now()
    made: list[Outcome] = []
    try:
        with transaction.atomic():
            current = _checked(reports, binding=binding)
            for report in reports:
                outcome = Outcome(
                    tenant_id=binding.tenant_id,
                    project_id=binding.project_id,
                    binding=binding,
                    process=binding.process,
                    name=report.name,
                    value=report.value.value,
                    is_bool=report.value.is_bool,
                    unit=report.unit,
                    comment=report.comment,
                    supersedes=current[report.name],
                    reported_by=user,
                    reported_with=token,
                    reported_at=now,
                )
                reason = (
                    f"Reported {report.name} of run {binding.process}."
                    if report.supersedes is None
                    else f"Corrected {report.name} of run {binding.process} "
                    f"(supersedes outcome {report.supersedes})."
                )
                mark_change(outcome, user=user, reason=reason, change_type=ChangeType.CREATED)
                outcome.save()
                made.append(outcome)
            _reported(binding, made, user=user)
    except IntegrityError:
        # Another report of the same name for the run came first (the constraints).
        raise AlreadyExists(
            "Another report of one of these outcomes for this run came first; read the "
            "run's outcomes and supersede the current one.",
            field=reports[0].at("supersedes") if reports else None,
        ) from None
    return made


def _reported(binding: BindingRecord, made: Sequence[Outcome], *, user: User) -> None:
    """The `outcome.reported` event of one report: the activity feed's and webhooks'."""
    tenant, project = binding.tenant, binding.project
    data: events.OutcomeEventData = {
        "binding": binding.pk,
        "process": binding.process,
        "outcomes": [
            {
                "id": outcome.pk,
                "name": outcome.name,
                "value": bool(outcome.value) if outcome.is_bool else outcome.value,
                "unit": outcome.unit,
                "supersedes": outcome.supersedes_id,
            }
            for outcome in made
        ],
        "actor": user.get_username(),
    }
    names = ", ".join(outcome.name for outcome in made)
    events.emit(
        type=events.OUTCOME_REPORTED,
        tenant=tenant,
        project=project,
        actor=user,
        target=binding.process,
        reason=f"{names} of run {binding.process}",
        data=data,
    )
