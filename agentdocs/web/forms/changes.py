"""The change request pages' forms: proposing a change, reviewing it, commenting."""

from __future__ import annotations

from django import forms

from agentdocs.core.numbers import MAX_VERSION
from agentdocs.web.forms.fields import (
    AcknowledgeHiddenField,
    BodyField,
    ReasonField,
)


class ChangeProposeForm(forms.Form):
    path = forms.CharField(max_length=255, widget=forms.HiddenInput)
    base_version = forms.IntegerField(min_value=1, max_value=MAX_VERSION, widget=forms.HiddenInput)
    body = BodyField()
    reason = ReasonField(help_text="Say why, in a sentence: reviewers read it first.")
    acknowledge_hidden = AcknowledgeHiddenField()


class ChangeReviewForm(forms.Form):
    decision = forms.ChoiceField(choices=[("approve", "Approve"), ("reject", "Reject")])
    comment = forms.CharField(
        max_length=10_000, required=False, widget=forms.Textarea(attrs={"rows": 3})
    )


class ChangeCommentForm(forms.Form):
    body = forms.CharField(max_length=10_000, widget=forms.Textarea(attrs={"rows": 3}))
