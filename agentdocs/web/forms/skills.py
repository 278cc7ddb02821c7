"""The skill pages' forms: `SKILL.md`'s editor (a skill's other files are pushed with
`agentdocs skills push` or the API)."""

from __future__ import annotations

from django import forms

from agentdocs.web.forms.fields import BodyField, ReasonField, version_field


class SkillEditForm(forms.Form):
    body = BodyField()
    reason = ReasonField()
    base_version = version_field(widget=forms.HiddenInput)
    # A protected skill (`review.required`): "Propose a change" opens a change request
    # with the files; a tenant admin's "Save without review" writes them (with a reason).
    propose = forms.BooleanField(required=False)
    bypass_review = forms.BooleanField(required=False)
