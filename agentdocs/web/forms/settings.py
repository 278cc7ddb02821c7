"""The settings pages' forms: set a `memory.*` setting, delete one."""

from __future__ import annotations

from django import forms

from agentdocs.web.forms.fields import (
    ReasonField,
)


class SettingForm(forms.Form):
    key = forms.CharField(
        max_length=128,
        help_text="memory.… (e.g. memory.language), or security.secretOverride on the tenant",
    )
    value = forms.CharField(max_length=4096, required=False, strip=False)
    enforced = forms.BooleanField(
        required=False,
        help_text="An enforced tenant setting cannot be overridden by a project.",
    )
    reason = ReasonField()


class SettingDeleteForm(forms.Form):
    key = forms.CharField(max_length=128)
