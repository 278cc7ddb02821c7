"""The skill pages' forms: `SKILL.md`'s editor (a skill's other files are pushed with
`agentdocs skills push` or the API)."""

from __future__ import annotations

from django import forms

from agentdocs.web.forms.fields import BodyField, ReasonField, version_field


class SkillEditForm(forms.Form):
    body = BodyField()
    reason = ReasonField()
    base_version = version_field(widget=forms.HiddenInput)
