"""The outcomes page's question: the API's `metric`, `by`, `document`, `baseline`,
`lower_is_better`, `since` and `until`."""

from __future__ import annotations

from typing import Any

from django import forms

from agentdocs.core.errors import InvalidInput
from agentdocs.core.outcomes import NAME_LENGTH, validate_outcome_name
from agentdocs.web.forms.fields import MomentField


class OutcomeCompareForm(forms.Form):
    metric = forms.CharField(
        max_length=NAME_LENGTH, initial="task_success", help_text="An outcome's name"
    )
    by = forms.ChoiceField(
        choices=[("label", "label"), ("version", "version"), ("recipe", "recipe")],
        initial="label",
        help_text="What groups the runs",
    )
    document = forms.CharField(
        required=False, max_length=500, help_text="With version: the document, as agent.md"
    )
    baseline = forms.CharField(
        required=False, max_length=200, help_text="Compared with (default: production)"
    )
    lower_is_better = forms.BooleanField(required=False, help_text="As for cost_usd")
    since = MomentField(required=False, help_text="Runs bound from then")
    until = MomentField(required=False, help_text="Runs bound before then")

    def clean_metric(self) -> str:
        try:
            return validate_outcome_name(self.cleaned_data["metric"], field="metric")
        except InvalidInput as refused:
            raise forms.ValidationError(refused.detail) from None

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("by") == "version" and not data.get("document"):
            self.add_error("document", "`document` is required to group by version.")
        since, until = data.get("since"), data.get("until")
        if since and until and since >= until:
            self.add_error("until", "`until` must be after `since`.")
        return data
