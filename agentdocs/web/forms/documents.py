"""The document pages' forms: create, edit, live preview, delete, lock (a label's are
`forms.labels`)."""

from __future__ import annotations

from django import forms

from agentdocs.web.forms.fields import (
    AcknowledgeHiddenField,
    AcknowledgeSecretField,
    BodyField,
    ReasonField,
    version_field,
)


class DocumentCreateForm(forms.Form):
    path = forms.CharField(
        max_length=255,
        help_text="A relative path such as agent.md, notes/team.md or .AGENTS/overview.md.",
    )
    body = BodyField()
    reason = ReasonField()
    acknowledge_secret = AcknowledgeSecretField()
    acknowledge_hidden = AcknowledgeHiddenField()


class DocumentEditForm(forms.Form):
    body = BodyField()
    reason = ReasonField()
    acknowledge_secret = AcknowledgeSecretField()
    acknowledge_hidden = AcknowledgeHiddenField()
    base_version = version_field(widget=forms.HiddenInput)
    # A protected document (`review.required`): a tenant admin saves without review.
    bypass_review = forms.BooleanField(required=False)


class MarkdownPreviewForm(forms.Form):
    body = BodyField()


class DeleteForm(forms.Form):
    base_version = version_field(widget=forms.HiddenInput)
    reason = ReasonField()


class LockForm(forms.Form):
    action = forms.ChoiceField(choices=[("lock", "Lock"), ("unlock", "Unlock")])
    force = forms.BooleanField(required=False)
