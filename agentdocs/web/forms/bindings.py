"""The binding record pages' forms: binding a run, filtering and comparing records,
and the runs timeline's span and window."""

from __future__ import annotations

from typing import Any

from django import forms

from agentdocs.core.hook_delivery import MAX_SESSION_ID_LENGTH
from agentdocs.core.numbers import MAX_VERSION
from agentdocs.selectors.bindings import TIMELINE_DEFAULT_RUNS, TIMELINE_MAX_RUNS
from agentdocs.web.forms.fields import (
    MomentField,
    version_field,
)


class BindForm(forms.Form):
    process = forms.CharField(
        max_length=200, help_text="The id of the run being bound, as the agent knows it."
    )
    with_memory_block = forms.BooleanField(
        required=False,
        initial=True,
        help_text="Also bind the Memory Block this run receives (its layers and text hash).",
    )
    recipe = forms.CharField(required=False, max_length=64)
    profile = forms.CharField(required=False, max_length=64)


class BindingFilterForm(forms.Form):
    process = forms.CharField(required=False, max_length=200)
    problems = forms.ChoiceField(
        required=False,
        choices=[("", "All records"), ("with", "With problems"), ("without", "Without problems")],
    )
    page = forms.IntegerField(required=False, min_value=1, max_value=MAX_VERSION)


class BindingCompareForm(forms.Form):
    a = version_field()
    b = version_field()


class RunsTimelineForm(forms.Form):
    """The runs page's span and window: the API's `since`, `until` and `limit`; and one
    agent session's deliveries (the API's `?session=`)."""

    since = MomentField(required=False, help_text="ISO 8601 or a date: runs from then")
    until = MomentField(required=False, help_text="ISO 8601 or a date: runs before then")
    limit = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=TIMELINE_MAX_RUNS,
        help_text=f"The newest runs read (default {TIMELINE_DEFAULT_RUNS:,})",
    )
    session = forms.CharField(
        required=False,
        max_length=MAX_SESSION_ID_LENGTH,
        help_text="An agent session's id: its deliveries as one timeline",
    )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        since, until = data.get("since"), data.get("until")
        if since and until and since >= until:
            self.add_error("until", "`until` must be after `since`.")
        return data
