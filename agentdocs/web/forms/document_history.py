"""The revert page's form (a document's history pages)."""

from __future__ import annotations

from django import forms

from agentdocs.web.forms.fields import (
    AcknowledgeHiddenField,
    AcknowledgeSecretField,
    ReasonField,
    version_field,
)


class RevertForm(forms.Form):
    version = version_field(widget=forms.HiddenInput)
    base_version = version_field(widget=forms.HiddenInput)
    reason = ReasonField()
    acknowledge_secret = AcknowledgeSecretField()
    acknowledge_hidden = AcknowledgeHiddenField()
