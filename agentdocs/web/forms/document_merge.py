"""The three-way page's form: a choice (or a text of one's own) per conflict of a
stale save, with the save's text, reason and the two versions it met."""

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

# Three-way merge: resolving the conflicts of a stale save.
RESOLUTION_CHOICES = [
    ("theirs", "Keep their change"),
    ("yours", "Keep your change"),
    ("both", "Keep both: theirs, then yours"),
    ("edit", "Write it myself:"),
]


class MergeResolutionForm(forms.Form):
    """A stale save whose change overlaps the current version: the user's whole text
    (`body`, based on `base_version`), the version it conflicts with (`theirs_version`)
    and, per conflict, a choice (`choice_<i>`) and the text for "edit" (`text_<i>`)."""

    body = BodyField(widget=forms.Textarea(attrs={"readonly": True, "rows": 12}))
    base_version = version_field(widget=forms.HiddenInput)
    theirs_version = version_field(widget=forms.HiddenInput)
    reason = ReasonField()
    acknowledge_secret = AcknowledgeSecretField()
    acknowledge_hidden = AcknowledgeHiddenField()
    discard_theirs = forms.BooleanField(required=False)

    def __init__(self, *args: Any, conflicts: int = 0, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.conflict_count = conflicts
        for index in range(conflicts):
            self.fields[f"choice_{index}"] = forms.ChoiceField(
                choices=RESOLUTION_CHOICES,
                widget=forms.RadioSelect,
                error_messages={"required": f"Choose how to resolve conflict {index + 1}."},
            )
            self.fields[f"text_{index}"] = BodyField(widget=forms.Textarea(attrs={"rows": 4}))

    def resolutions(self) -> list[str]:
        """Per conflict: "theirs", "yours", "both" or the replacement text, as
        `MergeResult.resolve` takes them (a text always ends with a line end, so it is
        never mistaken for one of the words)."""
        chosen = []
        for index in range(self.conflict_count):
            choice = self.cleaned_data[f"choice_{index}"]
            if choice == "edit":
                text = self.cleaned_data[f"text_{index}"]
                choice = text if text.endswith("\n") or not text else text + "\n"
            chosen.append(choice)
        return chosen
