"""The label forms of the document page: move a label to a version, remove one."""

from __future__ import annotations

from typing import Any

from django import forms

from agentdocs.web.forms.fields import ReasonField, version_field


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
