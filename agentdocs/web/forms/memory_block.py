"""The Memory Block preview page's form."""

from __future__ import annotations

from django import forms

from agentdocs.web.forms.fields import (
    BodyField,
    normalise_newlines,
)


class MemoryBlockPreviewForm(forms.Form):
    recipe = forms.CharField(required=False, max_length=64)
    profile = forms.CharField(required=False, max_length=64)
    # The label each document is read by (the API's `label`); `validate_label_name` judges
    # it, so that the page refuses what the API refuses, in the same words.
    label = forms.CharField(required=False)
    paths = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="The files a task touches, one per line: scoped .AGENTS/ documents whose "
        "globs match one are included.",
    )

    # The client's own agent file (the render API's `client_document`), to preview the
    # client layer of a profile that uses it; `validate_client_document` judges it.
    client_document_name = forms.CharField(required=False, strip=False, initial="CLAUDE.md")
    client_document_body = BodyField()

    def clean_paths(self) -> list[str]:
        """One path a line, blank lines left out; `validate_paths` judges them."""
        text = normalise_newlines(self.cleaned_data.get("paths") or "")
        return [line.strip() for line in text.split("\n") if line.strip()]
