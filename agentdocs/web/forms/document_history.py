"""The revert page's form (a document's history pages)."""

from __future__ import annotations

from django import forms

from agentdocs.web.forms.fields import (
    AcknowledgeHiddenField,
    AcknowledgeSecretField,
    ReasonField,
)


class RevertForm(forms.Form):
    version = forms.IntegerField(min_value=1, widget=forms.HiddenInput)
    base_version = forms.IntegerField(min_value=1, widget=forms.HiddenInput)
    reason = ReasonField()
    acknowledge_secret = AcknowledgeSecretField()
    acknowledge_hidden = AcknowledgeHiddenField()
