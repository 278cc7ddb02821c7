"""The document pages' forms: create, edit, live preview, delete, lock, move or remove a
label."""

from __future__ import annotations

from typing import Any

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


class LabelMoveForm(forms.Form):
    """Move a label of the document to a version (`services.label_review.label_request`)."""

    label = forms.CharField(max_length=64, help_text="A slug: production, staging, canary, ...")
    version = version_field(label="To version")
    reason = ReasonField()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Its ids apart from the other forms of the document page.
        kwargs.setdefault("auto_id", "id_label_form_%s")
        super().__init__(*args, **kwargs)


class LabelRemoveForm(forms.Form):
    """Remove a label of the document (`services.label_review.label_remove_request`)."""

    label = forms.CharField(max_length=64, help_text="The label to remove; readers get latest.")
    reason = ReasonField()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("auto_id", "id_label_remove_form_%s")
        super().__init__(*args, **kwargs)
